// SSE test support: a byte-exact HTTP/1.1 client over plain sockets for the Arc SSE hub. It
// sends requests exactly as given (optionally from another loopback source address), decodes
// chunked transfer coding itself, and hands out stream events one at a time with deadlines
// (poll(2), never sleeps), so the tests can assert the exact §7 framing and the end of a stream.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>

#include "test_support.hpp"

namespace weir::test {

using header_list = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::string_view sse_hub_target = "/.cratis/queries/sse";

/// True when a socket bound to `address` (a loopback alias such as 127.0.0.2) can connect to a
/// listener on 127.0.0.1, so tests can play a second peer address.
bool loopback_alias_usable(const std::string& address);

/// A plain TCP connection with deadline-bounded reads. Reads never consume more than asked for.
class raw_connection {
 public:
  /// Connects to 127.0.0.1:`port`, first binding the local end to `local_address`.
  /// `receive_buffer` > 0 caps the kernel's receive buffer (SO_RCVBUF, set before connecting;
  /// it also stops autotuning), so a peer that writes while this end reads nothing fills its
  /// own send buffer soon.
  raw_connection(std::uint16_t port, const std::string& local_address = "127.0.0.1",
                 int receive_buffer = 0);
  ~raw_connection();
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  bool connected() const { return fd_ >= 0; }
  void send_all(const std::string& bytes);
  /// Appends whatever arrives before the deadline to `pending()`. False on timeout; EOF and
  /// errors set eof() and return false.
  bool fill(std::chrono::steady_clock::time_point deadline);
  /// Buffered bytes not yet consumed by the caller.
  std::string& pending() { return pending_; }
  bool eof() const { return eof_; }
  /// Half-closes: the peer reads EOF, and this end can still read its answers.
  void shutdown_send();
  void close();

 private:
  int fd_ = -1;
  bool eof_ = false;
  std::string pending_;
};

/// Serializes a request: request line, `Host: 127.0.0.1:<port>` unless `headers` has a Host,
/// `headers` in order, Content-Length when `body` is non-empty (or `force_length`), and `body`.
/// Nothing else is added — in particular no Content-Type.
std::string build_request(std::uint16_t port, const std::string& method, const std::string& target,
                          const header_list& headers, const std::string& body,
                          bool force_length = false);

/// One parsed response head plus body.
struct raw_response {
  unsigned status = 0;
  std::string head;                            // the raw status line and headers
  std::map<std::string, std::string> headers;  // lower-case names
  std::vector<std::string> header_names;       // in order, as sent (to check duplicates)
  std::string body;                            // decoded (chunked or Content-Length)
  bool ok = false;                             // a complete response was read
  /// The header's value, "" when absent.
  std::string header(const std::string& lower_name) const;
  bool has(const std::string& lower_name) const { return headers.count(lower_name) != 0; }
};

/// Reads one response from `c` (HEAD: head only). Fails the test on timeout.
raw_response read_response(raw_connection& c, bool head_request,
                           std::chrono::milliseconds timeout = 5s);

/// One request on a fresh connection, sent exactly as given (see build_request), from
/// `local_address`.
raw_response http_exact(std::uint16_t port, const std::string& method, const std::string& target,
                        const std::string& body = "", const header_list& headers = {},
                        const std::string& local_address = "127.0.0.1");

/// `POST /.cratis/queries/sse/<action>` with `body`; `Content-Type: application/json` is added
/// unless `headers` names a Content-Type (pass {"Content-Type", ""} to send none at all).
raw_response sse_control_post(std::uint16_t port, const std::string& action,
                              const std::string& body, const header_list& headers = {},
                              const std::string& local_address = "127.0.0.1");

/// The JSON body of a control: {"connectionId","queryId","revision"?,"request"?}.
/// `revision` < 0 omits it; an empty `request` omits it.
std::string control_body(const std::string& connection_id, const std::string& query_id,
                         long long revision, const boost::json::object& request = {});

/// {"queryName":…,"arguments":…,"transferMode"?:…}.
boost::json::object subscription_request(const std::string& query_name,
                                         const boost::json::object& arguments,
                                         const std::string& transfer_mode = "");

/// A client on the SSE hub stream (or any SSE GET).
class sse_client {
 public:
  struct options {
    header_list headers;
    std::string local_address = "127.0.0.1";
    std::string method = "GET";
    std::string target = std::string{sse_hub_target};
    std::string body;  ///< sent with Content-Length when not empty
  };

  /// Connects, sends the request and reads the response head. For a non-200 answer the body
  /// is read too (see body()).
  explicit sse_client(std::uint16_t port);
  sse_client(std::uint16_t port, options opts);

  const raw_response& response() const { return res_; }
  unsigned status() const { return res_.status; }
  std::string header(const std::string& lower_name) const { return res_.header(lower_name); }

  /// The next SSE event's text without its terminating blank line (e.g. `data: {...}`);
  /// nullopt on timeout or when the stream ended. Malformed chunked coding fails the test.
  std::optional<std::string> read_event(std::chrono::milliseconds timeout = 5s);
  /// The next event, which must be exactly `data: <single-line JSON object>` (§7); parsed.
  /// Fails the test on timeout or any other shape.
  boost::json::object read_json(std::chrono::milliseconds timeout = 5s);
  /// Reads events until one satisfies `pred`; returns every event read, the match last.
  std::vector<boost::json::object> read_through(
      const std::function<bool(const boost::json::object&)>& pred,
      std::chrono::milliseconds timeout = 5s);
  /// True when no event arrives within `quiet` (the stream stays usable).
  bool silent_for(std::chrono::milliseconds quiet);
  /// Reads Connected (must be the first event) and returns its connection id.
  std::string expect_connected();

  /// Waits for the end of the stream: the last chunk (`0\r\n\r\n`) or EOF. Fails the test if
  /// an event arrives first. True when it ended within `timeout`.
  bool wait_end(std::chrono::milliseconds timeout);
  /// The server sent the chunked terminator.
  bool saw_last_chunk() const { return last_chunk_; }
  /// The stream is over (terminator or EOF).
  bool ended() const { return last_chunk_ || conn_.eof(); }

  /// Closes our end (the server notices the stream went away).
  void close() { conn_.close(); }

 private:
  /// Moves complete chunks from the socket buffer into decoded_; false on a coding error.
  bool decode_chunks();

  raw_connection conn_;
  raw_response res_;
  std::string decoded_;  // decoded body bytes not yet returned as events
  bool last_chunk_ = false;
  bool chunked_ = false;
};

/// True when `s` is a textual UUID (8-4-4-4-12 hex).
bool looks_like_uuid(const std::string& s);

}  // namespace weir::test

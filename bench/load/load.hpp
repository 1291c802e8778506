// weir_load — the benchmark load generator: subscribers over the Arc WebSocket or SSE hub (Weir)
// or nchan's WebSocket/EventSource, and HTTP publishers, all on one event-driven thread (one
// io_context, no thread per connection), so pinned to its own core it measures the server, not
// itself. Shared types of its parts.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <netinet/in.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "histogram.hpp"
#include "wire.hpp"

namespace weir::bench {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// ceiling: bench/ceiling.cpp, the physical reference; it speaks nchan's URLs.
enum class server_kind { weir, nchan, ceiling };
/// windowed: Weir's windowed subscribe stream (POST /v1/spaces/bench/query/subscribe, the whole
/// dataset of the key's object); each event of a `changes` frame counts as one frame.
enum class transport { ws, sse, windowed };

struct target {
  server_kind server = server_kind::weir;
  transport via = transport::ws;
  tcp::endpoint endpoint;
  /// Source addresses to bind (127.0.0.1, 127.0.0.2, …): each gives its own ~28k ephemeral ports.
  std::vector<asio::ip::address> sources;
  int streams_per_key = 1;  ///< records per key, each written by one publisher in order
};

/// What every subscriber adds to; single-threaded.
struct run_stats {
  std::uint64_t frames = 0;  ///< data frames (not snapshots, pings, Connected)
  std::uint64_t bytes = 0;
  std::uint64_t out_of_order = 0;  ///< a sequence number at or below one already seen
  std::uint64_t gaps = 0;          ///< sequence numbers skipped (lost frames)
  std::uint64_t ready = 0;         ///< subscribers that have their snapshot (nchan: upgraded)
  std::uint64_t failed = 0;        ///< subscribers that could not connect or were closed
  std::uint64_t errors = 0;        ///< protocol Error frames, non-2xx control answers
  histogram latency;               ///< write (publisher send) → receipt
  histogram ready_time;            ///< subscriber start → ready
  std::int64_t epoch_ns = 0;       ///< ready times are measured from here
  std::int64_t first_frame_ns = 0, last_frame_ns = 0;  ///< receipt of the first and last frame
};

/// Binds `sock` to the source address only: the port is chosen by connect(), which needs the
/// whole 4-tuple to be unique (so one address serves ~28k connections per server port) and
/// reuses TIME_WAIT ports on loopback. bind() with port 0 would pick the port itself, scanning
/// every socket bound to it, and gets slower with every connection and TIME_WAIT left behind.
inline void bind_source(tcp::socket& sock, const asio::ip::address& source,
                        boost::system::error_code& ec) {
  sock.set_option(asio::detail::socket_option::boolean<IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT>{true},
                  ec);
  if (!ec)
    sock.bind(tcp::endpoint{source, 0}, ec);
}

/// The JSON text of one write: {"s":stream,"seq":n,"ts":mono_ns,"pad":"…"} of about `size` bytes.
std::string make_record(int stream, std::uint64_t seq, std::int64_t ts, std::size_t size);

/// Keys are named k0, k1, … on both servers (Weir: the object id; nchan: the channel id).
inline std::string key_name(int k) {
  return "k" + std::to_string(k);
}

/// One subscriber connection. Callbacks `on_ready` / `on_failed` run once.
class subscriber : public std::enable_shared_from_this<subscriber> {
 public:
  subscriber(asio::io_context& ioc, const target& t, run_stats& st, int key,
             asio::ip::address source, std::function<void(const std::string&)> control);
  void start(std::function<void(bool ok)> on_settled);
  /// Weir SSE: the control POST for this subscriber's connection id failed.
  void control_failed();
  void stop();

 private:
  void on_connected();
  void wait_readable();
  void on_readable();
  void process();
  void on_message(std::string_view text);
  void on_data(std::string_view text);
  void send_ws(std::string frame);
  void settle(bool ok);

  tcp::socket sock_;
  const target& t_;
  run_stats& st_;
  int key_;
  asio::ip::address source_;
  std::function<void(const std::string&)> control_;
  std::function<void(bool)> on_settled_;
  enum class phase { head, body } phase_ = phase::head;
  bool chunked_ = false;
  bool ready_ = false;
  bool settled_ = false;
  bool closed_ = false;
  std::string pend_;  ///< raw bytes not parsed yet (usually empty between reads)
  std::string sse_;   ///< decoded SSE body bytes not parsed yet
  std::string frag_;  ///< a fragmented WebSocket message being reassembled
  chunked_decoder chunks_;
  std::vector<std::uint64_t> last_seq_;
  std::int64_t started_ns_ = 0;
};

/// A keep-alive HTTP/1.1 connection with pipelined requests, answered in order.
class http_pipe : public std::enable_shared_from_this<http_pipe> {
 public:
  http_pipe(asio::io_context& ioc, tcp::endpoint ep, asio::ip::address source);
  void connect(std::function<void(bool)> done);
  /// Queues a request; `build` makes its bytes when it is actually written (so timestamps in it
  /// are the send time), `done` gets the response status (0 when the connection failed).
  void send(std::function<std::string()> build, std::function<void(unsigned)> done);
  void close() {
    boost::system::error_code ec;
    sock_.close(ec);
  }

 private:
  void flush();
  void read();
  void fail();

  tcp::socket sock_;
  tcp::endpoint ep_;
  asio::ip::address source_;
  std::vector<std::pair<std::function<std::string()>, std::function<void(unsigned)>>> queued_;
  std::vector<std::function<void(unsigned)>> waiting_;  // written, answer pending (in order)
  std::size_t waiting_head_ = 0;
  std::string out_;
  bool writing_ = false;
  bool failed_ = false;
  std::string in_;
  std::vector<char> buf_ = std::vector<char>(65536);
  chunked_decoder chunks_;
  std::string chunk_out_;
  std::size_t body_left_ = 0;
  bool in_body_ = false;
  unsigned status_ = 0;

 public:
  /// Requests queued or written and not answered yet.
  std::size_t pending() const { return queued_.size() + (waiting_.size() - waiting_head_); }
};

}  // namespace weir::bench

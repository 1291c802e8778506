// weir::gateway::windowed_stream_session — one windowed subscription stream
// (POST …/query/subscribe, windowed-subscribe §4): answers the request with the error envelope
// if the subscription cannot open, else with `200 text/event-stream`, `ready` and `snapshot`,
// then `changes` frames that carry every event held at the time of the write (the mailbox is
// drained into one frame), `: keepalive` comments in silence, and `closed` last. Internal to
// gateway/.
//
// Deadlines: a subscription that has not opened within open_timeout is refused with 503
// `server.unavailable`; once `closed` is decided, the stream has `windowed.closeDeadlineMs` to
// get it to the client before the socket is closed (a client that stopped reading cannot hold a
// draining node), and a client whose kernel takes no byte of a write for http.sendStallTimeoutMs is
// dropped (watched_write), releasing its subscription. HTTP/1.1 streams are chunked; HTTP/1.0
// ones end with the connection.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/windowed_query.hpp"
#include "actors/windowed_sink.hpp"
#include "gateway/beast.hpp"
#include "gateway/credential_expiry.hpp"
#include "gateway/delivery_lane.hpp"
#include "gateway/keep_alive_timer.hpp"
#include "gateway/server_context.hpp"

namespace weir::gateway {
class watched_write;
}

namespace weir::gateway {

class windowed_stream_session : public actors::windowed_sink,
                                public closable,
                                public lane_member,
                                public std::enable_shared_from_this<windowed_stream_session> {
 public:
  static constexpr std::chrono::seconds open_timeout{30};

  windowed_stream_session(beast::tcp_stream&& stream, server_context& ctx, unsigned http_version,
                          std::string correlation_id,
                          std::shared_ptr<const core::windowed_request> req, std::string caller,
                          std::optional<std::int64_t> expires_at = std::nullopt);
  ~windowed_stream_session() override;

  /// Opens the subscription; the answer follows once it is registered (or refused).
  void run();

  // windowed_sink (any thread)
  void opened(std::shared_ptr<const std::string> snapshot) override;
  void event(std::shared_ptr<const std::string> ev) override;
  void closed(std::string_view reason) override;
  void refused(core::error e) override;
  // lane_member (its I/O thread's delivery_lane): events the query sent, taken in one go per
  // wake-up of the thread, then one write
  void take_frames() override;
  void flush() override;
  // closable: the node drains (Decision 5: `closed{server_shutdown}`)
  void shut_down() override { closed("server_shutdown"); }
  // What waits here in all: taken events not yet written, and the inbox the lane has not taken.
  std::size_t queued_bytes() const override {
    return event_bytes_.load(std::memory_order_relaxed) +
           inbox_bytes_seen_.load(std::memory_order_relaxed);
  }
  std::string_view client() const override { return caller_; }
  std::string_view correlation() const override { return correlation_id_; }

 private:
  void on_opened(std::shared_ptr<const std::string> snapshot);
  void take_events();
  void close_inbox();
  void on_closed(std::string reason);
  void on_refused(core::error e);
  void do_read();
  void do_write();
  void on_write(beast::error_code ec, bool last);
  void finish();
  void gone();
  // keep_alive_timer's questions and its action.
  friend class keep_alive_timer;
  bool keep_alive_closed() const { return closing_ || closed_; }
  bool keep_alive_writing() const { return writing_; }
  void keep_alive_ping();

  beast::tcp_stream stream_;
  server_context& ctx_;
  open_connection counted_;  // in /metrics' weir_connections while this session lives
  unsigned version_;
  std::string correlation_id_;
  std::shared_ptr<const core::windowed_request> req_;
  std::string caller_;
  std::unique_ptr<actors::windowed_query> query_;

  bool chunked_ = true;          // HTTP/1.1: chunked; HTTP/1.0: the body ends with the socket
  bool started_ = false;         // the 200 and ready/snapshot are queued
  bool header_written_ = false;  // the 200's header is out: chunks may follow
  bool writing_ = false;
  bool closing_ = false;  // `closed` decided: written after what is queued, then the end
  bool closed_ = false;   // the socket is done
  std::string head_;      // `ready` and `snapshot`, before the first write
  std::shared_ptr<const std::string> snapshot_;
  std::deque<std::shared_ptr<const std::string>> events_;  // not yet handed to a write

  // The hand-off from the query's thread: events wait here until the I/O thread's lane takes
  // them (one wake-up per burst for all the thread's streams, not one handler per event). The
  // mailbox bound applies here too: a stream whose thread cannot take its events in time is as
  // far behind as one whose socket is full.
  delivery_lane* lane_ = delivery_lane::current();  // this I/O thread's (null: post instead)
  std::mutex inbox_mu_;
  std::vector<std::shared_ptr<const std::string>> inbox_;  // guarded by inbox_mu_
  std::size_t inbox_bytes_ = 0;                            // guarded by inbox_mu_
  std::atomic<std::size_t> inbox_bytes_seen_{0};  // inbox_bytes_, for slowest() without the lock
  bool inbox_scheduled_ = false;  // guarded by inbox_mu_: a take is due on the I/O thread
  bool inbox_overflow_ = false;   // guarded by inbox_mu_: over the mailbox bound; take closes
  bool inbox_closed_ = false;     // guarded by inbox_mu_: the stream ends; events are dropped
  std::atomic<std::size_t> event_bytes_{0};  // written on its I/O thread; read by slowest()
  std::string close_frame_;                  // set once `closed` is decided
  bool keepalive_due_ = false;

  // The write in flight: its buffers and the events they reference.
  std::vector<std::shared_ptr<const std::string>> in_flight_;
  std::vector<asio::const_buffer> buffers_;
  /// What the socket did not take at once (made on the first such write); drops a client that
  /// takes nothing for http.sendStallTimeoutMs.
  std::unique_ptr<watched_write> watched_;
  std::string chunk_line_;
  std::string scratch_;
  http::response<http::empty_body> res_;
  std::optional<http::response_serializer<http::empty_body>> serializer_;
  std::array<char, 512> read_buf_{};
  keep_alive_timer keep_alive_;
  asio::steady_timer deadline_;  // the opening deadline, then the close deadline
  /// When the credential the stream was opened with expires (seconds since the Unix epoch): the
  /// stream closes with `deauthorized` then (windowed-subscribe decision 5), whatever the
  /// space's rule.
  std::optional<std::int64_t> expires_at_;
  credential_expiry expiry_;
};

}  // namespace weir::gateway

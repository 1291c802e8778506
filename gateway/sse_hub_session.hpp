// weir::gateway::sse_hub_session — one client on the Arc SSE hub (GET /.cratis/queries/sse):
// the chunked event stream, its bounded outbound queue and keep-alive Pings. The protocol runs
// in the same state machine as the WebSocket hub's (actors::hub_connection); subscriptions
// arrive as control POSTs, routed here by connection id. Internal to gateway/.
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "actors/frame_sink.hpp"
#include "actors/hub_connection.hpp"
#include "gateway/beast.hpp"
#include "gateway/bounded_inbox.hpp"
#include "gateway/credential_expiry.hpp"
#include "gateway/delivery_lane.hpp"
#include "gateway/hub_outbound.hpp"
#include "gateway/keep_alive_timer.hpp"
#include "gateway/outbound_queue.hpp"
#include "gateway/server_context.hpp"
#include "gateway/watched_write.hpp"
#include "gateway/write_now.hpp"

namespace weir::gateway {

class sse_hub_session : public actors::frame_sink,
                        public closable,
                        public hub_outbound<sse_hub_session>,
                        public std::enable_shared_from_this<sse_hub_session> {
 public:
  sse_hub_session(beast::tcp_stream&& stream, server_context& ctx, std::string remote,
                  std::string correlation_id, unsigned http_version);
  /// A direct per-query SSE stream (arc-hub §10): bare QueryResult events, no hub protocol; or
  /// an AG-UI state stream (`direct.state`): STATE_SNAPSHOT then STATE_DELTA events, and a fresh
  /// STATE_SNAPSHOT instead of a close when the client lags.
  sse_hub_session(beast::tcp_stream&& stream, server_context& ctx, std::string remote,
                  unsigned http_version, direct_target direct);
  ~sse_hub_session() override;

  /// Who opened the stream (its ownership and caller budget); before run().
  void set_principal(std::shared_ptr<const core::principal> who) { who_ = std::move(who); }
  /// The client's User-Agent, for the health feed; before run().
  void set_user_agent(std::string ua) { user_agent_ = std::move(ua); }

  /// Admits the connection (budget), writes the stream headers and Connected.
  void run();

  // frame_sink (any thread)
  void send(actors::outbound_frame frame) override;
  void close(std::uint16_t code, std::string reason) override;
  // closable
  void shut_down() override { close(1001, "Server shutting down"); }
  std::size_t queued_bytes() const override { return queue_.bytes(); }
  std::string_view client() const override { return remote_; }
  std::string_view correlation() const override { return correlation_id_; }
  // lane_member (the I/O thread's delivery_lane; take_frames is hub_outbound's)
  void flush() override;

  /// The protocol side; null until admitted.
  actors::hub_connection* connection() { return conn_ ? &conn_ : nullptr; }
  const std::string& remote_address() const { return remote_; }

 private:
  /// close() that counts its bound in /metrics' weir_closes_total once the close is decided
  /// (the first close wins; later ones, and frames still being drained, count nothing).
  void close_at(std::optional<bound_close> bound, std::uint16_t code, std::string reason);
  void run_state();
  /// The client lagged (on its I/O thread): drop what is queued and ask for a fresh baseline.
  void lagged();
  void refuse_over_budget();
  /// Answers the stream GET with `status` and `body` (and `Retry-After: 1` when asked), then
  /// closes.
  void refuse(unsigned status, std::string body, bool retry_after = false);
  void write_stream_header();
  void on_header(beast::error_code ec, std::size_t n);
  void do_read();
  // hub_outbound's hooks
  friend class hub_outbound<sse_hub_session>;
  asio::any_io_executor executor() { return stream_.get_executor(); }
  tcp::socket& socket() { return stream_.socket(); }
  /// After a lag, frames older than the baseline on its way are dropped.
  bool admit(const actors::outbound_frame& f);
  /// The peer is gone (a write failed): the stream ends without a last chunk.
  void lost();
  void enqueue(actors::outbound_frame f);
  /// Starts one batch: true when it went out at once and more may wait.
  bool write_batch();
  /// A batch went out (or failed): true when the writing goes on.
  bool wrote(beast::error_code ec);
  void finish();
  void arm_keep_alive();
  /// The emission guard of a direct stream: when its credential expires it sends one
  /// isAuthorized:false QueryResult and ends (arc-hub §10).
  void end_unauthorized();
  /// A direct stream refused for its caller's credential: the stream head, one QueryResult with
  /// isAuthorized:false, then the end (arc-hub §10).
  void unauthorized_stream();
  /// An agent run's end after query.agentRunMaxMs: RUN_FINISHED after what is queued, then the
  /// stream ends.
  void end_run();
  /// Stops the credential-expiry and run timers (their handlers hold the session).
  void cancel_timers();
  // keep_alive_timer's questions (§6); its action, the Ping (on SSE an ordinary data event
  // carrying the JSON Ping), is hub_outbound's keep_alive_ping.
  friend class keep_alive_timer;
  bool keep_alive_closed() const { return closing_ || closed_; }
  bool keep_alive_writing() const { return writing_; }

  beast::tcp_stream stream_;
  server_context& ctx_;
  open_connection counted_;  // in /metrics' weir_connections while this session lives
  std::string remote_;
  std::shared_ptr<const core::principal> who_ = core::anonymous_principal();
  std::string user_agent_;
  std::string correlation_id_;
  unsigned version_;
  actors::hub_connection conn_;
  std::optional<direct_target> direct_;
  std::unique_ptr<actors::direct_query> direct_query_;
  http::response<http::empty_body> res_;
  std::optional<http::response_serializer<http::empty_body>> serializer_;
  std::array<char, 512> read_buf_{};

  bool header_done_ = false;
  bool chunked_ = true;              // HTTP/1.1: chunked body; HTTP/1.0: the body is the connection
  bool finish_after_queue_ = false;  // closing, but what is queued still goes out first
  bool awaiting_baseline_ = false;   // a state stream lagged: frames wait for the baseline
  credential_expiry expiry_;
  /// An AG-UI agent run (`POST …/agent`): its RUN_STARTED event, written before any frame, and
  /// the timer that ends the run. Made only for runs: a plain stream holds a null pointer.
  struct agent_run_state {
    std::string started;  // "data: {RUN_STARTED}\n\n"; its bytes outlive a partial write
    bool started_pending = true;
    asio::steady_timer timer;
    bool baseline_queued = false;  // a STATE_SNAPSHOT reached the queue
  };
  std::unique_ptr<agent_run_state> run_;
  std::vector<asio::const_buffer> last_pieces_;  // the last chunk, for watched_
  keep_alive_timer keep_alive_;
};

}  // namespace weir::gateway

// weir::gateway::ws_hub_session — one client on the Arc WebSocket hub (/.cratis/queries/ws).
// Owns the socket, the bounded outbound queue and the keep-alive timer; the protocol itself is
// actors::hub_connection's, applied on this session's I/O thread as frames are read. Internal to
// gateway/.
#pragma once

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
#include "gateway/request_identity.hpp"
#include "gateway/server_context.hpp"
#include "gateway/watched_write.hpp"
#include "gateway/write_now.hpp"

namespace weir::gateway {

class ws_hub_session : public actors::frame_sink,
                       public closable,
                       public hub_outbound<ws_hub_session>,
                       public std::enable_shared_from_this<ws_hub_session> {
 public:
  /// `correlation_id` goes on the 101 answer as X-Correlation-ID; `id` is who upgrades (a caller
  /// the hub refuses is closed with 1008 "Unauthorized" right after the upgrade, as the
  /// TypeScript hub does, so a browser learns why).
  ws_hub_session(tcp::socket&& socket, server_context& ctx, std::string correlation_id,
                 const request_identity& id);
  /// A direct per-query WebSocket (arc-hub §10) instead of the hub.
  ws_hub_session(tcp::socket&& socket, server_context& ctx, direct_target direct,
                 const request_identity& id);
  ~ws_hub_session() override;

  /// Accepts the upgrade carried by `req` and starts the session.
  void run(http::request<http::string_body> req);

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

 private:
  void on_accept(beast::error_code ec);
  void start_direct();
  void on_direct_text(const std::string& text);
  void do_read();
  void on_readable(beast::error_code ec);
  /// Handles every complete frame in rbuf_; false when the connection is closing or gone.
  bool parse_frames();
  void on_message(std::string text);
  void lost();
  // hub_outbound's hooks
  friend class hub_outbound<ws_hub_session>;
  const asio::io_context::executor_type& executor() const { return exec_; }
  tcp::socket& socket() { return sock_; }
  static bool admit(const actors::outbound_frame&) { return true; }
  static void lagged() {}  // the inbox resyncs state streams only, which are SSE's
  void enqueue(actors::outbound_frame f);
  /// Starts one batch: true when it went out at once and more waits.
  bool write_batch();
  /// A batch went out (or failed): true when more waits to be written.
  bool wrote(beast::error_code ec);
  void write_close();
  /// Decides the close (once: later calls do nothing). `bound`: the close is at that bound,
  /// counted in /metrics' weir_closes_total only here, where it is decided.
  void start_close(std::uint16_t code, std::string reason,
                   std::optional<bound_close> bound = std::nullopt);
  /// close() from another thread, at a bound.
  void close_at(bound_close bound, std::uint16_t code, std::string reason);
  void arm_keep_alive();
  // keep_alive_timer's questions (§6); its action, the Ping, is hub_outbound's keep_alive_ping.
  friend class keep_alive_timer;
  bool keep_alive_closed() const { return closing_ || closed_; }
  bool keep_alive_writing() const { return writing_; }
  void end_unauthorized();

  /// What only the upgrade needs: Beast writes the 101, then hands the socket over.
  struct upgrade {
    explicit upgrade(tcp::socket&& s) : ws(std::move(s)) {}
    websocket::stream<beast::tcp_stream> ws;
    std::string user_agent;  // handed to the hub connection, which keeps it for the health feed
  };
  /// What only a closing session needs (most never close from this side): made by start_close,
  /// or by end_unauthorized for the frame that goes before the close.
  struct closing_parts {
    std::string text;                                   // the close reason
    std::string frame;                                  // the close frame, as written
    std::vector<asio::const_buffer> pieces;             // the frame, for watched_
    std::optional<asio::steady_timer> timer;            // the bound on the peer's answer
    std::optional<actors::outbound_frame> final_frame;  // the last frame, after the write in flight
  };
  closing_parts& closing_state();

  // The io_context's own executor (8 bytes; the socket keeps a type-erased copy): other threads
  // post to it, so it is not taken from the socket, which on_accept reassigns.
  asio::io_context::executor_type exec_;
  std::unique_ptr<upgrade> handshake_;
  tcp::socket sock_;
  server_context& ctx_;
  open_connection counted_;  // in /metrics' weir_connections while this session lives
  std::string remote_;       // the client address
  std::shared_ptr<const core::principal> who_;
  bool refused_ = false;  // the upgrade's credential was refused (it closes with 1008)
  std::string correlation_id_;
  actors::hub_connection conn_;
  std::unique_ptr<direct_target> direct_;  // a direct socket's target (rare: kept off the session)
  std::unique_ptr<actors::direct_query> direct_query_;

  // State of the session's I/O thread only.
  std::string rbuf_;     // received bytes of an incomplete frame
  std::string message_;  // a fragmented message being reassembled
  bool in_message_ = false;
  std::uint64_t skip_ = 0;               // payload bytes of a refused frame still to drop
  bool discard_input_ = false;           // after a protocol error or the peer's close
  std::uint32_t inbound_this_wake_ = 0;  // messages taken since the socket became readable
  bool peer_closed_ = false;
  std::string control_out_;        // the Pong to the latest Ping, for the next write (one)
  std::string control_in_flight_;  // the Pong in the write in flight
  bool close_sent_ = false;
  bool accepted_ = false;  // until the handshake is written, a close must wait for it
  std::uint16_t close_code_ = 1000;
  keep_alive_timer keep_alive_;
  // Created when first needed: most connections never close from this side or expire.
  std::unique_ptr<closing_parts> closing_parts_;
  std::unique_ptr<credential_expiry> expiry_;  // a direct socket's credential expiry
};

}  // namespace weir::gateway

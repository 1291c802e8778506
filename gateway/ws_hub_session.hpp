// weir::gateway::ws_hub_session — one client on the Arc WebSocket hub (/.cratis/queries/ws).
// Owns the socket, the bounded outbound queue and the keep-alive timer; the protocol itself runs
// in the connection actor behind actors::hub_connection. Internal to gateway/.
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
#include "gateway/server_context.hpp"

namespace weir::gateway {

class ws_hub_session : public actors::frame_sink,
                       public closable,
                       public std::enable_shared_from_this<ws_hub_session> {
 public:
  /// `correlation_id` goes on the 101 answer as X-Correlation-ID.
  ws_hub_session(tcp::socket&& socket, server_context& ctx, std::string correlation_id);
  /// A direct per-query WebSocket (arc-hub §10) instead of the hub.
  ws_hub_session(tcp::socket&& socket, server_context& ctx, direct_target direct);
  ~ws_hub_session() override;

  /// Accepts the upgrade carried by `req` and starts the session.
  void run(http::request<http::string_body> req);

  // frame_sink (any thread)
  void send(actors::outbound_frame frame) override;
  void close(std::uint16_t code, std::string reason) override;
  // closable
  void shut_down() override { close(1001, "Server shutting down"); }

 private:
  void on_accept(beast::error_code ec);
  void start_direct();
  void on_direct_text(const std::string& text);
  void do_read();
  void on_read(beast::error_code ec, std::size_t n);
  void drain_inbox();
  void enqueue(actors::outbound_frame f);
  void do_write();
  void set_cork(bool on);
  void on_write(beast::error_code ec, std::size_t n);
  void start_close(std::uint16_t code, std::string reason);
  void arm_keep_alive();
  void schedule_keep_alive(std::chrono::steady_clock::time_point when);

  websocket::stream<beast::tcp_stream> ws_;
  server_context& ctx_;
  beast::flat_buffer buffer_;
  std::string remote_;
  std::string tenant_;
  bool corked_ = false;
  std::string user_agent_;
  std::string correlation_id_;
  std::unique_ptr<actors::hub_connection> conn_;
  std::optional<direct_target> direct_;
  std::unique_ptr<actors::direct_query> direct_query_;

  // Cross-thread inbox: actors push, the strand drains. One post per burst, not per frame.
  bounded_inbox inbox_;  // actors → strand

  // Strand-only state.
  std::deque<actors::outbound_frame> queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool closing_ = false;
  bool closed_ = false;
  bool accepted_ = false;  // until the handshake is written, a close must wait for it
  websocket::close_reason close_reason_;
  asio::steady_timer keep_alive_;
  bool keep_alive_armed_ = false;
  std::chrono::steady_clock::time_point last_write_{};
  std::array<asio::const_buffer, 3> write_buffers_{};
};

}  // namespace weir::gateway

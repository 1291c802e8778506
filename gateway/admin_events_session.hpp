// weir::gateway::admin_events_session — one admin page stream (GET /ui/events): answers
// `200 text/event-stream`, sends `event: stats` with the stats document (admin_stats) at once
// and then every second, a `: keepalive` comment after windowed.keepAliveMs of silence like
// the other streams, and `event: closed` when the node drains (`server_shutdown`) or when the
// admin's credential expires (`deauthorized`). Internal to gateway/.
//
// Bounded by construction: nothing queues. A tick that finds the previous document still being
// written is skipped (the page computes its rates from cumulative counters, so a skipped
// document loses nothing), and a client that has not taken a document for
// max_skipped_ticks seconds is dropped. Once `closed` is decided it has close_deadline to reach
// the client. HTTP/1.1 streams are chunked; HTTP/1.0 ones end with the connection.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "gateway/beast.hpp"
#include "gateway/credential_expiry.hpp"
#include "gateway/keep_alive_timer.hpp"
#include "gateway/server_context.hpp"

namespace weir::gateway {

class admin_events_session : public closable,
                             public std::enable_shared_from_this<admin_events_session> {
 public:
  static constexpr std::chrono::seconds interval{1};
  static constexpr int max_skipped_ticks = 10;
  static constexpr std::chrono::seconds close_deadline{5};

  /// `expires_at`: when the credential that opened it expires (seconds since the Unix epoch);
  /// the stream ends with `closed{deauthorized}` then. None: authentication is off.
  admin_events_session(beast::tcp_stream&& stream, server_context& ctx, unsigned http_version,
                       std::string correlation_id, std::optional<std::int64_t> expires_at);
  ~admin_events_session() override;

  /// Answers the request and starts the ticks. Call on the connection's I/O thread.
  void run();
  // closable: the node drains (thread-safe).
  void shut_down() override;

 private:
  void tick();
  void arm_tick();
  void send(std::string event, bool last);
  void on_write(beast::error_code ec, bool last);
  void on_shut_down() { end(closed_event_for("server_shutdown")); }
  /// Decides the end: `closed` (with its reason) goes out next, then the stream ends.
  void end(std::string closed_event);
  static std::string closed_event_for(std::string_view reason);
  void do_read();
  void finish();
  void gone();
  // keep_alive_timer's questions and its action.
  friend class keep_alive_timer;
  bool keep_alive_closed() const { return closing_ || closed_; }
  bool keep_alive_writing() const { return writing_; }
  void keep_alive_ping();

  beast::tcp_stream stream_;
  server_context& ctx_;
  unsigned version_;
  std::string correlation_id_;
  bool chunked_ = true;
  bool header_written_ = false;
  bool writing_ = false;
  bool closing_ = false;  // `closed` decided: written next, then the end
  bool closed_ = false;   // the socket is done
  int skipped_ = 0;       // ticks in a row that found a write in flight
  std::string first_;     // the first event, written right after the header
  std::string out_;       // the write in flight (a whole chunk)
  http::response<http::empty_body> res_;
  std::optional<http::response_serializer<http::empty_body>> serializer_;
  std::array<char, 512> read_buf_{};
  asio::steady_timer ticks_;
  std::chrono::steady_clock::time_point next_tick_{};
  keep_alive_timer keep_alive_;
  asio::steady_timer deadline_;  // the close deadline
  std::optional<std::int64_t> expires_at_;
  credential_expiry expiry_;
  std::string closed_event_;  // what `end` decided to send last
};

}  // namespace weir::gateway

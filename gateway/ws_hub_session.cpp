// The WebSocket hub session: arc-hub §2 framing on the wire, §6 keep-alive, §8 inbound rules
// (binary → 1008 "Text frames required", oversized → 1009 "Inbound frame too large"), §9
// outbound bounds (1013 "Outbound queue full", 1008 "Invalid outbound frame"), 1013 "Hub
// capacity reached" over the connection budget, and one write in flight at a time.
#include "gateway/ws_hub_session.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>

#include "actors/runtime.hpp"
#include "core/hub_codec.hpp"
#include "gateway/query_routes.hpp"

namespace weir::gateway {
namespace {

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ws_hub_session::ws_hub_session(tcp::socket&& socket, server_context& ctx,
                               std::string correlation_id)
    : ws_(std::move(socket)),
      ctx_(ctx),
      correlation_id_(std::move(correlation_id)),
      keep_alive_(ws_.get_executor()) {
  beast::error_code ec;
  auto ep = beast::get_lowest_layer(ws_).socket().remote_endpoint(ec);
  if (!ec) {
    remote_ = ep.address().to_string();
  }
}

ws_hub_session::ws_hub_session(tcp::socket&& socket, server_context& ctx, direct_target direct)
    : ws_hub_session(std::move(socket), ctx, direct.correlation_id) {
  direct_ = std::move(direct);
}

ws_hub_session::~ws_hub_session() {
  ctx_.remove(this);
}

void ws_hub_session::run(http::request<http::string_body> req) {
  // The tenant, as Arc resolves it by default (arc-hub §9.1): part of every caller key.
  if (auto it = req.find("x-cratis-tenant-id"); it != req.end()) {
    tenant_ = std::string{it->value()};
  }
  if (auto it = req.find(http::field::user_agent); it != req.end()) {
    user_agent_ = std::string{it->value()};
  }
  ctx_.add(shared_from_this());
  beast::get_lowest_layer(ws_).expires_never();
  // Beast's own timeouts catch dead peers (WebSocket pings at idle/2); the Arc JSON Ping of §6
  // is separate and driven by outbound silence.
  ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws_.set_option(websocket::stream_base::decorator(
      [correlation = correlation_id_](websocket::response_type& res) {
        res.set(http::field::server, "weir");
        res.set("X-Correlation-ID", correlation);  // on every response, the 101 included
      }));
  // 0 lifts Beast's own cap: the session counts message bytes itself so that it can close
  // with the reason text arc-hub §9 prescribes.
  ws_.read_message_max(0);
  ws_.async_accept(req, beast::bind_front_handler(&ws_hub_session::on_accept, shared_from_this()));
}

void ws_hub_session::on_accept(beast::error_code ec) {
  if (ec) {
    closed_ = true;
    return;
  }
  accepted_ = true;
  if (closing_) {
    // A shutdown asked to close while the handshake was being written: close now that no
    // other write is in flight.
    ws_.async_close(close_reason_,
                    [self = shared_from_this()](beast::error_code) { self->closed_ = true; });
    return;
  }
  if (ctx_.draining) {
    start_close(1013, "Server shutting down");
    return;
  }
  if (direct_) {
    start_direct();
    return;
  }
  actors::connection_info info;
  info.remote_address = remote_;
  info.tenant = tenant_;
  info.user_agent = user_agent_;
  conn_ = actors::hub_connection::open(ctx_.rt, weak_from_this(), std::move(info));
  if (!conn_) {
    start_close(1013, "Hub capacity reached");
    return;
  }
  // Connected goes out before anything is read (arc-hub §2.1).
  enqueue(actors::outbound_frame::text(conn_->connected_frame()));
  do_read();
}

void ws_hub_session::start_direct() {
  // arc-hub §10: every emission is {"type":"Data","data":<QueryResult>} with full data; no
  // Connected, no hub protocol. Arguments that do not bind get one Data frame with a
  // malformedRequest validation result, then the socket closes.
  auto& d = *direct_;
  auto head = "{\"type\":\"Data\",\"data\":{\"correlationId\":\"" + d.correlation_id + "\"";
  auto q = d.health ? actors::direct_query::open_health(ctx_.rt, *d.health, d.request.caller,
                                                        weak_from_this(), std::move(head), "}")
                    : actors::direct_query::open(ctx_.rt, *d.def, d.request, weak_from_this(),
                                                 std::move(head), "}");
  if (!q) {
    auto body = q.error().code == "query.invalid_arguments"
                    ? invalid_result(d.correlation_id, q.error())
                    : failed_result(d.correlation_id, "An unexpected error occurred");
    enqueue(actors::outbound_frame::text("{\"type\":\"Data\",\"data\":" + body + "}"));
    start_close(1000, "");
    return;
  }
  direct_query_ = std::move(q.value());
  do_read();
}

void ws_hub_session::on_direct_text(const std::string& text) {
  // The direct socket answers Ping with Pong and ignores everything else (§10).
  auto f = core::parse_client_frame(text);
  if (f && f->type == core::client_frame_type::ping && f->timestamp) {
    enqueue(actors::outbound_frame::text(core::encode_pong(*f->timestamp)));
  }
}

void ws_hub_session::do_read() {
  auto limit = ctx_.rt.hub().max_inbound_frame_bytes;
  // Read at most one byte past the cap, so an oversized message is noticed without buffering it.
  auto room = limit + 1 - std::min(limit, buffer_.size());
  ws_.async_read_some(buffer_, room,
                      beast::bind_front_handler(&ws_hub_session::on_read, shared_from_this()));
}

void ws_hub_session::on_read(beast::error_code ec, std::size_t) {
  if (ec) {
    // The peer is gone: stop taking frames and let go of the queue, so nothing keeps this
    // session (its actor, its budget units) alive.
    closed_ = true;
    keep_alive_.cancel();
    inbox_.close();
    if (!writing_) {
      queue_.clear();
      queued_bytes_ = 0;
    }
    return;
  }
  if (closing_) {
    return;
  }
  if (ws_.got_binary()) {
    start_close(1008, "Text frames required");
    return;
  }
  if (buffer_.size() > ctx_.rt.hub().max_inbound_frame_bytes) {
    start_close(1009, "Inbound frame too large");
    return;
  }
  if (ws_.is_message_done()) {
    std::string text = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    if (direct_) {
      on_direct_text(text);
      do_read();
      return;
    }
    if (!conn_->deliver(std::move(text))) {
      start_close(1013, "Inbound queue full");
      return;
    }
  }
  do_read();
}

void ws_hub_session::send(actors::outbound_frame frame) {
  switch (inbox_.push(std::move(frame), ctx_.rt.hub())) {
    case bounded_inbox::push_result::schedule:
      asio::post(ws_.get_executor(),
                 beast::bind_front_handler(&ws_hub_session::drain_inbox, shared_from_this()));
      break;
    case bounded_inbox::push_result::overflow:
      close(1013, "Outbound queue full");
      break;
    case bounded_inbox::push_result::queued:
    case bounded_inbox::push_result::closed:
      break;
  }
}

void ws_hub_session::drain_inbox() {
  auto batch = inbox_.drain();
  for (auto& f : batch) {
    if (closing_ || closed_) {
      return;
    }
    enqueue(std::move(f));
  }
}

void ws_hub_session::enqueue(actors::outbound_frame f) {
  if (closing_ || closed_ || !f.is_live()) {
    return;
  }
  const auto& hub = ctx_.rt.hub();
  auto size = f.size();
  if (size > hub.max_outbound_frame_bytes) {
    start_close(1008, "Invalid outbound frame");
    return;
  }
  if (queue_.size() >= hub.max_outbound_frames ||
      queued_bytes_ + size > hub.max_outbound_queue_bytes) {
    // The client does not keep up. Dropping a frame would corrupt its deltas; close instead,
    // and it reconnects to a fresh baseline (arc-hub §9).
    start_close(1013, "Outbound queue full");
    return;
  }
  queued_bytes_ += size;
  queue_.push_back(std::move(f));
  if (!writing_) {
    do_write();
  }
}

void ws_hub_session::do_write() {
  // "Still current" is checked right before each write: a subscription replaced or cancelled
  // after its frame was queued gets nothing more on the wire.
  while (!queue_.empty() && !queue_.front().is_live()) {
    queued_bytes_ -= queue_.front().size();
    queue_.pop_front();
  }
  if (queue_.empty()) {
    return;
  }
  // A burst is corked: the kernel packs the frames written back to back into full segments
  // and sends them when the queue runs dry (uncork), instead of one segment per frame.
  if (!corked_ && queue_.size() > 1) {
    set_cork(true);
  }
  auto& f = queue_.front();
  write_buffers_[0] = f.head ? asio::buffer(*f.head) : asio::const_buffer{};
  write_buffers_[1] = f.body ? asio::buffer(*f.body) : asio::const_buffer{};
  write_buffers_[2] = asio::buffer(f.tail.data(), f.tail.size());
  writing_ = true;
  ws_.text(true);
  ws_.async_write(write_buffers_,
                  beast::bind_front_handler(&ws_hub_session::on_write, shared_from_this()));
}

void ws_hub_session::on_write(beast::error_code ec, std::size_t) {
  writing_ = false;
  if (ec) {
    closed_ = true;
    keep_alive_.cancel();
    beast::get_lowest_layer(ws_).socket().close(ec);
    return;
  }
  queued_bytes_ -= queue_.front().size();
  queue_.pop_front();
  if (closed_) {
    queue_.clear();
    queued_bytes_ = 0;
    return;
  }
  if (closing_) {
    ws_.async_close(close_reason_, [self = shared_from_this()](beast::error_code) {
      self->closed_ = true;
      self->keep_alive_.cancel();
    });
    return;
  }
  arm_keep_alive();
  if (!queue_.empty()) {
    do_write();
  }
  if (!writing_ && corked_) {
    set_cork(false);  // flushes what the cork held back
  }
}

void ws_hub_session::set_cork(bool on) {
  int v = on ? 1 : 0;
  auto& sock = beast::get_lowest_layer(ws_).socket();
  ::setsockopt(sock.native_handle(), IPPROTO_TCP, TCP_CORK, &v, sizeof v);
  corked_ = on;
}

void ws_hub_session::arm_keep_alive() {
  last_write_ = std::chrono::steady_clock::now();
  if (direct_) {
    return;  // the hub's keep-alive Ping is not part of the direct protocol (§10)
  }
  auto interval = std::chrono::milliseconds{ctx_.rt.hub().keep_alive_interval_ms};
  if (interval.count() > 0 && !keep_alive_armed_) {
    schedule_keep_alive(last_write_ + interval);
  }
}

void ws_hub_session::schedule_keep_alive(std::chrono::steady_clock::time_point when) {
  // One timer per connection, never reset per write (that would cost a timer cancel and a
  // handler per frame): when it fires it looks at the time of the last successful write and
  // either pings (§6: silence is counted from the last write) or sleeps for the remainder.
  keep_alive_armed_ = true;
  keep_alive_.expires_at(when);
  keep_alive_.async_wait([self = shared_from_this()](beast::error_code ec) {
    self->keep_alive_armed_ = false;
    if (ec || self->closing_ || self->closed_) {
      return;
    }
    auto interval = std::chrono::milliseconds{self->ctx_.rt.hub().keep_alive_interval_ms};
    auto now = std::chrono::steady_clock::now();
    if (self->writing_) {
      self->schedule_keep_alive(now + interval);  // the write's completion re-times it
      return;
    }
    auto due = self->last_write_ + interval;
    if (now < due) {
      self->schedule_keep_alive(due);
      return;
    }
    self->enqueue(actors::outbound_frame::text(core::encode_ping(unix_ms())));
    if (self->conn_) {
      self->conn_->note_ping_sent();
    }
  });
}

void ws_hub_session::close(std::uint16_t code, std::string reason) {
  asio::post(ws_.get_executor(), [self = shared_from_this(), code, reason = std::move(reason)] {
    self->start_close(code, reason);
  });
}

void ws_hub_session::start_close(std::uint16_t code, std::string reason) {
  if (closing_ || closed_) {
    return;
  }
  closing_ = true;
  inbox_.close();
  keep_alive_.cancel();
  close_reason_ = websocket::close_reason{static_cast<websocket::close_code>(code), reason};
  // Frames not yet started are dropped: after a close nothing else may go out. One write may
  // be in flight; the close follows it.
  while (queue_.size() > (writing_ ? 1u : 0u)) {
    queued_bytes_ -= queue_.back().size();
    queue_.pop_back();
  }
  if (!writing_ && accepted_) {
    ws_.async_close(close_reason_,
                    [self = shared_from_this()](beast::error_code) { self->closed_ = true; });
  }
}

}  // namespace weir::gateway

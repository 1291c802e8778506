// The WebSocket hub session: arc-hub §2 framing on the wire, §6 keep-alive, §8 inbound rules
// (binary → 1008 "Text frames required", oversized → 1009 "Inbound frame too large"), §9
// outbound bounds (1013 "Outbound queue full", 1008 "Invalid outbound frame"), 503 with
// Retry-After: 1 instead of the upgrade over the connection budget (seed 001), and one write in
// flight at a time.
//
// Beast accepts the upgrade; after that the session owns the socket and speaks RFC 6455 itself
// (core/ws_framing): every frame queued goes out in one gather write, one syscall per burst per
// connection instead of one per frame (the fan-out cost that mattered, see
// docs/performance.md), and the read side holds no buffer while the client is quiet.
#include "gateway/ws_hub_session.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include <boost/asio/bind_allocator.hpp>

#include "actors/runtime.hpp"
#include "core/hub_codec.hpp"
#include "core/ws_framing.hpp"
#include "gateway/frame_batch.hpp"
#include "gateway/parked_allocator.hpp"
#include "gateway/query_routes.hpp"
#include "gateway/stream_refusal.hpp"
#include "log/log.hpp"

namespace weir::gateway {
namespace {

asio::io_context::executor_type io_executor_of(tcp::socket& s) {
  auto* ex = s.get_executor().target<asio::io_context::executor_type>();
  if (!ex) {
    throw std::logic_error("a WebSocket session runs on an io_context");
  }
  return *ex;
}

}  // namespace

ws_hub_session::ws_hub_session(tcp::socket&& socket, server_context& ctx,
                               std::string correlation_id, const request_identity& id)
    : exec_(io_executor_of(socket)),
      handshake_(std::make_unique<upgrade>(std::move(socket))),
      sock_(exec_),
      ctx_(ctx),
      counted_(ctx.traffic, transport::websocket),
      correlation_id_(std::move(correlation_id)) {
  remote_ = id.client;
  who_ = id.who;
  refused_ = id.refused.has_value();
  kind = transport::websocket;
}

ws_hub_session::ws_hub_session(tcp::socket&& socket, server_context& ctx, direct_target direct,
                               const request_identity& id)
    : ws_hub_session(std::move(socket), ctx, direct.correlation_id, id) {
  direct_ = std::make_unique<direct_target>(std::move(direct));
}

ws_hub_session::~ws_hub_session() {
  ctx_.remove(this);
  log::debug("connection closed", {{"transport", "websocket"},
                                   {"correlation", correlation_id_},
                                   {"frames", frames_sent.load(std::memory_order_relaxed)}});
}

void ws_hub_session::run(http::request<http::string_body> req) {
  if (auto it = req.find(http::field::user_agent); it != req.end()) {
    handshake_->user_agent = std::string{it->value()};
  }
  ctx_.add(shared_from_this());
  log::debug("connection opened", {{"transport", "websocket"},
                                   {"correlation", correlation_id_},
                                   {"remote", remote_},
                                   {"direct", direct_ != nullptr}});
  auto& ws = handshake_->ws;
  // Seed 001: a hub over its connection budget is refused with 503 during the upgrade. The
  // budget is taken before the 101, so it cannot run out while the upgrade is written; a hub
  // refused for its credential, or met by a drain, is still upgraded and then closed (1008,
  // 1013 `Server shutting down`), as arc-hub §9 has it.
  if (!direct_ && !ctx_.draining && !refused_ && core::check_access(ctx_.opts.hubs, *who_)) {
    actors::connection_info info;
    info.remote_address = remote_;
    info.who = who_;
    info.user_agent = std::move(handshake_->user_agent);  // kept once, in the directory
    conn_ = actors::hub_connection::open(ctx_.rt, weak_from_this(), std::move(info));
    if (!conn_) {
      ctx_.traffic.closed_at(bound_close::hub_capacity);
      log::info("stream refused", {{"transport", "websocket"},
                                   {"status", 503},
                                   {"code", "hub_capacity"},
                                   {"correlation", correlation_id_},
                                   {"remote", remote_}});
      auto res = stream_refusal(503, req.version(), correlation_id_);
      res->set(http::field::retry_after, "1");
      write_refusal(shared_from_this(), beast::get_lowest_layer(ws), std::move(res));
      return;
    }
  }
  beast::get_lowest_layer(ws).expires_after(std::chrono::seconds(30));
  ws.set_option(websocket::stream_base::decorator(
      [correlation = correlation_id_](websocket::response_type& res) {
        res.set(http::field::server, "weir");
        res.set("X-Correlation-ID", correlation);  // on every response, the 101 included
      }));
  ws.async_accept(req, beast::bind_front_handler(&ws_hub_session::on_accept, shared_from_this()));
}

void ws_hub_session::on_accept(beast::error_code ec) {
  if (ec) {
    closed_ = true;
    handshake_.reset();
    return;
  }
  // From here on the socket is ours: Beast's stream (and its buffers) go.
  beast::get_lowest_layer(handshake_->ws).expires_never();
  sock_ = beast::get_lowest_layer(handshake_->ws).release_socket();
  handshake_.reset();
  beast::error_code ignored;
  sock_.non_blocking(true, ignored);
  sock_.set_option(tcp::no_delay(true), ignored);
  // Dead peers (no FIN, no RST) are found by the kernel; output the peer does not read gives up
  // after http.sendStallTimeoutMs (watched_write).
  watch_for_dead_peer(sock_, ctx_.opts.send_stall);
  accepted_ = true;
  // Reading starts at once, whatever follows: a close sent now still needs the peer's answer.
  do_read();
  if (closing_) {
    // A shutdown asked to close while the handshake was being written.
    write_close();
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
  if (refused_ || !core::check_access(ctx_.opts.hubs, *who_)) {
    start_close(1008, "Unauthorized");  // arc-hub §9: the TypeScript hub's auth failure
    return;
  }
  if (!conn_) {
    // Admitted in run() unless a drain had begun by then (closed above, now that it is on).
    start_close(1013, "Hub capacity reached", bound_close::hub_capacity);
    return;
  }
  // Connected goes out before anything is read (arc-hub §2.1).
  enqueue(actors::outbound_frame::text(conn_.connected_frame()));
}

void ws_hub_session::start_direct() {
  // arc-hub §10: every emission is {"type":"Data","data":<QueryResult>} with full data; no
  // Connected, no hub protocol. Arguments that do not bind get one Data frame with a
  // malformedRequest validation result, then the socket closes.
  auto& d = *direct_;
  if (d.refused) {
    end_unauthorized();
    return;
  }
  auto head = "{\"type\":\"Data\",\"data\":{\"correlationId\":\"" + d.correlation_id + "\"";
  auto q = d.health ? actors::direct_query::open_health(ctx_.rt, *d.health, d.request,
                                                        weak_from_this(), std::move(head), "}")
                    : actors::direct_query::open(ctx_.rt, *d.def, d.request, weak_from_this(),
                                                 std::move(head), "}");
  if (!q) {
    if (q.error().code.starts_with("auth.")) {
      end_unauthorized();
      return;
    }
    auto body = q.error().code == "query.invalid_arguments"
                    ? invalid_result(d.correlation_id, q.error())
                    : failed_result(d.correlation_id, "An unexpected error occurred");
    enqueue(actors::outbound_frame::text("{\"type\":\"Data\",\"data\":" + body + "}"));
    start_close(1000, "");
    return;
  }
  direct_query_ = std::move(q.value());
  if (auto exp = direct_query_->expires_at()) {
    // The emission guard: when the credential expires the socket gets isAuthorized:false.
    if (!expiry_) {
      expiry_ = std::make_unique<credential_expiry>(exec_);
    }
    expiry_->arm(*exp, shared_from_this(), [this] {
      if (!closing_ && !closed_) {
        end_unauthorized();
      }
    });
  }
}

void ws_hub_session::end_unauthorized() {
  // arc-hub §10: authentication failure is a Data frame with isAuthorized:false, then the
  // socket closes.
  direct_query_.reset();
  queue_.drop_unstarted();  // results not yet on the wire are no longer the caller's to see
  auto frame = actors::outbound_frame::text(
      "{\"type\":\"Data\",\"data\":" + unauthorized_result(direct_->correlation_id) + "}");
  if (writing_) {
    closing_state().final_frame = std::move(frame);  // on_write sends it, then closes
    return;
  }
  enqueue(std::move(frame));  // starts writing at once: start_close keeps what is in flight
  start_close(1008, "Unauthorized");
}

void ws_hub_session::on_direct_text(const std::string& text) {
  // The direct socket answers Ping with Pong and ignores everything else (§10).
  auto f = core::parse_client_frame(text);
  if (f && f->type == core::client_frame_type::ping && f->timestamp) {
    enqueue(actors::outbound_frame::text(core::encode_pong(*f->timestamp)));
  }
}

void ws_hub_session::do_read() {
  // Parked for as long as the client is quiet: sized for itself, not from asio's recycled
  // blocks (parked_allocator.hpp).
  sock_.async_wait(tcp::socket::wait_read,
                   asio::bind_allocator(parked_allocator<void>{},
                                        beast::bind_front_handler(&ws_hub_session::on_readable,
                                                                  shared_from_this())));
}

void ws_hub_session::on_readable(beast::error_code ec) {
  if (ec) {
    lost();
    return;
  }
  // Drain what the kernel has into one scratch buffer per thread; only an incomplete frame is
  // kept, so a quiet connection holds no read buffer.
  thread_local std::array<char, 64 * 1024> scratch;
  inbound_this_wake_ = 0;
  for (;;) {
    auto n = sock_.read_some(asio::buffer(scratch), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      break;
    }
    if (ec || n == 0) {
      lost();
      return;
    }
    rbuf_.append(scratch.data(), n);
    if (!parse_frames()) {
      return;  // gone
    }
    if (n < scratch.size()) {
      break;
    }
  }
  if (rbuf_.empty()) {
    // A quiet connection holds no read buffer (clients send seldom: an allocation per read
    // costs less than every idle connection keeping its last read's capacity).
    std::string{}.swap(rbuf_);
  }
  do_read();
}

bool ws_hub_session::parse_frames() {
  namespace wsf = core::ws;
  const auto limit = ctx_.rt.hub().max_inbound_frame_bytes;
  std::size_t pos = 0;
  while (!closed_) {
    if (discard_input_) {
      rbuf_.clear();  // no frame boundary to resynchronise on: everything is dropped
      return false;
    }
    if (skip_ > 0) {
      // The rest of a refused frame, never buffered.
      auto n = static_cast<std::size_t>(std::min<std::uint64_t>(skip_, rbuf_.size() - pos));
      pos += n;
      skip_ -= n;
      if (skip_ > 0) {
        break;
      }
    }
    wsf::frame_header h;
    auto status = wsf::parse_client_header(std::string_view{rbuf_}.substr(pos), h);
    if (status == wsf::parse_status::incomplete) {
      break;
    }
    if (status == wsf::parse_status::protocol_error) {
      discard_input_ = true;
      start_close(1002, "Protocol error");
      continue;
    }
    bool control = static_cast<std::uint8_t>(h.op) >= 0x8;
    if (!control) {
      std::optional<std::pair<std::uint16_t, const char*>> refuse;
      if ((h.op == wsf::opcode::continuation) != in_message_) {
        discard_input_ = true;  // a continuation without a start, or a start inside a message
        start_close(1002, "Protocol error");
        continue;
      }
      if (h.op == wsf::opcode::binary) {
        refuse.emplace(1008, "Text frames required");
      } else if (message_.size() + h.length > limit) {
        refuse.emplace(1009, "Inbound frame too large");  // seen from the header alone
      }
      if (refuse || closing_) {
        // Skip the frame's payload without buffering it; keep reading for the peer's close.
        pos += h.size;
        skip_ = h.length;
        message_.clear();
        in_message_ = false;
        if (refuse) {
          start_close(refuse->first, refuse->second,
                      refuse->first == 1009
                          ? std::optional<bound_close>{bound_close::inbound_frame_too_large}
                          : std::nullopt);
        }
        continue;
      }
    }
    if (rbuf_.size() - pos < h.size + h.length) {
      break;  // the payload has not all arrived (at most `limit` bytes, checked above)
    }
    char* payload = rbuf_.data() + pos + h.size;
    auto len = static_cast<std::size_t>(h.length);
    wsf::unmask(payload, len, h.mask);
    std::string_view data{payload, len};
    pos += h.size + len;
    switch (h.op) {
      case wsf::opcode::ping:
        if (!closing_) {
          // RFC 6455 §5.5.3: a Pong may answer only the most recent Ping. Keeping just that one
          // bounds what a client that pings and never reads can make this session hold (one
          // control frame, at most 127 bytes), whatever the number of Pings.
          control_out_ = wsf::encode_server_frame(wsf::opcode::pong, data);
          if (!writing_) {
            do_write();
          }
        }
        break;
      case wsf::opcode::pong:
        break;
      case wsf::opcode::close: {
        peer_closed_ = true;
        if (close_sent_) {
          lost();  // the peer answered our close: the closing handshake is complete
          return false;
        }
        // The peer closes first: answer with its code (RFC 6455 §5.5.1), then end.
        auto code = wsf::close_code_of(data);
        if (code == 0) {
          start_close(1002, "Protocol error");
        } else {
          start_close(code == 1005 ? 1000 : code, "");
        }
        discard_input_ = true;  // nothing may follow a close
        continue;
      }
      default:
        message_.append(data);
        in_message_ = !h.fin;
        if (h.fin) {
          std::string text;
          text.swap(message_);
          if (!wsf::valid_utf8(text)) {
            start_close(1007, "Invalid UTF-8");
          } else {
            on_message(std::move(text));
          }
        }
        break;
    }
  }
  rbuf_.erase(0, pos);
  return !closed_;
}

void ws_hub_session::on_message(std::string text) {
  if (closing_) {
    return;
  }
  if (direct_) {
    on_direct_text(text);
    return;
  }
  // The hub connection applies each frame at once, so nothing queues behind it; what is bounded
  // is how many frames one wake-up takes from the socket (arc-hub §9's inbound queue): a client
  // that sends faster than that is closed rather than served ahead of everyone on this thread.
  if (++inbound_this_wake_ > ctx_.rt.hub().max_inbound_frames) {
    start_close(1013, "Inbound queue full", bound_close::inbound_queue_full);
    return;
  }
  conn_.deliver(text);
}

void ws_hub_session::lost() {
  // The peer is gone: stop taking frames and let go of the queue, so nothing keeps this
  // session (its hub connection, its budget units) alive.
  closed_ = true;
  keep_alive_.cancel();
  if (closing_parts_ && closing_parts_->timer) {
    closing_parts_->timer->cancel();
  }
  if (expiry_) {
    expiry_->cancel();
  }
  inbox_.close();
  beast::error_code ec;
  sock_.close(ec);
  if (!writing_) {
    queue_.clear();
  }
}

void ws_hub_session::send(actors::outbound_frame frame) {
  push_frame(std::move(frame));
}

void ws_hub_session::flush() {
  if (!queue_.empty() || !control_out_.empty()) {
    do_write();
  }
}

void ws_hub_session::enqueue(actors::outbound_frame f) {
  if (closing_ || closed_) {
    return;
  }
  switch (queue_.push(std::move(f), ctx_.rt.hub())) {
    case outbound_queue::push_result::queued:
      if (!writing_ && !taking_) {
        do_write();
      }
      break;
    case outbound_queue::push_result::stale:
      break;
    case outbound_queue::push_result::too_large:
      start_close(1008, "Invalid outbound frame");
      break;
    case outbound_queue::push_result::full:
      // The client does not keep up. Dropping a frame would corrupt its deltas; close instead,
      // and it reconnects to a fresh baseline (arc-hub §9).
      start_close(1013, "Outbound queue full", bound_close::outbound_queue_full);
      break;
  }
}

bool ws_hub_session::write_batch() {
  if (closed_ || writing_) {
    return false;
  }
  // Pending pongs, then every queued frame (up to a bound), in one gather write. The piece list
  // and the frame headers are this thread's scratch, not the session's: the write is usually
  // done before this returns, and an idle connection then holds none of it.
  thread_local std::vector<asio::const_buffer> pieces;
  thread_local std::array<std::uint8_t, max_frames_per_write * 10> headers;
  std::uint8_t* header = nullptr;  // past the last header written
  const bool any = gather_batch(
      queue_, pieces, ctx_.traffic, transport::websocket, frames_sent,
      [&] {
        header = headers.data();
        if (control_out_.empty()) {
          return false;
        }
        control_in_flight_.swap(control_out_);
        control_out_.clear();
        pieces.push_back(asio::buffer(control_in_flight_));
        return true;
      },
      [&](const actors::outbound_frame& f) {
        auto hs = core::ws::encode_server_header(core::ws::opcode::text, f.size(), header);
        pieces.push_back(asio::const_buffer{header, hs});
        header += 10;
        if (f.head) {
          pieces.push_back(asio::buffer(*f.head));
        }
        if (f.body) {
          pieces.push_back(asio::buffer(*f.body));
        }
        if (!f.tail.empty()) {
          pieces.push_back(asio::buffer(f.tail.data(), f.tail.size()));
        }
        return f.size();
      });
  if (!any) {
    if (closing_) {
      write_close();
    }
    return false;
  }
  return send_batch(pieces, headers.data(), static_cast<std::size_t>(header - headers.data()));
}

bool ws_hub_session::wrote(beast::error_code ec) {
  control_in_flight_.clear();
  if (!end_batch(ec)) {
    return false;
  }
  if (closing_) {
    if (!close_sent_) {
      write_close();
    }
    return false;
  }
  if (closing_parts_ && closing_parts_->final_frame) {
    auto frame = std::move(*closing_parts_->final_frame);
    closing_parts_->final_frame.reset();
    enqueue(std::move(frame));
    start_close(1008, "Unauthorized");
    return false;
  }
  arm_keep_alive();
  return !queue_.empty() || !control_out_.empty();
}

void ws_hub_session::write_close() {
  if (close_sent_ || closed_ || !accepted_) {
    return;
  }
  if (writing_) {
    return;  // on_write sends it when the batch in flight is done
  }
  close_sent_ = true;
  writing_ = true;
  auto& c = closing_state();
  c.frame = core::ws::encode_server_frame(core::ws::opcode::close,
                                          core::ws::close_payload(close_code_, c.text));
  c.pieces.assign(1, asio::buffer(c.frame));
  watch(c.pieces, [self = this](beast::error_code ec) {
    self->writing_ = false;
    if (self->closed_) {
      return;  // the peer went away meanwhile: nothing to wait for
    }
    if (ec) {
      self->lost();
      return;
    }
    if (self->peer_closed_ || self->discard_input_) {
      // The peer already closed, or its stream cannot be read any more: the
      // server ends the TCP connection first (RFC 6455 §7.1.1).
      self->lost();
      return;
    }
    // Wait a bounded time for the peer's close (reading goes on), then
    // drop the connection either way.
    auto& timer = self->closing_state().timer.emplace(self->exec_);
    timer.expires_after(std::chrono::seconds(5));
    timer.async_wait([self = self->shared_from_this()](beast::error_code ec) {
      if (!ec && !self->closed_) {
        self->lost();
      }
    });
  });
}

ws_hub_session::closing_parts& ws_hub_session::closing_state() {
  if (!closing_parts_) {
    closing_parts_ = std::make_unique<closing_parts>();
  }
  return *closing_parts_;
}

void ws_hub_session::arm_keep_alive() {
  if (direct_) {
    return;  // the hub's keep-alive Ping is not part of the direct protocol (§10)
  }
  keep_alive_.wrote(std::chrono::milliseconds{ctx_.rt.hub().keep_alive_interval_ms}, this);
}

void ws_hub_session::close(std::uint16_t code, std::string reason) {
  asio::post(exec_, [self = shared_from_this(), code, reason = std::move(reason)] {
    self->start_close(code, reason);
  });
}

void ws_hub_session::close_at(bound_close bound, std::uint16_t code, std::string reason) {
  asio::post(exec_, [self = shared_from_this(), bound, code, reason = std::move(reason)] {
    self->start_close(code, reason, bound);
  });
}

void ws_hub_session::start_close(std::uint16_t code, std::string reason,
                                 std::optional<bound_close> bound) {
  if (closing_ || closed_) {
    return;
  }
  closing_ = true;
  if (bound) {
    ctx_.traffic.closed_at(*bound);
  }
  // The server's own decisions: not an answer to the client's close, nor a normal end or the
  // drain (1000, 1001, and 1013 "Server shutting down" for an upgrade during the drain).
  if (!peer_closed_ && code != 1000 && code != 1001 && !ctx_.draining) {
    log::info("connection closed by the server", {{"transport", "websocket"},
                                                  {"closeCode", code},
                                                  {"reason", reason},
                                                  {"correlation", correlation_id_},
                                                  {"remote", remote_}});
  }
  inbox_.close();
  keep_alive_.cancel();
  close_code_ = code;
  closing_state().text = std::move(reason);
  // Frames not yet started are dropped: after a close nothing else may go out. One batch may be
  // in flight; the close follows it.
  queue_.drop_unstarted();
  control_out_.clear();
  if (!writing_ && accepted_) {
    write_close();
  }
}

}  // namespace weir::gateway

// The admin page's stream (see admin_events_session.hpp). Everything runs on the connection's
// I/O thread; shut_down() only posts there. The document is built there from counters and
// the members' last heartbeat answers (admin_stats_json), which takes locks for moments only.
#include "gateway/admin_events_session.hpp"

#include <algorithm>
#include <cstdio>

#include "gateway/admin_stats.hpp"
#include "gateway/hangup_read.hpp"
#include "gateway/sse_head.hpp"
#include "gateway/watched_write.hpp"

namespace weir::gateway {
namespace {

// EventSource reconnects after this long when the stream ends (a drained node, a restart).
constexpr std::string_view retry_field = "retry: 3000\n\n";
constexpr std::string_view keepalive = ": keepalive\n\n";

std::string stats_event(server_context& ctx) {
  return "event: stats\ndata: " + admin_stats_json(ctx) + "\n\n";
}

}  // namespace

admin_events_session::admin_events_session(beast::tcp_stream&& stream, server_context& ctx,
                                           unsigned http_version, std::string correlation_id,
                                           std::optional<std::int64_t> expires_at)
    : stream_(std::move(stream)),
      ctx_(ctx),
      version_(http_version),
      correlation_id_(std::move(correlation_id)),
      ticks_(stream_.get_executor()),
      deadline_(stream_.get_executor()),
      expires_at_(expires_at),
      expiry_(stream_.get_executor()) {}

std::string admin_events_session::closed_event_for(std::string_view reason) {
  return "event: closed\ndata: {\"reason\":\"" + std::string{reason} + "\"}\n\n";
}

admin_events_session::~admin_events_session() {
  ctx_.remove(this);
}

void admin_events_session::run() {
  stream_.expires_never();
  ctx_.add(shared_from_this());
  set_sse_head(res_, version_, correlation_id_);
  chunked_ = set_sse_framing(res_);
  first_ = std::string{retry_field} + stats_event(ctx_);
  serializer_.emplace(res_);
  writing_ = true;
  // Unacknowledged data fails the connection after the stall bound; a client that acknowledges
  // but does not read is dropped after max_skipped_ticks.
  watch_for_dead_peer(stream_.socket(), ctx_.opts.send_stall);
  http::async_write_header(stream_, *serializer_,
                           [self = shared_from_this()](beast::error_code ec, std::size_t) {
                             self->writing_ = false;
                             if (ec || self->closed_) {
                               self->gone();
                               return;
                             }
                             self->header_written_ = true;
                             self->send(std::move(self->first_), false);
                           });
  next_tick_ = std::chrono::steady_clock::now();
  arm_tick();
  if (expires_at_) {
    expiry_.arm(*expires_at_, shared_from_this(), [this] {
      if (!closing_ && !closed_) {
        end(closed_event_for("deauthorized"));
      }
    });
  }
  do_read();
  if (ctx_.draining) {
    // The node began to drain after the route let this stream in, possibly before it was
    // registered: the stream ends after its first document rather than outliving the drain.
    on_shut_down();
  }
}

void admin_events_session::shut_down() {
  asio::post(stream_.get_executor(), [self = shared_from_this()] { self->on_shut_down(); });
}

void admin_events_session::arm_tick() {
  // A fixed rate (not one second after each write): the page's rates divide by `at` anyway,
  // but a steady cadence keeps its charts even.
  next_tick_ += interval;
  // After a stall, one document now rather than one per second missed.
  next_tick_ = std::max(next_tick_, std::chrono::steady_clock::now());
  ticks_.expires_at(next_tick_);
  ticks_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) {
      self->tick();
    }
  });
}

void admin_events_session::tick() {
  if (closing_ || closed_) {
    return;
  }
  if (writing_ || !header_written_) {
    // The client has not taken the last document yet: this one is skipped, nothing queues.
    if (++skipped_ >= max_skipped_ticks) {
      gone();
      return;
    }
    arm_tick();
    return;
  }
  send(stats_event(ctx_), false);
  arm_tick();
}

void admin_events_session::send(std::string event, bool last) {
  if (chunked_) {
    char line[24];
    auto n = std::snprintf(line, sizeof line, "%zx\r\n", event.size());
    out_.assign(line, static_cast<std::size_t>(n));
    out_ += event;
    out_ += "\r\n";
  } else {
    out_ = std::move(event);
  }
  writing_ = true;
  asio::async_write(stream_, asio::buffer(out_),
                    [self = shared_from_this(), last](beast::error_code ec, std::size_t) {
                      self->on_write(ec, last);
                    });
}

void admin_events_session::on_write(beast::error_code ec, bool last) {
  writing_ = false;
  if (ec || closed_) {
    gone();
    return;
  }
  if (last) {
    finish();
    return;
  }
  skipped_ = 0;
  if (closing_) {
    send(closed_event_, true);  // the end was decided while this write was out
    return;
  }
  keep_alive_.wrote(std::chrono::milliseconds{ctx_.opts.windowed_keep_alive_ms}, this);
}

void admin_events_session::keep_alive_ping() {
  if (writing_ || closing_ || closed_) {
    return;
  }
  send(std::string{keepalive}, false);
}

void admin_events_session::end(std::string closed_event) {
  if (closing_ || closed_) {
    return;
  }
  closing_ = true;
  closed_event_ = std::move(closed_event);
  ticks_.cancel();
  keep_alive_.cancel();
  expiry_.cancel();
  // A client that stopped reading cannot hold a draining node: the socket closes at the
  // deadline whatever is still unwritten.
  deadline_.expires_after(close_deadline);
  deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) {
      self->gone();
    }
  });
  if (header_written_ && !writing_) {
    send(closed_event_, true);
  }
  // Otherwise the write in flight (the header, or a document) sends it when it completes.
}

void admin_events_session::do_read() {
  read_until_hangup(shared_from_this(), stream_, read_buf_,
                    [](admin_events_session& s) { s.gone(); });
}

void admin_events_session::finish() {
  // `closed` is out: end the chunked body, then the connection.
  closed_ = true;
  ticks_.cancel();
  keep_alive_.cancel();
  expiry_.cancel();
  end_event_stream(shared_from_this(), stream_, chunked_, deadline_, writing_);
}

void admin_events_session::gone() {
  if (closed_) {
    // finish()'s terminator may be stuck on a client that stopped reading (the deadline).
    beast::error_code ec;
    stream_.socket().close(ec);
    return;
  }
  closed_ = true;
  ticks_.cancel();
  keep_alive_.cancel();
  expiry_.cancel();
  deadline_.cancel();
  // Closing aborts a write in flight to a client that stopped reading (its handler sees the
  // error and finds the session closed).
  beast::error_code ec;
  stream_.socket().close(ec);
}

}  // namespace weir::gateway

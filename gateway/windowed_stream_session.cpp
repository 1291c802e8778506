// The windowed stream session (see windowed_stream_session.hpp). Everything runs on the
// connection's I/O thread; the sink calls from actor threads only post, except event(), which
// queues in the inbox and puts the session on its thread's delivery lane once per burst.
//
// The mailbox (§7): events not yet handed to a socket write count against the subscription's
// mailboxCapacity (and their bytes against windowed.maxQueueBytes): in the inbox, and once
// taken, together with those still waiting for the write in flight. An event that finds it full
// ends the stream with `closed{overflow}`: the events it held are dropped, as the reference
// does, since the client must start over from a new snapshot anyway. Nothing is dropped
// silently.
#include "gateway/windowed_stream_session.hpp"

#include <algorithm>
#include <cstdio>

#include "gateway/hangup_read.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/sse_head.hpp"
#include "gateway/stream_refusal.hpp"
#include "gateway/watched_write.hpp"
#include "log/log.hpp"

namespace weir::gateway {
namespace {

constexpr std::string_view changes_open = "event: changes\ndata: [";
constexpr std::string_view changes_close = "]\n\n";
constexpr std::string_view comma = ",";
constexpr std::string_view keepalive = ": keepalive\n\n";
constexpr std::string_view crlf = "\r\n";

}  // namespace

windowed_stream_session::windowed_stream_session(beast::tcp_stream&& stream, server_context& ctx,
                                                 unsigned http_version, std::string correlation_id,
                                                 std::shared_ptr<const core::windowed_request> req,
                                                 std::string caller,
                                                 std::optional<std::int64_t> expires_at)
    : stream_(std::move(stream)),
      ctx_(ctx),
      counted_(ctx.traffic, transport::windowed),
      version_(http_version),
      correlation_id_(std::move(correlation_id)),
      req_(std::move(req)),
      caller_(std::move(caller)),
      deadline_(stream_.get_executor()),
      expires_at_(expires_at),
      expiry_(stream_.get_executor()) {
  kind = transport::windowed;
}

windowed_stream_session::~windowed_stream_session() {
  ctx_.remove(this);
  log::debug("connection closed", {{"transport", "windowed"},
                                   {"correlation", correlation_id_},
                                   {"frames", frames_sent.load(std::memory_order_relaxed)}});
}

void windowed_stream_session::run() {
  log::debug("connection opened",
             {{"transport", "windowed"}, {"correlation", correlation_id_}, {"caller", caller_}});
  stream_.expires_never();
  ctx_.add(shared_from_this());
  auto q = actors::windowed_query::open(ctx_.rt, req_, weak_from_this(), caller_);
  if (!q) {
    on_refused(std::move(q).error());
    return;
  }
  query_ = std::move(q.value());
  // A subscription that cannot open (its data's owner stuck, say) must not hold the client.
  deadline_.expires_after(open_timeout);
  deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->started_ || self->closing_ || self->closed_) {
      return;
    }
    self->on_refused(core::make_error("server.unavailable",
                                      "the subscription did not open within " +
                                          std::to_string(open_timeout.count()) + " s; retry"));
  });
  do_read();
}

void windowed_stream_session::opened(std::shared_ptr<const std::string> snapshot) {
  asio::post(stream_.get_executor(),
             [self = shared_from_this(), s = std::move(snapshot)] { self->on_opened(s); });
}

void windowed_stream_session::event(std::shared_ptr<const std::string> ev) {
  {
    std::lock_guard lock{inbox_mu_};
    if (inbox_closed_ || inbox_overflow_) {
      return;
    }
    inbox_bytes_ += ev->size();
    inbox_.push_back(std::move(ev));
    if (inbox_.size() > req_->mailbox_capacity ||
        inbox_bytes_ > ctx_.opts.windowed_max_queue_bytes) {
      inbox_.clear();
      inbox_bytes_ = 0;
      inbox_overflow_ = true;
    }
    inbox_bytes_seen_.store(inbox_bytes_, std::memory_order_relaxed);
    if (inbox_scheduled_) {
      return;
    }
    inbox_scheduled_ = true;
  }
  if (lane_) {
    lane_->ready(shared_from_this());
  } else {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      self->take_frames();
      self->flush();
    });
  }
}

void windowed_stream_session::take_frames() {
  take_events();
}

void windowed_stream_session::flush() {
  do_write();
}

void windowed_stream_session::close_inbox() {
  std::lock_guard lock{inbox_mu_};
  inbox_closed_ = true;
  inbox_.clear();
  inbox_bytes_ = 0;
  inbox_bytes_seen_.store(0, std::memory_order_relaxed);
}

void windowed_stream_session::closed(std::string_view reason) {
  asio::post(stream_.get_executor(),
             [self = shared_from_this(), r = std::string{reason}] { self->on_closed(r); });
}

void windowed_stream_session::refused(core::error e) {
  asio::post(stream_.get_executor(),
             [self = shared_from_this(), e = std::move(e)] { self->on_refused(e); });
}

void windowed_stream_session::on_refused(core::error e) {
  if (started_ || closed_) {
    return;
  }
  log::info("stream refused",
            {{"transport", "windowed"}, {"code", e.code}, {"correlation", correlation_id_}});
  closed_ = true;
  query_.reset();
  deadline_.cancel();
  write_refusal(shared_from_this(), stream_,
                stream_refusal(status_for(e), version_, correlation_id_, error_body(e)));
}

void windowed_stream_session::on_opened(std::shared_ptr<const std::string> snapshot) {
  if (closed_ || started_) {
    return;
  }
  if (closing_) {
    return;  // the node began draining first: on_closed answers
  }
  started_ = true;
  deadline_.cancel();
  if (expires_at_) {
    // `deauthorized` when the credential expires.
    expiry_.arm(*expires_at_, shared_from_this(), [this] {
      if (!closing_ && !closed_) {
        on_closed("deauthorized");
      }
    });
  }
  // ready is written once the subscription is registered, and flushed with the snapshot (§4).
  head_ = "event: ready\ndata: {}\n\nevent: snapshot\ndata: ";
  snapshot_ = std::move(snapshot);
  set_sse_head(res_, version_, correlation_id_, windowed_sse_content_type);
  chunked_ = set_sse_framing(res_);
  serializer_.emplace(res_);
  writing_ = true;
  watch_for_dead_peer(stream_.socket(), ctx_.opts.send_stall);
  http::async_write_header(stream_, *serializer_,
                           [self = shared_from_this()](beast::error_code ec, std::size_t) {
                             self->on_write(ec, false);
                           });
}

void windowed_stream_session::take_events() {
  std::vector<std::shared_ptr<const std::string>> taken;
  bool overflow = false;
  {
    std::lock_guard lock{inbox_mu_};
    taken.swap(inbox_);
    inbox_bytes_ = 0;
    inbox_bytes_seen_.store(0, std::memory_order_relaxed);
    inbox_scheduled_ = false;
    overflow = inbox_overflow_;
  }
  if (closing_ || closed_) {
    return;
  }
  if (overflow) {
    events_.clear();
    event_bytes_ = 0;
    on_closed("overflow");
    return;
  }
  for (auto& ev : taken) {
    events_.push_back(std::move(ev));
    event_bytes_ += events_.back()->size();
    if (events_.size() > req_->mailbox_capacity ||
        event_bytes_ > ctx_.opts.windowed_max_queue_bytes) {
      events_.clear();
      event_bytes_ = 0;
      on_closed("overflow");
      return;
    }
  }
}

void windowed_stream_session::on_closed(std::string reason) {
  if (closing_ || closed_) {
    return;
  }
  if (reason == "overflow") {
    // This session's own bound, or the query's (its mailbox for this stream) on a reset.
    ctx_.traffic.closed_at(bound_close::windowed_overflow);
  }
  if (started_ && reason != "server_shutdown") {
    log::info("stream closed by the server",
              {{"transport", "windowed"}, {"reason", reason}, {"correlation", correlation_id_}});
  }
  closing_ = true;
  close_inbox();
  query_.reset();
  keep_alive_.cancel();
  deadline_.cancel();
  expiry_.cancel();
  if (!started_) {
    // Not registered yet (the node is draining): nothing was sent, so the answer is an error.
    closing_ = false;
    on_refused(core::make_error("server.unavailable",
                                "this node is shutting down; subscribe again on another"));
    return;
  }
  close_frame_ = "event: closed\ndata: {\"reason\":\"" + reason + "\"}\n\n";
  // When the deadline passes the socket closes: the pending read and any write fail with it.
  // (Not the stream's own timeout: it cannot be set while a read and a write are both pending.)
  deadline_.expires_after(ctx_.opts.windowed_close_deadline);
  deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec) {
      return;
    }
    // Also once `closed` is out: the terminator's write may be stuck on a client that stopped
    // reading, and closing the socket ends it.
    self->gone();
    beast::error_code ignore;
    self->stream_.socket().close(ignore);
  });
  do_write();
}

void windowed_stream_session::do_read() {
  read_until_hangup(shared_from_this(), stream_, read_buf_,
                    [](windowed_stream_session& s) { s.gone(); });
}

void windowed_stream_session::gone() {
  if (closed_) {
    return;
  }
  closed_ = true;
  close_inbox();
  query_.reset();
  keep_alive_.cancel();
  deadline_.cancel();
  expiry_.cancel();
  events_.clear();
  event_bytes_ = 0;
  beast::error_code ec;
  if (!writing_) {
    stream_.socket().close(ec);
  }
}

void windowed_stream_session::do_write() {
  if (writing_ || closed_ || !header_written_) {
    return;
  }
  buffers_.clear();
  in_flight_.clear();
  if (chunked_) {
    buffers_.emplace_back();  // the chunk-size line, filled in below
  }
  std::size_t bytes = 0;
  auto add = [&](std::string_view s) {
    buffers_.push_back(asio::buffer(s.data(), s.size()));
    bytes += s.size();
  };
  std::uint64_t frames = 0;
  if (!head_.empty()) {
    add(head_);
    add(*snapshot_);
    add("\n\n");
    frames += 2;  // ready, snapshot
  }
  if (!events_.empty()) {
    ++frames;  // one `changes` frame carries every event held
  }
  if (!events_.empty()) {
    // Every event held goes out as one frame (§4: a Wait drains the whole mailbox).
    add(changes_open);
    bool first = true;
    for (auto& e : events_) {
      if (!first) {
        add(comma);
      }
      first = false;
      add(*e);
      in_flight_.push_back(std::move(e));
    }
    add(changes_close);
    events_.clear();
    event_bytes_ = 0;
  }
  bool last = false;
  if (closing_) {
    add(close_frame_);
    ++frames;
    last = true;
  } else if (keepalive_due_ && bytes == 0) {
    add(keepalive);
  }
  keepalive_due_ = false;
  if (bytes == 0) {
    return;
  }
  {
    auto i = open_connection::index(transport::windowed);
    ctx_.traffic.frames[i].fetch_add(frames, std::memory_order_relaxed);
    ctx_.traffic.bytes[i].fetch_add(bytes, std::memory_order_relaxed);
    frames_sent.fetch_add(frames, std::memory_order_relaxed);
  }
  if (chunked_) {
    char line[24];
    auto n = std::snprintf(line, sizeof line, "%zx\r\n", bytes);
    chunk_line_.assign(line, static_cast<std::size_t>(n));
    buffers_.front() = asio::buffer(chunk_line_);
    buffers_.push_back(asio::buffer(crlf.data(), crlf.size()));
  }
  writing_ = true;
  beast::error_code ec;
  if (write_now(stream_.socket(), buffers_, ec) || ec) {
    on_write(ec, last);
    return;
  }
  // The client reads slowly or not at all: the rest as the socket drains, and the stream is
  // dropped when the kernel takes nothing of it for http.sendStallTimeoutMs.
  if (!watched_) {
    watched_ = std::make_unique<watched_write>(stream_.get_executor());
  }
  watched_->start(stream_.socket(), buffers_, ctx_.opts.send_stall, shared_from_this(),
                  [this, last](beast::error_code ec) { on_write(ec, last); });
}

void windowed_stream_session::on_write(beast::error_code ec, bool last) {
  writing_ = false;
  in_flight_.clear();
  if (ec || closed_) {
    gone();
    beast::error_code ignore;
    stream_.socket().close(ignore);
    return;
  }
  if (!header_written_) {
    header_written_ = true;  // the head chunk (ready, snapshot) goes next
    do_write();
    return;
  }
  head_.clear();
  snapshot_.reset();
  if (last) {
    finish();
    return;
  }
  if (!closing_) {
    // Not once `closed` is decided: an armed timer would hold this session past its end.
    keep_alive_.wrote(std::chrono::milliseconds{ctx_.opts.windowed_keep_alive_ms}, this);
  }
  do_write();
}

void windowed_stream_session::finish() {
  // The terminal `closed` is out: end the chunked body, then the connection.
  closed_ = true;
  keep_alive_.cancel();
  expiry_.cancel();
  // The close deadline stays armed until the terminator is out (end_event_stream).
  end_event_stream(shared_from_this(), stream_, chunked_, deadline_, writing_);
}

void windowed_stream_session::keep_alive_ping() {
  keepalive_due_ = true;
  do_write();
}

}  // namespace weir::gateway

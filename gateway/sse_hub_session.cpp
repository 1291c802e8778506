// The SSE hub session: arc-hub §1 headers, §7 framing (`data: <json>\n\n` only: no event
// names, ids or comments), §6 keep-alive as JSON Ping data frames, §9 bounds (over the outbound
// bounds the stream is closed), and the connection registry that control POSTs use.
#include "gateway/sse_hub_session.hpp"

#include <algorithm>
#include <cstdio>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "actors/runtime.hpp"
#include "core/hub_codec.hpp"
#include "gateway/frame_batch.hpp"
#include "gateway/hangup_read.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/query_routes.hpp"
#include "gateway/request_identity.hpp"
#include "gateway/sse_head.hpp"
#include "gateway/stream_refusal.hpp"
#include "log/log.hpp"

namespace weir::gateway {
namespace {

constexpr std::string_view data_prefix = "data: ";
constexpr std::string_view event_end = "\n\n";
constexpr std::string_view crlf = "\r\n";
}  // namespace

sse_hub_session::sse_hub_session(beast::tcp_stream&& stream, server_context& ctx,
                                 std::string remote, std::string correlation_id,
                                 unsigned http_version)
    : stream_(std::move(stream)),
      ctx_(ctx),
      counted_(ctx.traffic, transport::sse),
      remote_(std::move(remote)),
      correlation_id_(std::move(correlation_id)),
      version_(http_version),
      expiry_(stream_.get_executor()) {
  kind = transport::sse;
}

sse_hub_session::sse_hub_session(beast::tcp_stream&& stream, server_context& ctx,
                                 std::string remote, unsigned http_version, direct_target direct)
    : sse_hub_session(std::move(stream), ctx, std::move(remote), direct.correlation_id,
                      http_version) {
  direct_ = std::move(direct);
}

sse_hub_session::~sse_hub_session() {
  if (conn_) {
    ctx_.remove_sse(conn_.id(), this);
  }
  ctx_.remove(this);
  log::debug("connection closed", {{"transport", "sse"},
                                   {"correlation", correlation_id_},
                                   {"frames", frames_sent.load(std::memory_order_relaxed)}});
}

void sse_hub_session::run() {
  log::debug("connection opened", {{"transport", "sse"},
                                   {"correlation", correlation_id_},
                                   {"remote", remote_},
                                   {"direct", direct_.has_value()}});
  if (direct_ && direct_->state) {
    run_state();
    return;
  }
  if (direct_) {
    auto& d = *direct_;
    if (d.refused) {
      unauthorized_stream();
      return;
    }
    auto head = "{\"correlationId\":\"" + d.correlation_id + "\"";
    auto q = d.health ? actors::direct_query::open_health(ctx_.rt, *d.health, d.request,
                                                          weak_from_this(), std::move(head), "")
                      : actors::direct_query::open(ctx_.rt, *d.def, d.request, weak_from_this(),
                                                   std::move(head), "");
    if (!q) {
      if (q.error().code == "query.invalid_arguments") {
        refuse(400, invalid_result(d.correlation_id, q.error()));
      } else if (q.error().code.starts_with("auth.")) {
        unauthorized_stream();
      } else {
        // Over the subscription budget (seed 001: "opening an SSE stream … over budget answers
        // 503 with Retry-After: 1") or another failure, answered as a failed QueryResult.
        refuse(503, failed_result(d.correlation_id, q.error().message),
               q.error().code == "subscription.limit");
      }
      return;
    }
    direct_query_ = std::move(q.value());
    ctx_.add(shared_from_this());
    write_stream_header();
    do_read();
    if (auto exp = direct_query_->expires_at()) {
      expiry_.arm(*exp, shared_from_this(), [this] { end_unauthorized(); });
    }
    return;
  }
  actors::connection_info info;
  info.remote_address = remote_;
  info.who = who_;
  info.user_agent = std::move(user_agent_);  // kept once, in the connection directory
  info.protocol = "SSE";
  conn_ = actors::hub_connection::open(ctx_.rt, weak_from_this(), std::move(info));
  if (!conn_) {
    refuse_over_budget();
    return;
  }
  ctx_.add(shared_from_this());
  ctx_.add_sse(conn_.id(), shared_from_this());
  write_stream_header();
  // Connected is the first event on the stream (§2.1).
  enqueue(actors::outbound_frame::text(conn_.connected_frame()));
  do_read();
}

void sse_hub_session::run_state() {
  // An AG-UI state stream: STATE_SNAPSHOT, then STATE_DELTAs; a lagging client is brought back
  // with a fresh STATE_SNAPSHOT instead of being cut off.
  auto& d = *direct_;
  inbox_.resync_on_overflow();  // before the first frame can be pushed
  auto q = actors::direct_query::open_state(ctx_.rt, d.state->space, d.state->object, d.request,
                                            weak_from_this());
  if (!q) {
    refuse(status_for(q.error()), error_body(q.error()));
    return;
  }
  direct_query_ = std::move(q.value());
  ctx_.add(shared_from_this());
  if (d.state->run) {
    // AG-UI's run lifecycle around the state stream: RUN_STARTED is written before the
    // snapshot, whatever reaches the queue first; RUN_FINISHED ends the run after
    // query.agentRunMaxMs (or RUN_ERROR earlier, as on the state stream).
    const auto& run = *d.state->run;
    boost::json::object started{
        {"type", "RUN_STARTED"}, {"threadId", run.thread_id}, {"runId", run.run_id}};
    if (run.parent_run_id) {
      started["parentRunId"] = *run.parent_run_id;
    }
    run_ = std::make_unique<agent_run_state>(agent_run_state{
        std::string{data_prefix} + boost::json::serialize(started) + std::string{event_end}, true,
        asio::steady_timer{stream_.get_executor()}});
    run_->timer.expires_after(std::chrono::milliseconds{ctx_.rt.hub().agent_run_max_ms});
    run_->timer.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) {
        self->end_run();
      }
    });
  }
  write_stream_header();
  do_read();
  if (d.state->expires_at) {
    expiry_.arm(*d.state->expires_at, shared_from_this(), [this] { end_unauthorized(); });
  }
}

void sse_hub_session::cancel_timers() {
  expiry_.cancel();
  if (run_) {
    run_->timer.cancel();
  }
}

void sse_hub_session::end_run() {
  if (closing_ || closed_) {
    return;
  }
  // Nothing more is taken in (closing_, the inbox closed), but the query stays open until the
  // session goes: its liveness flag is what keeps the frames already queued from being
  // dropped, and they go out before RUN_FINISHED, so the client's state is the document's as
  // of the end. A client whose state is not that (no snapshot queued yet, or a lag whose fresh
  // snapshot has not come, or a queue with no room for one more event) gets RUN_ERROR
  // `stream.lagged` instead, superseding what waits: a RUN_FINISHED then would leave it
  // holding a state it cannot tell is stale.
  drain_inbox();  // what the query produced before the end goes out with the run
  if (closing_ || closed_) {
    return;
  }
  const auto& run = *direct_->state->run;
  auto lagged_error = [] {
    return actors::outbound_frame::text(
        R"({"type":"RUN_ERROR","message":"the run ended before this client had the document's )"
        R"(current state; run again","code":"stream.lagged"})");
  };
  if (!run_->baseline_queued || awaiting_baseline_) {
    queue_.push_superseding(lagged_error(), ctx_.rt.hub());
  } else {
    auto finished = actors::outbound_frame::text(boost::json::serialize(boost::json::object{
        {"type", "RUN_FINISHED"}, {"threadId", run.thread_id}, {"runId", run.run_id}}));
    if (queue_.push(std::move(finished), ctx_.rt.hub()) != outbound_queue::push_result::queued) {
      queue_.push_superseding(lagged_error(), ctx_.rt.hub());
    }
  }
  closing_ = true;
  finish_after_queue_ = true;
  inbox_.close();
  keep_alive_.cancel();
  expiry_.cancel();
  if (!writing_ && header_done_) {
    do_write();
  }
}

void sse_hub_session::lagged() {
  // On the session's I/O thread. What is queued and not yet writing is stale now: the next frame
  // written is the baseline asked for here, and every delta after it continues from it.
  if (closing_ || closed_ || !direct_query_) {
    return;
  }
  awaiting_baseline_ = true;
  queue_.drop_unstarted();
  direct_query_->request_baseline();
}

void sse_hub_session::write_stream_header() {
  stream_.expires_never();
  // Data the peer does not acknowledge, or a peer gone silent, fails the connection.
  watch_for_dead_peer(stream_.socket(), ctx_.opts.send_stall);
  set_sse_head(res_, version_, correlation_id_);
  chunked_ = set_sse_framing(res_);
  serializer_.emplace(res_);
  writing_ = true;
  http::async_write_header(
      stream_, *serializer_,
      beast::bind_front_handler(&sse_hub_session::on_header, shared_from_this()));
}

void sse_hub_session::refuse(unsigned status, std::string body, bool retry_after) {
  log::info("stream refused", {{"transport", "sse"},
                               {"status", status},
                               {"code", error_code_of(body)},
                               {"correlation", correlation_id_},
                               {"remote", remote_}});
  auto res = stream_refusal(status, version_, correlation_id_, std::move(body));
  if (retry_after) {
    res->set(http::field::retry_after, "1");
  }
  write_refusal(shared_from_this(), stream_, std::move(res));
}

void sse_hub_session::refuse_over_budget() {
  // §9: over the hub connection budget the stream GET answers 503, Retry-After: 1, no body.
  ctx_.traffic.closed_at(bound_close::hub_capacity);
  auto res = stream_refusal(503, version_, correlation_id_);
  res->set(http::field::retry_after, "1");
  write_refusal(shared_from_this(), stream_, std::move(res));
}

void sse_hub_session::on_header(beast::error_code ec, std::size_t) {
  writing_ = false;
  if (ec) {
    closed_ = true;
    return;
  }
  header_done_ = true;
  if (closing_ && !(finish_after_queue_ && !queue_.empty())) {
    finish();
    return;
  }
  arm_keep_alive();
  do_write();
}

void sse_hub_session::do_read() {
  read_until_hangup(shared_from_this(), stream_, read_buf_, [](sse_hub_session& s) {
    s.closed_ = true;
    s.keep_alive_.cancel();
    s.cancel_timers();
    s.inbox_.close();
    if (!s.writing_) {
      s.queue_.clear();
    }
  });
}

void sse_hub_session::send(actors::outbound_frame frame) {
  push_frame(std::move(frame));
}

bool sse_hub_session::admit(const actors::outbound_frame& f) {
  if (awaiting_baseline_) {
    if (!f.baseline) {
      return false;  // older than the baseline on its way
    }
    awaiting_baseline_ = false;
  }
  return true;
}

void sse_hub_session::flush() {
  if (!writing_ && !closed_ && header_done_ && !queue_.empty()) {
    do_write();
  }
}

void sse_hub_session::enqueue(actors::outbound_frame f) {
  if (closing_ || closed_) {
    return;
  }
  // A state stream's snapshot supersedes whatever waits before it, and must get through even
  // when the batch in flight still fills the queue: it is how a lagging client comes back.
  bool state = direct_ && direct_->state;
  bool baseline = f.baseline;
  auto pushed = state && baseline ? queue_.push_superseding(std::move(f), ctx_.rt.hub())
                                  : queue_.push(std::move(f), ctx_.rt.hub());
  switch (pushed) {
    case outbound_queue::push_result::queued:
      if (run_ && baseline) {
        run_->baseline_queued = true;
      }
      if (!writing_ && header_done_ && !taking_) {
        do_write();
      }
      break;
    case outbound_queue::push_result::stale:
      break;
    case outbound_queue::push_result::full:
      if (state) {
        // A state stream drops what the client has not taken and starts it again from a
        // fresh snapshot (json-patch decision 4).
        inbox_.lag();
        lagged();
        break;
      }
      [[fallthrough]];
    case outbound_queue::push_result::too_large:
      // §9: on SSE the stream is closed; the client reconnects to a fresh baseline. (A state
      // stream's frame over max_outbound_frame_bytes ends it the same way.)
      close_at(bound_close::outbound_queue_full, 1013, "Outbound queue full");
      break;
  }
}

bool sse_hub_session::write_batch() {
  if (writing_ || closed_) {
    return false;  // the write in flight takes what is queued when it completes
  }
  // Every queued frame (up to a bound) goes out as events of one chunk, in one gather write.
  // The piece list is this thread's scratch, not the session's: the write is usually done
  // before this returns, and an idle stream then holds none of it.
  thread_local std::vector<asio::const_buffer> pieces;
  std::size_t bytes = 0;
  const bool any = gather_batch(
      queue_, pieces, ctx_.traffic, transport::sse, frames_sent,
      [&] {
        bytes = 0;
        pieces.emplace_back();  // the chunk-size line, filled in below
        if (!run_ || !run_->started_pending) {
          return false;
        }
        run_->started_pending = false;
        pieces.push_back(asio::buffer(run_->started));
        bytes += run_->started.size();
        return true;
      },
      [&](const actors::outbound_frame& f) {
        pieces.push_back(asio::buffer(data_prefix.data(), data_prefix.size()));
        if (f.head) {
          pieces.push_back(asio::buffer(*f.head));
        }
        if (f.body) {
          pieces.push_back(asio::buffer(*f.body));
        }
        pieces.push_back(asio::buffer(f.tail.data(), f.tail.size()));
        pieces.push_back(asio::buffer(event_end.data(), event_end.size()));
        auto size = data_prefix.size() + f.size() + event_end.size();
        bytes += size;
        return size;
      });
  if (!any) {
    return false;
  }
  char size_line[24];
  int n = 0;
  if (chunked_) {
    n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", bytes);
    pieces.front() = asio::buffer(size_line, static_cast<std::size_t>(n));
    pieces.push_back(asio::buffer(crlf.data(), crlf.size()));
  }  // else: an HTTP/1.0 body is the events themselves (the first piece stays empty)
  // The size line leaves the stack: send_batch copies what the socket does not take at once.
  return send_batch(pieces, size_line, static_cast<std::size_t>(n));
}

void sse_hub_session::lost() {
  closed_ = true;
  keep_alive_.cancel();
  beast::error_code ignored;
  stream_.socket().close(ignored);
}

bool sse_hub_session::wrote(beast::error_code ec) {
  if (!end_batch(ec)) {
    return false;
  }
  if (closing_) {
    if (finish_after_queue_ && !queue_.empty()) {
      return true;
    }
    finish();
    return false;
  }
  arm_keep_alive();
  return true;
}

void sse_hub_session::close(std::uint16_t code, std::string reason) {
  close_at(std::nullopt, code, std::move(reason));
}

void sse_hub_session::close_at(std::optional<bound_close> bound, std::uint16_t code,
                               std::string reason) {
  // SSE has no close code: the stream just ends (§9, §13); the reason is for the WebSocket
  // sibling of this interface. An AG-UI state stream says why first, with AG-UI's terminal
  // RUN_ERROR event.
  asio::post(
      stream_.get_executor(), [self = shared_from_this(), bound, code, reason = std::move(reason)] {
        if (self->closing_ || self->closed_) {
          return;
        }
        self->closing_ = true;
        if (bound) {
          self->ctx_.traffic.closed_at(*bound);
        }
        if (code != 1000 && code != 1001) {
          log::info("connection closed by the server", {{"transport", "sse"},
                                                        {"closeCode", code},
                                                        {"reason", reason},
                                                        {"correlation", self->correlation_id_},
                                                        {"remote", self->remote_}});
        }
        self->inbox_.close();
        self->keep_alive_.cancel();
        self->cancel_timers();
        self->queue_.drop_unstarted();
        if (self->direct_ && self->direct_->state) {
          const char* error = code == 1001   ? "server.shutdown"
                              : code == 1013 ? "stream.overflow"
                                             : "server.unavailable";
          self->queue_.push_superseding(
              actors::outbound_frame::text(boost::json::serialize(boost::json::object{
                  {"type", "RUN_ERROR"}, {"message", reason}, {"code", error}})),
              self->ctx_.rt.hub());
          self->finish_after_queue_ = true;
          if (!self->writing_ && self->header_done_) {
            self->do_write();
          }
          return;
        }
        if (!self->writing_ && self->header_done_) {
          self->finish();
        }
      });
}

void sse_hub_session::finish() {
  if (!chunked_) {
    // HTTP/1.0: closing the connection is what ends the body.
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
    return;
  }
  // The last chunk ends the response; then the connection goes.
  writing_ = true;
  static constexpr std::string_view last_chunk = "0\r\n\r\n";
  last_pieces_.assign(1, asio::buffer(last_chunk.data(), last_chunk.size()));
  watch(last_pieces_, [this](beast::error_code ec) {
    writing_ = false;
    closed_ = true;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  });
}

void sse_hub_session::unauthorized_stream() {
  // arc-hub §10: "When unauthorized, a single QueryResult with isAuthorized:false is sent, then
  // the stream ends" (§7: one final `data:` line), as when a credential expires mid-stream.
  log::info("stream refused", {{"transport", "sse"},
                               {"status", 200},
                               {"code", "auth.unauthorized"},
                               {"correlation", correlation_id_},
                               {"remote", remote_}});
  ctx_.add(shared_from_this());
  write_stream_header();
  do_read();
  end_unauthorized();
}

void sse_hub_session::end_unauthorized() {
  if (closing_ || closed_) {
    return;
  }
  direct_query_.reset();  // nothing more of the query: its liveness flag is cleared first
  if (run_) {
    run_->timer.cancel();
  }
  if (direct_ && direct_->state) {
    // AG-UI has no unauthorized event; RUN_ERROR is its terminal error. It supersedes whatever
    // waits (those frames are dead: the query's liveness flag was cleared), so a full queue
    // cannot lose it.
    queue_.push_superseding(
        actors::outbound_frame::text(
            R"({"type":"RUN_ERROR","message":"the credential expired: sign in again and )"
            R"(reconnect","code":"auth.expired"})"),
        ctx_.rt.hub());
    if (!writing_ && header_done_) {
      do_write();
    }
  } else {
    enqueue(actors::outbound_frame::text(unauthorized_result(correlation_id_)));
  }
  closing_ = true;
  finish_after_queue_ = true;
  inbox_.close();
  keep_alive_.cancel();
  if (!writing_ && header_done_ && queue_.empty()) {
    finish();
  }
}

void sse_hub_session::arm_keep_alive() {
  if (direct_) {
    return;  // a direct stream carries QueryResults only (§10)
  }
  keep_alive_.wrote(std::chrono::milliseconds{ctx_.rt.hub().keep_alive_interval_ms}, this);
}

}  // namespace weir::gateway

// The named-query routes of the HTTP gateway (arc-hub §1, §10): introspection, each query's
// route as an HTTP snapshot or a direct SSE stream. http_session members; the route table is
// http_routes.cpp, the pure request parsing query_routes.cpp.
#include "actors/direct_query.hpp"
#include "actors/query_catalog.hpp"
#include "actors/runtime.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/http_session.hpp"
#include "gateway/query_routes.hpp"
#include "gateway/sse_hub_session.hpp"

namespace weir::gateway {

void http_session::serve_introspection(http::request<http::string_body>&, route_match&) {
  respond(200, introspection_json(ctx_.rt.catalog()));
}

bool http_session::wants_direct_stream(const http::request<http::string_body>& req) const {
  return !head_ &&
         header(req, http::field::accept).value_or(std::string_view{}).find("text/event-stream") !=
             std::string_view::npos;
}

void http_session::serve_query(http::request<http::string_body>& req, route_match& m) {
  if (wants_direct_stream(req)) {
    // Direct SSE (§10): bare QueryResult events on this query's route. A refused credential is
    // answered first, on the stream (the route let it through for that), whatever the arguments.
    if (id_.refused) {
      handed_over<sse_hub_session>(
          std::move(stream_), ctx_, id_.client, version_,
          direct_target{m.query_def, {}, std::nullopt, correlation_, id_.refused, {}})
          ->run();
      return;
    }
    auto parsed = parse_route_request(m.query);
    if (!parsed) {
      respond(400, invalid_result(correlation_, parsed.error()));
      return;
    }
    parsed->direct.caller = caller_of(id_);
    parsed->direct.who = id_.who;
    handed_over<sse_hub_session>(
        std::move(stream_), ctx_, id_.client, version_,
        direct_target{
            m.query_def, std::move(parsed->direct), std::nullopt, correlation_, std::nullopt, {}})
        ->run();
    return;
  }
  handle_snapshot(*m.query_def, m.query);
}

/// Receives the first emission of a snapshot request's direct query and hands it to the
/// session's I/O thread.
class http_session::snapshot_sink : public actors::frame_sink {
 public:
  explicit snapshot_sink(std::weak_ptr<http_session> session) : session_(std::move(session)) {}
  void send(actors::outbound_frame f) override {
    if (auto s = session_.lock()) {
      asio::post(s->stream_.get_executor(), [s, f = std::move(f)] { s->on_snapshot(f); });
    }
  }
  /// The query ended before its first emission (its unit could not load, a bound refused it):
  /// answered at once with the reason, rather than 202 once the wait runs out.
  void close(std::uint16_t, std::string reason) override {
    if (auto s = session_.lock()) {
      asio::post(s->stream_.get_executor(),
                 [s, reason = std::move(reason)] { s->on_snapshot_failed(reason); });
    }
  }

 private:
  std::weak_ptr<http_session> session_;
};

void http_session::handle_snapshot(const core::query_definition& def, std::string_view query) {
  // arc-hub §1 "HTTP snapshot": the query's current result, 200; 202 isReady:false when no value
  // comes in time; with waitForFirstResult, 408 when none comes within its timeout.
  auto parsed = parse_route_request(query);
  if (!parsed) {
    respond(400, invalid_result(correlation_, parsed.error()));
    return;
  }
  parsed->direct.caller = caller_of(id_);
  parsed->direct.who = id_.who;
  snapshot_sink_ = std::make_shared<snapshot_sink>(weak_from_this());
  auto q = actors::direct_query::open(ctx_.rt, def, std::move(parsed->direct), snapshot_sink_,
                                      "{\"correlationId\":\"" + correlation_ + "\"", "");
  if (!q) {
    const auto& e = q.error();
    snapshot_sink_.reset();
    if (e.code == "query.invalid_arguments") {
      respond(400, invalid_result(correlation_, e));
    } else if (e.code.starts_with("auth.")) {
      challenge_ = auth_status(e) == 401 ? bearer_challenge(e) : "";
      respond(auth_status(e), unauthorized_result(correlation_));
    } else {
      if (e.code == "subscription.limit") {
        retry_after_ = "1";  // as a stream over budget gets (seed 001): the budget frees up
      }
      respond(503, failed_result(correlation_, e.message));
    }
    return;
  }
  direct_ = std::move(q.value());
  snapshot_waiting_ = true;
  snapshot_wait_for_first_ = parsed->wait_for_first_result;
  auto wait = std::chrono::milliseconds{2000};
  if (parsed->wait_for_first_result) {
    wait = std::chrono::milliseconds{
        static_cast<std::int64_t>(parsed->wait_timeout_s.value_or(30) * 1000)};
  }
  snapshot_timer_.expires_after(wait);
  snapshot_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || !self->snapshot_waiting_) {
      return;
    }
    self->snapshot_waiting_ = false;
    self->direct_.reset();
    self->snapshot_sink_.reset();
    if (self->snapshot_wait_for_first_) {
      self->respond(408, not_ready_result(self->correlation_));
    } else {
      self->respond(202, not_ready_result(self->correlation_));
    }
  });
}

void http_session::on_snapshot_failed(const std::string& reason) {
  if (!snapshot_waiting_) {
    return;
  }
  snapshot_waiting_ = false;
  snapshot_timer_.cancel();
  direct_.reset();
  snapshot_sink_.reset();
  respond(503, failed_result(correlation_, reason));
}

void http_session::on_snapshot(const actors::outbound_frame& f) {
  if (!snapshot_waiting_) {
    return;
  }
  snapshot_waiting_ = false;
  snapshot_timer_.cancel();
  std::string body;
  body.reserve(f.size());
  if (f.head) {
    body.append(*f.head);
  }
  if (f.body) {
    body.append(*f.body);
  }
  body.append(f.tail);
  direct_.reset();  // one emission is all a snapshot needs
  snapshot_sink_.reset();
  respond(200, std::move(body));
}

}  // namespace weir::gateway

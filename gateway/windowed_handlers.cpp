// The windowed API's routes (windowed-subscribe §1–§3): `…/query` answered as one snapshot,
// `…/subscribe` handed to a windowed_stream_session. http_session members; the route table is
// http_routes.cpp, the pure path matching windowed_routes.cpp.
#include "actors/runtime.hpp"
#include "actors/windowed_query.hpp"
#include "core/record_rules.hpp"
#include "core/space_rules.hpp"
#include "core/windowed_request.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/http_session.hpp"
#include "gateway/windowed_stream_session.hpp"

namespace weir::gateway {

/// Receives the answer of a windowed `…/query` and hands it to the session's I/O thread.
class http_session::windowed_snapshot_sink : public actors::windowed_sink {
 public:
  explicit windowed_snapshot_sink(std::weak_ptr<http_session> session)
      : session_(std::move(session)) {}
  void opened(std::shared_ptr<const std::string> snapshot) override {
    post(std::move(snapshot), std::nullopt);
  }
  void event(std::shared_ptr<const std::string>) override {}
  void closed(std::string_view) override {
    post(nullptr,
         core::make_error("server.unavailable", "the query ended before it answered; retry"));
  }
  void refused(core::error e) override { post(nullptr, std::move(e)); }

 private:
  void post(std::shared_ptr<const std::string> body, std::optional<core::error> e) {
    if (auto s = session_.lock()) {
      asio::post(s->stream_.get_executor(), [s, body = std::move(body), e = std::move(e)] {
        s->on_windowed_snapshot(body, e);
      });
    }
  }
  std::weak_ptr<http_session> session_;
};

void http_session::serve_windowed(http::request<http::string_body>& req, route_match& m) {
  // windowed-subscribe §2's order: the space (1), then the body (2-8), then the subscription.
  // An oversized body (m.body_too_large) is answered 413 once the space is known to exist: an
  // unknown space answers 404 whatever the body.
  auto route = std::move(*m.windowed);
  if (ctx_.draining) {
    respond(503, error_body(core::make_error("server.unavailable",
                                             "this node is shutting down; retry on another")));
    return;
  }
  if (auto ok = core::validate_id(route.space, "space"); !ok) {
    respond(404, error_body(space_not_found(route.space)));
    return;
  }
  auto self = shared_from_this();
  auto body = std::move(req.body());
  auto space = route.space;
  ctx_.rt.space_exists(space, [self, body = std::move(body), route = std::move(route),
                               too_large = m.body_too_large](bool exists) mutable {
    asio::post(self->stream_.get_executor(), [self, exists, too_large, body = std::move(body),
                                              route = std::move(route)]() mutable {
      if (!exists) {
        self->respond(404, error_body(space_not_found(route.space)));
      } else if (too_large) {
        self->respond(413, error_body(body_too_large(self->ctx_.opts.max_body_bytes)));
      } else {
        self->windowed_in_space(std::move(body), std::move(route));
      }
    });
  });
}

void http_session::windowed_in_space(std::string body, windowed_route route) {
  auto parsed = core::parse_windowed_request(route.scope, route.subscribe, route.space,
                                             std::string_view{body});
  if (!parsed) {
    respond(status_for(parsed.error()), error_body(parsed.error()));
    return;
  }
  auto req = std::make_shared<const core::windowed_request>(std::move(parsed.value()));
  auto caller = caller_of(id_);
  if (route.subscribe) {
    // The stream takes the connection over; this session ends here. It ends with
    // `deauthorized` when the credential it was opened with expires (Decision 5), whether or
    // not its space's rule needed one: a request with that credential is refused from then on.
    handed_over<windowed_stream_session>(std::move(stream_), ctx_, version_, correlation_,
                                         std::move(req), std::move(caller), id_.who->expires_at)
        ->run();
    return;
  }
  windowed_sink_ = std::make_shared<windowed_snapshot_sink>(weak_from_this());
  auto q = actors::windowed_query::open(ctx_.rt, std::move(req), windowed_sink_, caller);
  if (!q) {
    windowed_sink_.reset();
    respond(status_for(q.error()), error_body(q.error()));
    return;
  }
  windowed_ = std::move(q.value());
  // The timer keeps this session alive until the answer comes; a query that never answers
  // (its owner went away unnoticed) answers 503 instead of holding the request forever.
  snapshot_timer_.expires_after(std::chrono::seconds{30});
  snapshot_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || !self->windowed_) {
      return;
    }
    self->on_windowed_snapshot(nullptr, core::make_error("server.unavailable",
                                                         "the query did not answer in time; "
                                                         "retry"));
  });
}

void http_session::on_windowed_snapshot(std::shared_ptr<const std::string> body,
                                        std::optional<core::error> error) {
  if (!windowed_) {
    return;  // answered already
  }
  windowed_.reset();
  windowed_sink_.reset();
  snapshot_timer_.cancel();
  if (error) {
    respond(status_for(*error), error_body(*error));
  } else {
    respond(200, *body);
  }
}

}  // namespace weir::gateway

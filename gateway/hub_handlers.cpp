// The Arc hubs' routes and the health feed (arc-hub §1, §8, §10, §11): WebSocket upgrades
// handed to ws_hub_session (the hub, the health feed, each named query), the SSE hub's stream
// handed to sse_hub_session and its control POSTs routed to the connection's holder, HEAD
// probes, and the health feed's snapshot. http_session members; the route table is
// http_routes.cpp.
#include "actors/health_watch.hpp"
#include "actors/query_catalog.hpp"
#include "actors/runtime.hpp"
#include "core/query_health.hpp"
#include "core/query_result.hpp"
#include "core/sse_control.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/http_session.hpp"
#include "gateway/query_routes.hpp"
#include "gateway/sse_control_router.hpp"
#include "gateway/sse_hub_session.hpp"
#include "gateway/ws_hub_session.hpp"

namespace weir::gateway {

namespace {

/// Which connections a caller's health feed shows.
core::health_scope health_scope_of(const request_identity& id) {
  return core::health_scope{id.who->tenant, id.client, id.who->subject};
}

/// Why `who` may not open a hub connection (auth.hubs), if it may not.
std::optional<core::error> hub_refusal(const server_context& ctx, const core::principal& who) {
  if (auto ok = core::check_access(ctx.opts.hubs, who); !ok) {
    return ok.error();
  }
  return std::nullopt;
}

}  // namespace

void http_session::serve_probe(http::request<http::string_body>&, route_match&) {
  // A probe (arc-hub decision 5): the stream's headers, no body, no connection allocated.
  respond_probe();
}

void http_session::serve_ws_hub_without_upgrade(http::request<http::string_body>&, route_match&) {
  respond(426,
          error_body(core::make_error("request.upgrade_required",
                                      "this is the WebSocket hub: send a WebSocket upgrade "
                                      "(Connection: Upgrade, Upgrade: websocket)")),
          false, {}, "websocket");
}

void http_session::serve_ws_hub(http::request<http::string_body>& req, route_match&) {
  stream_.expires_never();
  handed_over<ws_hub_session>(stream_.release_socket(), ctx_, correlation_, id_)
      ->run(std::move(req));
}

void http_session::serve_ws_health(http::request<http::string_body>& req, route_match&) {
  // The health feed over a direct WebSocket (arc-hub §11, §10).
  direct_target target{nullptr, {}, health_scope_of(id_), correlation_, id_.refused, {}};
  target.request.caller = caller_of(id_);
  target.request.who = id_.who;
  stream_.expires_never();
  handed_over<ws_hub_session>(stream_.release_socket(), ctx_, std::move(target), id_)
      ->run(std::move(req));
}

void http_session::serve_ws_query(http::request<http::string_body>& req, route_match& m) {
  // The direct routes read their arguments from the query string, access_token aside.
  std::string args_text{m.query};
  if (ctx_.opts.auth && ctx_.opts.auth->options().query_token) {
    args_text = core::strip_access_token(m.query);
  }
  auto parsed = parse_route_request(args_text);
  if (!parsed) {
    respond(400, invalid_result(correlation_, parsed.error()));
    return;
  }
  parsed->direct.caller = caller_of(id_);
  parsed->direct.who = id_.who;
  stream_.expires_never();
  handed_over<ws_hub_session>(
      stream_.release_socket(), ctx_,
      direct_target{
          m.query_def, std::move(parsed->direct), std::nullopt, correlation_, id_.refused, {}},
      id_)
      ->run(std::move(req));
}

void http_session::serve_ws_not_found(http::request<http::string_body>&, route_match& m) {
  respond(404, error_body(core::make_error("route.not_found",
                                           "no WebSocket endpoint at " + std::string{m.path})));
}

void http_session::serve_sse_hub(http::request<http::string_body>& req, route_match&) {
  if (auto e = id_.refused ? id_.refused : hub_refusal(ctx_, *id_.who)) {
    challenge_ = auth_status(*e) == 401 ? bearer_challenge(*e) : "";
    respond_empty(auth_status(*e));
    return;
  }
  // The stream takes the connection over; this session ends here.
  auto stream =
      handed_over<sse_hub_session>(std::move(stream_), ctx_, id_.client, correlation_, version_);
  stream->set_principal(id_.who);
  stream->set_user_agent(
      std::string{header(req, http::field::user_agent).value_or(std::string_view{})});
  stream->run();
}

void http_session::serve_sse_control(http::request<http::string_body>& req, route_match& m) {
  // arc-hub §8, in order (the path's 404, 405, seed 001's Origin 403 and draining's 503 are the
  // route's): 415, 413, 400, 404, late 400, then the state machine's answer.
  if (!core::sse_control_content_type_ok(header(req, http::field::content_type))) {
    respond_empty(415);
    return;
  }
  bool subscribe = m.path == "/.cratis/queries/sse/subscribe";
  const auto& hub = ctx_.rt.hub();
  if (m.body_too_large ||
      req.body().size() >
          core::sse_control_body_limit(ctx_.opts.max_body_bytes, hub.max_inbound_frame_bytes)) {
    respond_empty(413);
    return;
  }
  auto parsed = core::parse_sse_control(
      subscribe ? core::sse_control_kind::subscribe : core::sse_control_kind::unsubscribe,
      req.body());
  if (!parsed) {
    respond_empty(400);
    return;
  }
  if (id_.refused) {
    respond_empty(404);  // §8 step 4: authentication failed reads as an unknown connection
    return;
  }
  auto self = shared_from_this();
  route_sse_control(ctx_,
                    actors::control_request{subscribe, req.body(), id_.client,
                                            core::principal_to_json(*id_.who), id_.who},
                    parsed->control.connection_id, [self](unsigned status) {
                      asio::post(self->stream_.get_executor(),
                                 [self, status] { self->respond_empty(status); });
                    });
}

void http_session::serve_health(http::request<http::string_body>& req, route_match&) {
  // arc-hub §11: the health feed is an observable query like any other: a snapshot on a plain
  // GET (always ready here, so 200), a stream with Accept: text/event-stream. Scoped to the
  // caller: an anonymous caller sees the connections opened from its own address and tenant.
  // The route checked the method and Origin (the caller's connections, as on the hubs).
  core::health_scope scope = health_scope_of(id_);
  bool stream = wants_direct_stream(req);
  std::optional<core::error> refused = id_.refused;
  if (!refused && ctx_.opts.auth && !id_.who->authenticated()) {
    // Decision 7: with authentication on, the feed needs a signed-in caller.
    refused = core::make_error("auth.required",
                               "the health feed shows a caller its own connections: sign in first");
  }
  if (refused && !stream) {
    challenge_ = auth_status(*refused) == 401 ? bearer_challenge(*refused) : "";
    respond(auth_status(*refused), unauthorized_result(correlation_));
    return;
  }
  if (stream) {
    // Refused: the stream answers it (one QueryResult with isAuthorized:false, arc-hub §10).
    direct_target target{nullptr, {}, scope, correlation_, std::move(refused), {}};
    target.request.caller = caller_of(id_);
    target.request.who = id_.who;
    handed_over<sse_hub_session>(std::move(stream_), ctx_, id_.client, version_, std::move(target))
        ->run();
    return;
  }
  auto self = shared_from_this();
  actors::health_watch::current(ctx_.rt, scope, [self](std::string data) {
    asio::post(self->stream_.get_executor(), [self, data = std::move(data)] {
      self->respond(
          200, core::encode_bare_query_result(self->correlation_,
                                              core::encode_query_result_body(&data, nullptr, {})));
    });
  });
}

}  // namespace weir::gateway

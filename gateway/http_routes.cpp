// The HTTP gateway's route table and the checks it declares. Every request a session reads goes
// through dispatch(): the first route whose pattern, transport and methods take it, then that
// route's checks in one order — the matcher's own refusal, 405, Origin, credentials, the
// space's rule, draining — each answered in the route's form, then its handler.
// docs/protocols.md describes each route; docs/openapi.yaml lists them.
#include <array>

#include "actors/query_catalog.hpp"
#include "actors/runtime.hpp"
#include "core/query_health.hpp"
#include "core/url.hpp"
#include "gateway/admin_ui_routes.hpp"
#include "gateway/cross_unit_batch.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/http_session.hpp"
#include "gateway/query_routes.hpp"

namespace weir::gateway {

namespace {

constexpr std::string_view sse_control_prefix = "/.cratis/queries/sse/";

template <std::size_t N>
struct fixed_path {
  char text[N];
  constexpr fixed_path(const char (&s)[N]) {  // NOLINT: a literal, implicitly
    for (std::size_t i = 0; i < N; ++i) {
      text[i] = s[i];
    }
  }
};

/// Matches one exact path.
template <fixed_path P>
bool exactly(const server_context&, std::string_view, route_match& m) {
  return m.path == std::string_view{P.text, sizeof P.text - 1};
}

bool named_query(const server_context& ctx, std::string_view, route_match& m) {
  m.query_def = ctx.rt.catalog().by_route(m.path);
  return m.query_def != nullptr;
}

bool admin_file(const server_context&, std::string_view, route_match& m) {
  return is_admin_ui_path(m.path);
}

bool any_path(const server_context&, std::string_view, route_match&) {
  return true;
}

bool sse_control(const server_context&, std::string_view, route_match& m) {
  if (!m.path.starts_with(sse_control_prefix)) {
    return false;
  }
  if (m.path != "/.cratis/queries/sse/subscribe" && m.path != "/.cratis/queries/sse/unsubscribe") {
    m.refusal = core::make_error("route.not_found", "no SSE control at this path");
  }
  return true;
}

/// A family's matcher answer: nullopt (not the family's path), a refusal, or the family's route,
/// kept in `m` by `keep`.
template <class Route, class Keep>
bool take(std::optional<core::result<Route>> found, route_match& m, Keep keep) {
  if (!found) {
    return false;
  }
  if (!*found) {
    m.refusal = found->error();
  } else {
    keep(std::move(found->value()));
  }
  return true;
}

bool state_stream(const server_context&, std::string_view method, route_match& m) {
  return take(match_state_route(method, m.path), m, [&m](state_route r) {
    m.space = r.space;
    m.state = std::move(r);
  });
}

bool windowed(const server_context&, std::string_view method, route_match& m) {
  return take(match_windowed_route(method, m.path), m, [&m](windowed_route r) {
    m.space = r.space;
    m.windowed = std::move(r);
  });
}

bool cross_unit_batch(const server_context&, std::string_view method, route_match& m) {
  return take(match_cross_unit_batch(method, m.path), m,
              [&m](std::string space) { m.space = std::move(space); });
}

/// The write API takes whatever no route before it took: its matcher answers 404
/// route.not_found for paths it does not know.
bool write_api(const server_context&, std::string_view method, route_match& m) {
  auto w = match_write_route(method, m.path);
  if (!w) {
    m.refusal = w.error();
  } else {
    m.space = w->cmd.space;
    m.write = std::move(w.value());
  }
  return true;
}

using R = http_session;
using T = route_transport;
constexpr auto next = other_methods::next_route;
constexpr auto refused = other_methods::not_allowed;
constexpr auto envelope = answer_form::envelope;
constexpr auto empty = answer_form::empty;
constexpr auto trusted = origin_rule::trusted;

}  // namespace

std::uint8_t method_bit(std::string_view method) {
  static constexpr std::array<std::pair<std::string_view, std::uint8_t>, 6> bits{{
      {"GET", m_get},
      {"HEAD", m_head},
      {"POST", m_post},
      {"PUT", m_put},
      {"PATCH", m_patch},
      {"DELETE", m_delete},
  }};
  for (const auto& [name, bit] : bits) {
    if (name == method) {
      return bit;
    }
  }
  return 0;
}

// clang-format off
// One row per route, tried in order. Columns: pattern, matcher, transport, methods, other
// methods, Allow, the 405's message, refusal form, Origin, credentials, space rule, draining,
// oversized body, handler.
std::span<const http_route> http_session::routes() {
  static const http_route table[] = {
    // The Arc SSE hub and its control POSTs (arc-hub §8): empty answers; HEAD is a probe.
    {"/.cratis/queries/sse", exactly<"/.cratis/queries/sse">, T::any, m_head, next, {}, {},
     empty, origin_rule::any, credential_rule::handler, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_probe},
    {"/.cratis/queries/sse", exactly<"/.cratis/queries/sse">, T::any, m_get, refused, "GET", {},
     empty, trusted, credential_rule::handler, space_rule::none, drain_rule::refuse,
     body_rule::at_once, &R::serve_sse_hub},
    {"/.cratis/queries/sse/{subscribe|unsubscribe}", sse_control, T::any, m_post, refused,
     "POST", {}, empty, trusted, credential_rule::handler, space_rule::none, drain_rule::refuse,
     body_rule::in_order, &R::serve_sse_control},
    // WebSocket upgrades: the Arc hub, the health feed and each named query (arc-hub §1, §10).
    {"/.cratis/queries/ws", exactly<"/.cratis/queries/ws">, T::websocket, m_any, next, {}, {},
     envelope, trusted, credential_rule::handler, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_ws_hub},
    {"/.cratis/queries/health", exactly<"/.cratis/queries/health">, T::websocket, m_any, next,
     {}, {}, envelope, trusted, credential_rule::handler, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_ws_health},
    {"{named query route}", named_query, T::websocket, m_any, next, {}, {}, envelope, trusted,
     credential_rule::handler, space_rule::none, drain_rule::serve, body_rule::at_once,
     &R::serve_ws_query},
    {"{any other path}", any_path, T::websocket, m_any, next, {}, {}, envelope, trusted,
     credential_rule::handler, space_rule::none, drain_rule::serve, body_rule::at_once,
     &R::serve_ws_not_found},
    // The admin page: its live data, then its files.
    {"/ui/events", exactly<"/ui/events">, T::http, m_get | m_head, refused, "GET, HEAD",
     "the admin page accepts GET and HEAD", envelope, trusted, credential_rule::handler,
     space_rule::none, drain_rule::refuse, body_rule::at_once, &R::serve_admin_events},
    {"/ui/{file}", admin_file, T::http, m_get | m_head, refused, "GET, HEAD",
     "the admin page accepts GET and HEAD", envelope, origin_rule::any, credential_rule::handler,
     space_rule::none, drain_rule::serve, body_rule::at_once, &R::serve_admin_file},
    // Probes and metrics.
    {"/livez", exactly<"/livez">, T::http, m_get | m_head, next, {}, {}, envelope,
     origin_rule::any, credential_rule::handler, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_livez},
    {"/readyz", exactly<"/readyz">, T::http, m_get | m_head, next, {}, {}, envelope,
     origin_rule::any, credential_rule::handler, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_readyz},
    {"/metrics", exactly<"/metrics">, T::http, m_get | m_head, next, {}, {}, envelope,
     origin_rule::any, credential_rule::handler, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_metrics},
    {"/cluster/health", exactly<"/cluster/health">, T::http, m_get | m_head, next, {}, {},
     envelope, origin_rule::any, credential_rule::handler, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_cluster_health},
    // The WebSocket hub's path without an upgrade: HEAD probes it, GET is told to upgrade.
    {"/.cratis/queries/ws", exactly<"/.cratis/queries/ws">, T::http, m_head, next, {}, {},
     envelope, origin_rule::any, credential_rule::handler, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_probe},
    {"/.cratis/queries/ws", exactly<"/.cratis/queries/ws">, T::http, m_get, refused, "GET, HEAD",
     "the hub accepts GET (WebSocket upgrade) and HEAD", envelope, origin_rule::any,
     credential_rule::handler, space_rule::none, drain_rule::serve, body_rule::at_once,
     &R::serve_ws_hub_without_upgrade},
    // Named queries: introspection, the health feed, each query's route (snapshot or SSE).
    {"/.cratis/queries", exactly<"/.cratis/queries">, T::http, m_get | m_head, next, {}, {},
     envelope, origin_rule::any, credential_rule::handler, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_introspection},
    {"/.cratis/queries/health", exactly<"/.cratis/queries/health">, T::http, m_get | m_head,
     refused, "GET, HEAD", "the health feed accepts GET, HEAD and WebSocket upgrades", envelope,
     trusted, credential_rule::handler, space_rule::none, drain_rule::serve, body_rule::at_once,
     &R::serve_health},
    {"{named query route}", named_query, T::http, m_get | m_head, next, {}, {}, envelope,
     trusted, credential_rule::query_result, space_rule::none, drain_rule::serve,
     body_rule::at_once, &R::serve_query},
    // Who the caller is (windowed-subscribe §11).
    {"/v1/auth", exactly<"/v1/auth">, T::http, m_get | m_head, refused, "GET",
     "this path accepts only GET", envelope, trusted, credential_rule::handler, space_rule::none,
     drain_rule::serve, body_rule::at_once, &R::serve_whoami},
    // AG-UI state streams and agent runs, the windowed API, the write API.
    {"/v1/spaces/{space}/objects/{objectId}/{state|agent}", state_stream, T::http, m_any, next,
     {}, {}, envelope, trusted, credential_rule::envelope, space_rule::read, drain_rule::serve,
     body_rule::at_once, &R::serve_state},
    {"/v1/spaces/{space}/…/{query|subscribe}", windowed, T::http, m_any, next, {}, {}, envelope,
     trusted, credential_rule::envelope, space_rule::read, drain_rule::serve,
     body_rule::in_order_if_taken, &R::serve_windowed},
    {"/v1/spaces/{space}/batch", cross_unit_batch, T::http, m_any, next, {}, {}, envelope,
     trusted, credential_rule::envelope, space_rule::write, drain_rule::serve,
     body_rule::at_once, &R::serve_cross_unit_batch},
    {"/v1/spaces/{space}/objects/…", write_api, T::http, m_any, next, {}, {}, envelope, trusted,
     credential_rule::envelope, space_rule::write, drain_rule::refuse, body_rule::at_once,
     &R::serve_write},
  };
  return table;
}
// clang-format on

const http_route* http_session::find_route(const http::request<http::string_body>& req,
                                           route_match& m) const {
  bool upgrade = websocket::is_upgrade(req);
  auto method = std::string_view{req.method_string()};
  auto bit = method_bit(method);
  for (const auto& r : routes()) {
    if ((r.transport == T::http && upgrade) || (r.transport == T::websocket && !upgrade)) {
      continue;
    }
    // A row for any method takes every method, those no route serves (OPTIONS, TRACE, …)
    // included: the write API's matcher answers them.
    if (r.methods != m_any && (r.methods & bit) == 0 && r.otherwise == next) {
      continue;
    }
    route_match candidate;
    candidate.path = m.path;
    candidate.query = m.query;
    candidate.body_too_large = m.body_too_large;
    if (r.match(ctx_, method, candidate)) {
      m = std::move(candidate);
      return &r;
    }
  }
  return nullptr;  // unreachable: the write API takes every plain request, the last WebSocket
                   // row every upgrade
}

void http_session::refuse(const http_route& r, unsigned status, const core::error& e,
                          std::string_view allow) {
  if (r.form == empty) {
    respond_empty(status, false, allow, status == 503 ? "1" : "");
  } else {
    respond(status, error_body(e), false, allow);
  }
}

bool http_session::refuse_by_route(const http::request<http::string_body>& req, const http_route& r,
                                   route_match& m) {
  if (m.refusal) {
    std::string allow;
    if (const auto* a = m.refusal->details.if_contains("allow")) {
      allow = std::string{a->as_string()};
    }
    refuse(r, status_for(*m.refusal), *m.refusal, allow);
    return true;
  }
  if (r.methods != m_any && (r.methods & method_bit(std::string_view{req.method_string()})) == 0) {
    refuse(r, 405,
           core::make_error("method.not_allowed", std::string{r.not_allowed},
                            {{"allow", std::string{r.allow}}}),
           r.allow);
    return true;
  }
  if (r.origin == trusted && !origin_ok(req)) {
    // A cross-site page would otherwise act with the user's cookie: a "simple" POST needs no
    // preflight, and a WebSocket upgrade none at all (cross-site WebSocket hijacking).
    refuse(r, 403,
           core::make_error("request.origin_forbidden",
                            "this browser origin is not trusted here (query.allowedOrigins)"));
    return true;
  }
  // A direct SSE request on a named query's route answers a refused credential on the stream
  // itself (arc-hub §10: one QueryResult with isAuthorized:false, then the end): serve_query.
  bool answers_on_stream =
      r.credentials == credential_rule::query_result && wants_direct_stream(req);
  if (id_.refused && r.credentials != credential_rule::handler && !answers_on_stream) {
    challenge_ = auth_status(*id_.refused) == 401 ? bearer_challenge(*id_.refused) : "";
    if (r.credentials == credential_rule::query_result) {
      respond(auth_status(*id_.refused), unauthorized_result(correlation_));
    } else {
      respond(auth_status(*id_.refused), error_body(*id_.refused));
    }
    return true;
  }
  if (r.space != space_rule::none) {
    auto access =
        r.space == space_rule::read ? core::space_access::read : core::space_access::write;
    if (auto ok = core::check_space_access(ctx_.opts.spaces, m.space, access, *id_.who); !ok) {
      respond_auth(ok.error());
      return true;
    }
  }
  if (r.draining == drain_rule::refuse && ctx_.draining) {
    refuse(r, 503,
           core::make_error("server.draining", "this node is shutting down; retry on another"));
    return true;
  }
  return false;
}

void http_session::dispatch(http::request<http::string_body>& req, route_match& m) {
  const auto* r = find_route(req, m);
  if (r == nullptr || refuse_by_route(req, *r, m)) {
    return;
  }
  (this->*(r->handle))(req, m);
}

}  // namespace weir::gateway

// weir::gateway::http_route — one row of the HTTP gateway's route table: which requests a route
// takes (pattern, transport, methods), what is checked before its handler runs and in which
// form a refusal is answered (Origin, credentials, the space's rule, draining, an oversized
// body), and the handler. The table itself is http_session::routes() (http_routes.cpp); the
// handlers are http_session members, one file per protocol family (*_handlers.cpp). Internal
// to gateway/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/query_definition.hpp"
#include "core/result.hpp"
#include "core/space_rules.hpp"
#include "gateway/beast.hpp"
#include "gateway/state_routes.hpp"
#include "gateway/windowed_routes.hpp"
#include "gateway/write_api.hpp"

namespace weir::gateway {

struct server_context;

/// Methods as bits, for a route's `methods`.
enum method_bits : std::uint8_t {
  m_get = 1,
  m_head = 2,
  m_post = 4,
  m_put = 8,
  m_patch = 16,
  m_delete = 32,
  m_any = 0xff,
};

/// The bit of a request's method (0 for one no route serves: OPTIONS, TRACE, …).
std::uint8_t method_bit(std::string_view method);

/// What one route's matcher read from the request line, for the checks and the handler.
struct route_match {
  std::string_view path;                              ///< percent-encoded, as sent
  std::string_view query;                             ///< after `?`, percent-encoded
  std::string space;                                  ///< the space a space rule checks (decoded)
  const core::query_definition* query_def = nullptr;  ///< a named query's route
  std::optional<write_route> write;
  std::optional<state_route> state;
  std::optional<windowed_route> windowed;
  /// The matcher took the request and refuses it (a bad method on a family's path, a path of
  /// the family that names nothing): answered with status_for() and details.allow as `Allow`.
  std::optional<core::error> refusal;
  /// The body was over http.maxBodyBytes and the route answers 413 in its own order
  /// (body_rule::in_order): the handler answers it where its protocol puts it.
  bool body_too_large = false;
};

/// Which requests a route takes: a plain HTTP request, a WebSocket upgrade, or either.
enum class route_transport : std::uint8_t { http, websocket, any };

/// What a method the route does not serve gets: the routes after it (and in the end the write
/// API's 404 route.not_found), or 405 with the route's `allow`.
enum class other_methods : std::uint8_t { next_route, not_allowed };

/// The form of the route's refusals: the JSON error envelope, or an empty body (the SSE hub and
/// its control POSTs, arc-hub §8).
enum class answer_form : std::uint8_t { envelope, empty };

/// Origin: any, or a trusted one (same-origin, query.allowedOrigins): 403
/// request.origin_forbidden otherwise, so that a foreign page cannot use a user's cookie.
enum class origin_rule : std::uint8_t { any, trusted };

/// Credentials: the handler decides (probes, hubs, whoami, health and admin feeds), or a
/// refused credential (bad, expired) is answered before the handler: 401/403 in the envelope, or
/// as an Arc QueryResult with isAuthorized false (the named-query routes).
enum class credential_rule : std::uint8_t { handler, envelope, query_result };

/// The space rule checked for the space the matcher found (auth.* in the envelope).
enum class space_rule : std::uint8_t { none, read, write };

/// While the node drains: served, or 503 (server.draining in the envelope; an empty answer with
/// Retry-After: 1 in the empty form).
enum class drain_rule : std::uint8_t { serve, refuse };

/// A body over http.maxBodyBytes: 413 request.too_large as soon as the head is read, or the
/// route's checks in order first, the handler answering 413 where it belongs: every check, the
/// matcher's refusals included (`in_order`: the SSE control POSTs answer 404/405/403/503/415
/// first, §8), or only for a request the matcher takes (`in_order_if_taken`: the windowed API
/// resolves a POST's space first, §2; another method on its paths gets 413 at once).
enum class body_rule : std::uint8_t { at_once, in_order, in_order_if_taken };

class http_session;
using route_handler = void (http_session::*)(http::request<http::string_body>&, route_match&);

struct http_route {
  std::string_view pattern;  ///< the path as docs/openapi.yaml writes it (documentation, logs)
  /// Whether the route takes a request for `method` and `m.path`; it may fill `m` (the space,
  /// the family's parsed route, a refusal).
  bool (*match)(const server_context& ctx, std::string_view method, route_match& m);
  route_transport transport = route_transport::http;
  std::uint8_t methods = m_any;
  other_methods otherwise = other_methods::next_route;
  std::string_view allow;        ///< the 405's Allow header
  std::string_view not_allowed;  ///< the 405's message
  answer_form form = answer_form::envelope;
  origin_rule origin = origin_rule::any;
  credential_rule credentials = credential_rule::handler;
  space_rule space = space_rule::none;
  drain_rule draining = drain_rule::serve;
  body_rule body = body_rule::at_once;
  route_handler handle = nullptr;
};

}  // namespace weir::gateway

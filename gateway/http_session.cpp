// HTTP routing of a Weir node: /v1/spaces/... writes, /livez, the WebSocket hub upgrade, the
// SSE hub stream and its control POSTs (arc-hub §1, §8).
#include "gateway/http_session.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <utility>

#include <boost/json/serialize.hpp>

#include "actors/direct_query.hpp"
#include "actors/health_watch.hpp"
#include "actors/hub_connection.hpp"
#include "actors/query_catalog.hpp"
#include "actors/random_ids.hpp"
#include "actors/runtime.hpp"
#include "core/correlation_id.hpp"
#include "core/idempotency_key.hpp"
#include "core/origin.hpp"
#include "core/query_health.hpp"
#include "core/query_result.hpp"
#include "core/record_rules.hpp"
#include "core/space_rules.hpp"
#include "core/sse_control.hpp"
#include "core/url.hpp"
#include "core/utf8.hpp"
#include "gateway/admin_ui_routes.hpp"
#include "gateway/cluster_routes.hpp"
#include "gateway/cross_unit_batch.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/metrics_route.hpp"
#include "gateway/query_routes.hpp"
#include "gateway/sse_control_router.hpp"
#include "gateway/sse_head.hpp"
#include "gateway/sse_hub_session.hpp"
#include "gateway/windowed_stream_session.hpp"
#include "gateway/write_api.hpp"
#include "gateway/ws_hub_session.hpp"
#include "log/log.hpp"

namespace weir::gateway {

namespace {
/// The request line and headers together (answered 431 past it).
constexpr std::size_t max_header_bytes = 16 * 1024;
// Answers a connection may owe (pipelined writes being applied, answers its client has not read
// yet) before Weir stops reading from it; the client's further requests then wait in TCP's
// buffers. Bounds one connection's claim on its unit's pending writes and the answers it holds.
constexpr std::size_t max_pipelined_writes = 32;
constexpr std::string_view ws_hub_path = "/.cratis/queries/ws";
constexpr std::string_view sse_hub_path = "/.cratis/queries/sse";
constexpr std::string_view sse_control_prefix = "/.cratis/queries/sse/";
constexpr std::string_view sse_subscribe_path = "/.cratis/queries/sse/subscribe";
constexpr std::string_view sse_unsubscribe_path = "/.cratis/queries/sse/unsubscribe";

/// windowed-subscribe §3's 404, worded as the reference words it.
core::error space_not_found(const std::string& space) {
  return core::make_error("space.not_found", "space " + space + " not found", {{"space", space}});
}

core::error origin_forbidden() {
  return core::make_error("request.origin_forbidden",
                          "this browser origin is not trusted here (query.allowedOrigins)");
}

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

http_session::http_session(tcp::socket&& socket, server_context& ctx)
    : stream_(std::move(socket)), ctx_(ctx), snapshot_timer_(stream_.get_executor()) {
  beast::error_code ec;
  auto ep = stream_.socket().remote_endpoint(ec);
  if (!ec) {
    remote_ = ep.address().to_string();
  }
}

void http_session::run() {
  asio::dispatch(stream_.get_executor(),
                 beast::bind_front_handler(&http_session::do_read, shared_from_this()));
}

void http_session::do_read() {
  reading_ = true;
  head_ = false;
  challenge_.clear();
  parser_.emplace();
  parser_->body_limit(ctx_.opts.max_body_bytes);
  parser_->header_limit(max_header_bytes);
  stream_.expires_after(std::chrono::seconds(60));
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&http_session::on_read, shared_from_this()));
}

void http_session::on_read(beast::error_code ec, std::size_t) {
  reading_ = false;
  if (ec == http::error::end_of_stream) {
    if (!answered_all()) {
      eof_ = true;  // the answers still owed go out first
      return;
    }
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    return;
  }
  if (ec == http::error::header_limit) {
    // RFC 6585 §5. The head is incomplete, so nothing of it is trusted: a fresh correlation id,
    // HTTP/1.1, and the connection closed after the answer.
    version_ = 11;
    correlation_ = core::correlation_id_for(std::nullopt, actors::fast_uuid());
    respond(431,
            error_body(core::make_error("request.headers_too_large",
                                        "the request line and headers are larger than " +
                                            std::to_string(max_header_bytes) +
                                            " bytes: send fewer or shorter headers",
                                        {{"limit", max_header_bytes}})),
            true);
    return;
  }
  if (ec == http::error::body_limit) {
    version_ = parser_->get().version();
    std::optional<std::string_view> inbound;
    if (auto it = parser_->get().find("X-Correlation-ID"); it != parser_->get().end()) {
      inbound = it->value();
    }
    correlation_ = core::correlation_id_for(inbound, actors::fast_uuid());
    if (auto path = core::split_target(parser_->get().target()).first;
        path.starts_with(sse_control_prefix)) {
      // The head is complete: the checks §8 and seed 001 put before the body still decide
      // (404, 405, 403, 503, 415); only then 413. Control answers have empty bodies.
      keep_alive_ = false;
      if (!refuse_sse_control(parser_->get(), path)) {
        respond_empty(413, true);
      }
      return;
    }
    auto too_large = core::make_error("request.too_large",
                                      "the body is larger than the configured limit of " +
                                          std::to_string(ctx_.opts.max_body_bytes) + " bytes",
                                      {{"limit", ctx_.opts.max_body_bytes}});
    auto path = core::split_target(parser_->get().target()).first;
    if (auto w = match_windowed_route(std::string_view{parser_->get().method_string()}, path);
        w && *w) {
      // windowed-subscribe §2: the space is resolved before the body is read, so an unknown
      // space answers 404 even when the body is too large.
      keep_alive_ = false;
      auto self = shared_from_this();
      auto space = (*w)->space;
      // Who asks comes first: a caller the space's rule refuses learns nothing about it.
      challenge_.clear();
      id_ = identify(ctx_, parser_->get(), remote_);
      if (id_.refused) {
        respond_auth(*id_.refused);
        return;
      }
      if (auto ok =
              core::check_space_access(ctx_.opts.spaces, space, core::space_access::read, *id_.who);
          !ok) {
        respond_auth(ok.error());
        return;
      }
      if (!core::validate_id(space, "space")) {
        respond(404, error_body(space_not_found(space)), true);
        return;
      }
      // The answer's place among any still owed (read behind pipelined writes): nothing is read
      // meanwhile, so the members it is built from stay this request's.
      auto* slot = &answers_.emplace_back();
      ctx_.rt.space_exists(space, [self, slot, space, too_large](bool exists) {
        asio::post(self->stream_.get_executor(), [self, slot, space, too_large, exists] {
          self->fill_next_ = slot;
          if (exists) {
            self->respond(413, error_body(too_large), true);
          } else {
            self->respond(404, error_body(space_not_found(space)), true);
          }
        });
      });
      return;
    }
    respond(413, error_body(too_large), true);
    return;
  }
  if (ec && &ec.category() == &http::make_error_code(http::error::bad_field).category() &&
      ec != http::error::partial_message && ec != http::error::need_more) {
    // Not HTTP (a control character in a header, a bad request line or chunk): answered in
    // the envelope, like every other refusal, and the connection closed (RFC 9112 §2.2: what
    // follows cannot be framed).
    version_ = 11;
    correlation_ = core::correlation_id_for(std::nullopt, actors::fast_uuid());
    respond(400,
            error_body(core::make_error("request.malformed",
                                        "the request is not valid HTTP/1.1 (" + ec.message() +
                                            "): check its request line and header fields")),
            true);
    return;
  }
  if (ec) {
    return;  // timeout, reset, or a request cut off: nobody is left to answer
  }
  if (!answered_all()) {
    // Read behind pipelined writes: another write to their unit goes ahead (its shard applies
    // it after them); anything else waits until every answer before it is written.
    auto req = parser_->release();
    if (may_follow(req)) {
      handle(std::move(req));
    } else {
      held_.emplace(std::move(req));
    }
    return;
  }
  handle(parser_->release());
}

void http_session::handle(http::request<http::string_body>&& req) {
  head_ = false;
  version_ = req.version();
  keep_alive_ = req.keep_alive();
  // Every answer carries X-Correlation-ID: the caller's when it is a valid UUID, else a new one.
  std::optional<std::string_view> inbound;
  if (auto it = req.find("X-Correlation-ID"); it != req.end()) {
    inbound = it->value();
  }
  correlation_ = core::correlation_id_for(inbound, actors::fast_uuid());
  challenge_.clear();
  id_ = identify(ctx_, req, remote_);
  if (auto decoded = core::percent_decode(req.target());
      !core::valid_utf8(req.target()) || (decoded && !core::valid_utf8(*decoded))) {
    // Ids, names and arguments come from the target and go back out in JSON and WebSocket text
    // frames, which must be UTF-8: refused here once rather than at each use.
    keep_alive_ = false;
    respond(400, error_body(core::make_error(
                     "request.invalid_utf8",
                     "the request target holds bytes that are not UTF-8 text (raw or "
                     "percent-encoded): encode names and ids as UTF-8")));
    return;
  }
  auto [path, query] = core::split_target(req.target());
  if (path == sse_hub_path || path.starts_with(sse_control_prefix)) {
    handle_sse(req, path);
    return;
  }
  if (websocket::is_upgrade(req)) {
    if (!origin_ok(req)) {
      // Cross-site WebSocket hijacking: a browser sends the page's Origin on every upgrade,
      // and the cookie with it. Refused as the SSE hub refuses it.
      respond(403, error_body(origin_forbidden()));
      return;
    }
    if (path == ws_hub_path) {
      stream_.expires_never();
      handed_over<ws_hub_session>(stream_.release_socket(), ctx_, correlation_, id_)
          ->run(std::move(req));
      return;
    }
    // The direct routes read their arguments from the query string, access_token aside.
    std::string args_text{query};
    if (ctx_.opts.auth && ctx_.opts.auth->options().query_token) {
      args_text = core::strip_access_token(query);
    }
    if (path == core::query_health_route) {
      // The health feed over a direct WebSocket (arc-hub §11, §10).
      direct_target target{nullptr, {}, health_scope_of(id_), correlation_, id_.refused, {}};
      target.request.caller = caller_of(id_);
      target.request.who = id_.who;
      stream_.expires_never();
      handed_over<ws_hub_session>(stream_.release_socket(), ctx_, std::move(target), id_)
          ->run(std::move(req));
      return;
    }
    if (const auto* def = ctx_.rt.catalog().by_route(path)) {
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
              def, std::move(parsed->direct), std::nullopt, correlation_, id_.refused, {}},
          id_)
          ->run(std::move(req));
      return;
    }
    respond(404, error_body(core::make_error("route.not_found",
                                             "no WebSocket endpoint at " + std::string{path})));
    return;
  }
  head_ = req.method() == http::verb::head;
  if (is_admin_ui_path(path)) {
    handle_admin_ui(req, path);
    return;
  }
  if (path == "/livez" && (req.method() == http::verb::get || head_)) {
    respond(200, "{\"status\":\"ok\"}");
    return;
  }
  if (path == "/readyz" && (req.method() == http::verb::get || head_)) {
    auto [status, body] = readiness(ctx_);
    respond(status, std::move(body));
    return;
  }
  if (path == "/metrics" && (req.method() == http::verb::get || head_)) {
    content_type_ = prometheus_content_type;
    respond(200, prometheus_metrics(ctx_));
    return;
  }
  if (path == "/cluster/health" && (req.method() == http::verb::get || head_)) {
    auto [status, body] = cluster_health(ctx_);
    respond(status, std::move(body));
    return;
  }
  if (path == ws_hub_path) {
    if (head_) {
      // A probe (arc-hub decision 5): the hub's headers, no body, no connection allocated.
      respond_probe();
    } else if (req.method() == http::verb::get) {
      respond(426,
              error_body(core::make_error("request.upgrade_required",
                                          "this is the WebSocket hub: send a WebSocket upgrade "
                                          "(Connection: Upgrade, Upgrade: websocket)")),
              false, {}, "websocket");
    } else {
      respond(405,
              error_body(core::make_error("method.not_allowed",
                                          "the hub accepts GET (WebSocket upgrade) and HEAD")),
              false, "GET, HEAD");
    }
    return;
  }
  bool read = req.method() == http::verb::get || head_;
  if (read && path == "/.cratis/queries") {
    respond(200, introspection_json(ctx_.rt.catalog()));
    return;
  }
  if (path == core::query_health_route) {
    handle_health(req);
    return;
  }
  if (const auto* def = ctx_.rt.catalog().by_route(path); def && read) {
    auto accept = header(req, http::field::accept).value_or(std::string_view{});
    if (!origin_ok(req)) {
      // A cross-site page would read the query's data with the user's cookie.
      respond(403, error_body(origin_forbidden()));
      return;
    }
    if (id_.refused) {
      challenge_ = auth_status(*id_.refused) == 401 ? bearer_challenge(*id_.refused) : "";
      respond(auth_status(*id_.refused), unauthorized_result(correlation_));
      return;
    }
    if (!head_ && accept.find("text/event-stream") != std::string_view::npos) {
      // Direct SSE (§10): bare QueryResult events on this query's route.
      auto parsed = parse_route_request(query);
      if (!parsed) {
        respond(400, invalid_result(correlation_, parsed.error()));
        return;
      }
      parsed->direct.caller = caller_of(id_);
      parsed->direct.who = id_.who;
      handed_over<sse_hub_session>(
          std::move(stream_), ctx_, id_.client, version_,
          direct_target{
              def, std::move(parsed->direct), std::nullopt, correlation_, std::nullopt, {}})
          ->run();
      return;
    }
    handle_snapshot(*def, query);
    return;
  }
  if (path == "/v1/auth") {
    if (!origin_ok(req)) {
      respond(403, error_body(origin_forbidden()));  // who the cookie's owner is
      return;
    }
    if (req.method() == http::verb::get || head_) {
      respond_whoami();
    } else {
      respond(405,
              error_body(core::make_error("method.not_allowed", "this path accepts only GET",
                                          {{"allow", "GET"}})),
              false, "GET");
    }
    return;
  }
  if (auto st = match_state_route(std::string_view{req.method_string()}, path)) {
    if (!*st) {
      const auto& allow = st->error().details.at("allow").as_string();
      respond(405, error_body(st->error()), false, std::string_view{allow});
      return;
    }
    if (refuse_for_space(req, (*st)->space, core::space_access::read)) {
      return;
    }
    std::optional<agent_run> run;
    if ((*st)->agent) {
      // The input echoes the client's state, which is the document one level down: allowed
      // the document's depth from there. Its `state` is not used (the snapshot replaces it).
      auto body = core::parse_json(req.body(), 1);
      auto input = body ? parse_run_agent_input(body.value())
                        : core::result<agent_run>{std::move(body).error()};
      if (!input) {
        respond(400, error_body(input.error()));
        return;
      }
      run = std::move(input.value());
    }
    handle_state(req, std::move(st->value()), std::move(run));
    return;
  }
  if (auto w = match_windowed_route(std::string_view{req.method_string()}, path)) {
    if (!*w) {
      respond(405, error_body(w->error()), false, "POST");
      return;
    }
    if (refuse_for_space(req, (*w)->space, core::space_access::read)) {
      return;
    }
    handle_windowed(req, std::move(w->value()));
    return;
  }
  if (auto b = match_cross_unit_batch(std::string_view{req.method_string()}, path)) {
    handle_cross_unit_batch(req, std::move(*b));
    return;
  }
  auto route = match_write_route(std::string_view{req.method_string()}, path);
  if (!route) {
    const auto& e = route.error();
    std::string allow;
    if (auto* a = e.details.if_contains("allow")) {
      allow = std::string{a->as_string()};
    }
    respond(status_for(e), error_body(e), false, allow);
    return;
  }
  if (refuse_for_space(req, route->cmd.space, core::space_access::write)) {
    return;
  }
  if (refuse_if_draining()) {
    return;
  }
  auto cmd = std::move(route->cmd);
  if (!read_idempotency_key(req, cmd.idempotency_key)) {
    return;
  }
  if (req.method() == http::verb::patch) {
    // PATCH takes an RFC 6902 JSON Patch (application/json-patch+json) on a record or an
    // object's property document, and Weir's own {$set, $unset, …} body on a record.
    auto type = header(req, http::field::content_type).value_or(std::string_view{});
    auto media = type.substr(0, type.find(';'));
    while (!media.empty() && media.back() == ' ') {
      media.remove_suffix(1);
    }
    bool json_patch = beast::iequals(media, "application/json-patch+json");
    if (json_patch && cmd.kind == actors::write_kind::patch_record) {
      cmd.kind = actors::write_kind::json_patch_record;
    } else if (!json_patch && cmd.kind == actors::write_kind::json_patch_object) {
      respond(415, error_body(core::make_error(
                       "request.unsupported_media_type",
                       "PATCH on an object takes an RFC 6902 JSON Patch: send it as "
                       "Content-Type: application/json-patch+json",
                       {{"accepted", "application/json-patch+json"}})));
      return;
    }
  }
  bool needs_body = cmd.kind != actors::write_kind::delete_object &&
                    cmd.kind != actors::write_kind::delete_record;
  if (needs_body) {
    auto body = parse_body(req.body());
    if (!body) {
      respond(400, error_body(body.error()));
      return;
    }
    cmd.body = std::move(body.value());
  }
  dispatch_write(std::move(cmd));
}

void http_session::handle_health(const http::request<http::string_body>& req) {
  // arc-hub §11: the health feed is an observable query like any other: a snapshot on a plain
  // GET (always ready here, so 200), a stream with Accept: text/event-stream. Scoped to the
  // caller: an anonymous caller sees the connections opened from its own address and tenant.
  if (req.method() != http::verb::get && !head_) {
    respond(405,
            error_body(core::make_error(
                "method.not_allowed", "the health feed accepts GET, HEAD and WebSocket upgrades")),
            false, "GET, HEAD");
    return;
  }
  if (!origin_ok(req)) {
    respond(403, error_body(origin_forbidden()));  // the caller's connections, as the hubs
    return;
  }
  if (id_.refused || (ctx_.opts.auth && !id_.who->authenticated())) {
    // Decision 7: with authentication on, the feed needs a signed-in caller.
    auto e = id_.refused ? *id_.refused
                         : core::make_error("auth.required",
                                            "the health feed shows a caller its own "
                                            "connections: sign in first");
    challenge_ = auth_status(e) == 401 ? bearer_challenge(e) : "";
    respond(auth_status(e), unauthorized_result(correlation_));
    return;
  }
  core::health_scope scope = health_scope_of(id_);
  auto accept = header(req, http::field::accept).value_or(std::string_view{});
  if (!head_ && accept.find("text/event-stream") != std::string_view::npos) {
    direct_target target{nullptr, {}, scope, correlation_, std::nullopt, {}};
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

void http_session::handle_windowed(http::request<http::string_body>& req, windowed_route route) {
  // windowed-subscribe §2's order: the space (1), then the body (2-8), then the subscription.
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
  ctx_.rt.space_exists(
      space, [self, body = std::move(body), route = std::move(route)](bool exists) mutable {
        asio::post(self->stream_.get_executor(),
                   [self, exists, body = std::move(body), route = std::move(route)]() mutable {
                     if (!exists) {
                       self->respond(404, error_body(space_not_found(route.space)));
                       return;
                     }
                     self->windowed_in_space(std::move(body), std::move(route));
                   });
      });
}

void http_session::handle_state(const http::request<http::string_body>& req, state_route route,
                                std::optional<agent_run> run) {
  // An AG-UI state stream of one object's property document: the space must exist (404
  // space.not_found, as on the windowed API); the object need not (its state is `{}` until it
  // has a document). An agent run is the same stream between RUN_STARTED and RUN_FINISHED.
  if (refuse_if_draining()) {
    return;
  }
  if (!accepts_event_stream(header(req, http::field::accept))) {
    respond(406, error_body(core::make_error(
                     "request.not_acceptable",
                     "the state stream is an event stream: send Accept: text/event-stream",
                     {{"accepted", "text/event-stream"}})));
    return;
  }
  if (auto ok = core::validate_id(route.space, "space"); !ok) {
    respond(404, error_body(space_not_found(route.space)));
    return;
  }
  if (auto ok = core::validate_id(route.object, "objectId"); !ok) {
    respond(400, error_body(ok.error()));
    return;
  }
  state_target target{std::move(route.space), std::move(route.object), std::nullopt,
                      std::move(run)};
  if (const auto* rule = core::space_rule_for(ctx_.opts.spaces, target.space);
      rule && !rule->read.anonymous()) {
    target.expires_at = id_.who->expires_at;
  }
  auto self = shared_from_this();
  auto space = target.space;
  ctx_.rt.space_exists(space, [self, target = std::move(target)](bool exists) mutable {
    asio::post(self->stream_.get_executor(), [self, exists, target = std::move(target)]() mutable {
      if (!exists) {
        self->respond(404, error_body(space_not_found(target.space)));
        return;
      }
      if (self->head_) {
        self->respond_probe();  // the stream's headers; nothing is opened
        return;
      }
      direct_target d{nullptr, {}, std::nullopt, self->correlation_, std::nullopt, {}};
      d.request.caller = caller_of(self->id_);
      d.request.who = self->id_.who;
      d.state = std::move(target);
      self->handed_over<sse_hub_session>(std::move(self->stream_), self->ctx_, self->id_.client,
                                         self->version_, std::move(d))
          ->run();
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
    // `deauthorized` when the credential its space's rule needed expires.
    std::optional<std::int64_t> expires_at;
    if (const auto* rule = core::space_rule_for(ctx_.opts.spaces, route.space);
        rule && !rule->read.anonymous()) {
      expires_at = id_.who->expires_at;
    }
    handed_over<windowed_stream_session>(std::move(stream_), ctx_, version_, correlation_,
                                         std::move(req), std::move(caller), expires_at)
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

bool http_session::origin_ok(const http::request<http::string_body>& req) const {
  core::origin_policy policy{ctx_.opts.allowed_origins, ctx_.opts.allow_null_origin};
  auto host = header(req, http::field::host).value_or(std::string_view{});
  // Same-origin is the request's own scheme and Host (§8). The scheme is the one a trusted
  // proxy says the client used: behind a TLS-terminating proxy the page is https while this
  // hop is http, and every browser would be refused otherwise. Nobody else's forwarded headers
  // count.
  std::string_view scheme = "http";
  if (core::is_trusted(ctx_.opts.trusted_proxies, remote_)) {
    if (auto proto = header(req, "X-Forwarded-Proto"); proto) {
      auto first = proto->substr(0, proto->find(','));
      while (!first.empty() && first.back() == ' ') {
        first.remove_suffix(1);
      }
      if (first == "https" || first == "http") {
        scheme = first;
      }
    }
  }
  return core::origin_allowed(scheme, host, header(req, http::field::origin), policy);
}

void http_session::handle_sse(http::request<http::string_body>& req, std::string_view path) {
  head_ = req.method() == http::verb::head;
  if (path == sse_hub_path) {
    if (head_) {
      respond_probe();
    } else if (req.method() != http::verb::get) {
      respond_empty(405, false, "GET");
    } else if (!origin_ok(req)) {
      respond_empty(403);
    } else if (ctx_.draining) {
      respond_empty(503, false, {}, "1");
    } else if (auto e = id_.refused ? id_.refused : hub_refusal(ctx_, *id_.who)) {
      challenge_ = auth_status(*e) == 401 ? bearer_challenge(*e) : "";
      respond_empty(auth_status(*e));
    } else {
      // The stream takes the connection over; this session ends here.
      auto stream = handed_over<sse_hub_session>(std::move(stream_), ctx_, id_.client, correlation_,
                                                 version_);
      stream->set_principal(id_.who);
      stream->set_user_agent(
          std::string{header(req, http::field::user_agent).value_or(std::string_view{})});
      stream->run();
    }
    return;
  }
  if (refuse_sse_control(req, path)) {
    return;
  }
  bool subscribe = path == sse_subscribe_path;
  const auto& hub = ctx_.rt.hub();
  if (req.body().size() >
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

bool http_session::refuse_sse_control(const http::request<http::string_body>& req,
                                      std::string_view path) {
  if (path != sse_subscribe_path && path != sse_unsubscribe_path) {
    respond_empty(404);
    return true;
  }
  if (req.method() != http::verb::post) {
    respond_empty(405, false, "POST");
    return true;
  }
  // Seed 001 (which wins over the spec's 404 here): "SSE controls … reject an untrusted browser
  // Origin with 403". Checked first, so a cross-origin page learns nothing else.
  if (!origin_ok(req)) {
    respond_empty(403);
    return true;
  }
  if (ctx_.draining) {
    respond_empty(503, false, {}, "1");
    return true;
  }
  // arc-hub §8, in order: 415, 413, 400, 404, late 400, then the state machine's answer.
  if (!core::sse_control_content_type_ok(header(req, http::field::content_type))) {
    respond_empty(415);
    return true;
  }
  return false;
}

void http_session::respond_empty(unsigned status, bool close, std::string_view allow,
                                 std::string_view retry_after) {
  if (status >= 400) {
    log::info("request refused",
              {{"status", status}, {"correlation", correlation_}, {"remote", remote_}});
  }
  http::response<http::string_body> res;
  res.version(version_);
  res.result(status);
  res.set(http::field::server, "weir");
  res.set("X-Correlation-ID", correlation_);
  if (!challenge_.empty()) {
    res.set(http::field::www_authenticate, challenge_);
  }
  if (!allow.empty()) {
    res.set(http::field::allow, allow);
  }
  if (!retry_after.empty()) {
    res.set(http::field::retry_after, retry_after);
  }
  res.keep_alive(keep_alive_ && !close);
  res.content_length(0);
  send_res(std::move(res));
}

void http_session::respond_probe() {
  http::response<http::string_body> res;
  set_sse_head(res, version_, correlation_);
  res.keep_alive(keep_alive_);
  if (keep_alive_) {
    // After keep_alive(): on HTTP/1.1 it drops the token as the default, and the probe must
    // show the stream's own `Connection: keep-alive` (decision 5).
    res.set(http::field::connection, "keep-alive");
  }
  send_res(std::move(res));
}

void http_session::respond(unsigned status, std::string body, bool close, std::string_view allow,
                           std::string_view upgrade) {
  if (status >= 400) {
    log::info("request refused", {{"status", status},
                                  {"code", error_code_of(body)},
                                  {"correlation", correlation_},
                                  {"remote", remote_}});
  }
  http::response<http::string_body> res;
  res.version(version_);
  res.result(status);
  res.set(http::field::server, "weir");
  res.set(http::field::content_type, content_type_);
  content_type_ = "application/json";
  res.set(http::field::cache_control, "no-store");
  res.set("X-Correlation-ID", correlation_);
  if (!challenge_.empty()) {
    res.set(http::field::www_authenticate, challenge_);
  }
  if (!allow.empty()) {
    res.set(http::field::allow, allow);
  }
  if (!upgrade.empty()) {
    res.set(http::field::upgrade, upgrade);
  }
  res.keep_alive(keep_alive_ && !close);
  if (head_) {
    // HEAD: the headers GET would send, Content-Length included, and no body.
    res.content_length(body.size());
  } else {
    res.body() = std::move(body);
    res.prepare_payload();
  }
  send_res(std::move(res));
}

bool http_session::refuse_for_space(const http::request<http::string_body>& req,
                                    const std::string& space, core::space_access access) {
  // A cross-site page could otherwise post with the user's cookie (a "simple" POST needs no
  // preflight): browsers send Origin on every such request, and an untrusted one is refused.
  if (!origin_ok(req)) {
    respond(403, error_body(origin_forbidden()));
    return true;
  }
  if (id_.refused) {
    respond_auth(*id_.refused);
    return true;
  }
  if (auto ok = core::check_space_access(ctx_.opts.spaces, space, access, *id_.who); !ok) {
    respond_auth(ok.error());
    return true;
  }
  return false;
}

void http_session::respond_auth(const core::error& e) {
  challenge_ = auth_status(e) == 401 ? bearer_challenge(e) : "";
  respond(auth_status(e), error_body(e));
}

void http_session::respond_whoami() {
  // windowed-subscribe §11 / seed 002: {authorized, accountId} for the caller's credentials.
  // Without authentication configured every caller is authorized and anonymous, so the seed's
  // client loop proceeds; with it, only a valid credential is authorized.
  boost::json::object o;
  if (!ctx_.opts.auth) {
    o["authorized"] = true;
    o["accountId"] = "";
  } else {
    bool ok = !id_.refused && id_.who->authenticated();
    o["authorized"] = ok;
    o["accountId"] = ok ? id_.who->subject : std::string{};
  }
  respond(200, boost::json::serialize(o));
}

bool http_session::refuse_if_draining() {
  if (!ctx_.draining) {
    return false;
  }
  respond(503, error_body(core::make_error("server.draining",
                                           "this node is shutting down; retry on another")));
  return true;
}

bool http_session::read_idempotency_key(const http::request<http::string_body>& req,
                                        std::string& key) {
  auto keys = req.count("Idempotency-Key");
  if (keys == 0) {
    return true;
  }
  auto text = std::string_view{req["Idempotency-Key"]};
  auto ok =
      keys > 1
          ? core::result<void>{core::make_error("request.invalid_idempotency_key",
                                                "send one Idempotency-Key header, not several")}
          : core::check_idempotency_key(text);
  if (!ok) {
    respond(400, error_body(ok.error()));
    return false;
  }
  key = std::string{text};
  return true;
}

void http_session::handle_cross_unit_batch(const http::request<http::string_body>& req,
                                           core::result<std::string> space) {
  if (!space) {
    const auto& e = space.error();
    respond(status_for(e), error_body(e), false, e.code == "method.not_allowed" ? "POST" : "");
    return;
  }
  if (refuse_for_space(req, *space, core::space_access::write)) {
    return;
  }
  if (auto ok = core::validate_id(*space, "space"); !ok) {
    respond(400, error_body(ok.error()));
    return;
  }
  if (refuse_if_draining()) {
    return;
  }
  std::string key;
  if (!read_idempotency_key(req, key)) {
    return;
  }
  auto body = parse_body(req.body());
  if (!body) {
    respond(400, error_body(body.error()));
    return;
  }
  auto writes =
      parse_cross_unit_batch(*space, std::move(body.value()), key, ctx_.rt.record_limits(),
                             ctx_.rt.store_holds_nul_characters());
  if (!writes) {
    respond(status_for(writes.error()), error_body(writes.error()));
    return;
  }
  dispatch_batch(std::move(writes.value()));
}

void http_session::dispatch_batch(std::vector<actors::write_command> writes) {
  // Its writes go to several units, so nothing read after it may be applied before its answer.
  // (parse_cross_unit_batch never gives none: the last answer writes the answer.)
  assert(!writes.empty());
  follow_unit_.reset();
  auto& slot = answers_.emplace_back();
  struct gather {
    std::vector<std::optional<core::result<actors::write_outcome>>> outcomes;
    std::atomic<std::size_t> left;
  };
  auto g = std::make_shared<gather>();
  g->outcomes.resize(writes.size());
  g->left = writes.size();
  auto self = shared_from_this();
  auto finish = [self, g, &slot, version = version_, keep = keep_alive_,
                 correlation = correlation_]() {
    bool replayed = std::all_of(g->outcomes.begin(), g->outcomes.end(),
                                [](const auto& o) { return o && *o && (*o)->replayed; });
    auto body = cross_unit_batch_answer(g->outcomes);
    asio::post(self->stream_.get_executor(), [self, &slot, version, keep, correlation, replayed,
                                              body = std::move(body)]() mutable {
      self->fill_answer(slot, version, keep, correlation, 200, std::move(body), replayed);
    });
  };
  for (std::size_t i = 0; i < writes.size(); ++i) {
    // Checked as a whole by parse_cross_unit_batch; each answer fills its own place, and the
    // last one (on whichever actor thread) writes the answer.
    ctx_.rt.submit_checked(std::move(writes[i]),
                           [g, i, finish](core::result<actors::write_outcome> r) {
                             g->outcomes[i] = std::move(r);
                             if (g->left.fetch_sub(1) == 1) {
                               finish();
                             }
                           });
  }
}

void http_session::dispatch_write(actors::write_command cmd) {
  // Another request may be read before this one is answered only when the next one can be
  // applied after it without waiting: a keep-alive HTTP/1.1 connection whose writes all go to
  // one local unit, whose shard takes them in the order they come.
  std::optional<std::string> unit;
  if (keep_alive_ && version_ >= 11) {
    unit = ctx_.rt.ordered_unit(cmd);
  }
  auto& slot = answers_.emplace_back();
  auto self = shared_from_this();
  ctx_.rt.submit(std::move(cmd),
                 [self, &slot, version = version_, keep = keep_alive_,
                  correlation = correlation_](core::result<actors::write_outcome> r) mutable {
                   // Called once (runtime::submit answers each write once): the id moves on.
                   asio::post(self->stream_.get_executor(),
                              [self, &slot, version, keep, correlation = std::move(correlation),
                               r = std::move(r)]() mutable {
                                self->answer_write(slot, version, keep, correlation, std::move(r));
                              });
                 });
  if (unit && (answers_.size() == 1 || follow_unit_ == unit)) {
    follow_unit_ = std::move(unit);
    read_ahead();
  } else {
    follow_unit_.reset();
  }
}

void http_session::read_ahead() {
  if (reading_ || held_ || eof_ || !follow_unit_) {
    return;
  }
  if (answers_.size() + (writing_ ? 1 : 0) >= max_pipelined_writes) {
    paused_ = true;  // TCP holds the rest until an answer is written
    return;
  }
  do_read();
}

void http_session::resume_reading() {
  if (paused_ && answers_.size() + (writing_ ? 1 : 0) < max_pipelined_writes) {
    paused_ = false;
    read_ahead();
  }
}

bool http_session::may_follow(const http::request<http::string_body>& req) const {
  if (!follow_unit_) {
    return false;
  }
  auto route = match_write_route(std::string_view{req.method_string()},
                                 core::split_target(req.target()).first);
  return route && ctx_.rt.ordered_unit(route->cmd) == follow_unit_;
}

void http_session::answer_write(std::optional<http::response<http::string_body>>& slot,
                                unsigned version, bool keep_alive, const std::string& correlation,
                                core::result<actors::write_outcome> r) {
  unsigned status = 200;
  std::string body;
  bool replayed = false;
  if (r) {
    boost::json::object o;
    o["versionId"] = r->version_id;
    replayed = r->replayed;
    body = boost::json::serialize(o);
  } else {
    status = status_for(r.error());
    body = error_body(r.error());
    log::info("request refused", {{"status", status},
                                  {"code", r.error().code},
                                  {"correlation", correlation},
                                  {"remote", remote_}});
  }
  fill_answer(slot, version, keep_alive, correlation, status, std::move(body), replayed);
}

void http_session::fill_answer(std::optional<http::response<http::string_body>>& slot,
                               unsigned version, bool keep_alive, const std::string& correlation,
                               unsigned status, std::string body, bool replayed) {
  auto& res = slot.emplace();
  res.version(version);
  res.result(status);
  res.set(http::field::server, "weir");
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-store");
  res.set("X-Correlation-ID", correlation);
  if (replayed) {
    res.set("Idempotency-Replayed", "true");
  }
  res.keep_alive(keep_alive);
  res.body() = std::move(body);
  res.prepare_payload();
  pump();
}

void http_session::send_res(http::response<http::string_body>&& res) {
  if (fill_next_) {
    *std::exchange(fill_next_, nullptr) = std::move(res);
  } else {
    answers_.emplace_back(std::move(res));
  }
  pump();
}

void http_session::pump() {
  if (writing_ || answers_.empty() || !answers_.front()) {
    return;
  }
  writing_ = true;
  res_ = std::move(*answers_.front());
  answers_.pop_front();
  stream_.expires_after(std::chrono::seconds(30));
  http::async_write(
      stream_, res_,
      beast::bind_front_handler(&http_session::on_write, shared_from_this(), !res_.keep_alive()));
}

void http_session::on_write(bool close, beast::error_code ec, std::size_t) {
  writing_ = false;
  if (ec) {
    return;
  }
  if (close) {
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(std::chrono::seconds(2));
    drain_before_close();
    return;
  }
  if (!answers_.empty()) {
    pump();
    resume_reading();
    return;
  }
  // Every answer owed is written: what waited behind them goes on.
  paused_ = false;
  if (held_) {
    auto req = std::move(*held_);
    held_.reset();
    follow_unit_.reset();
    handle(std::move(req));
    return;
  }
  if (eof_) {
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    return;
  }
  if (!reading_) {
    follow_unit_.reset();
    do_read();
  }
}

void http_session::drain_before_close() {
  buffer_.consume(buffer_.size());
  stream_.async_read_some(buffer_.prepare(16 * 1024),
                          [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                            self->drained_ += n;
                            if (ec || self->drained_ > 1024 * 1024) {
                              return;  // EOF, the 2 s deadline, or enough: the socket closes
                            }
                            self->buffer_.commit(n);
                            self->drain_before_close();
                          });
}

}  // namespace weir::gateway

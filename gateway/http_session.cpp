// One HTTP/1.1 connection of a Weir node: reading requests (a bounded head and body), the
// checks every request gets (its correlation id, who asks, a UTF-8 target), then the route
// table (http_routes.cpp); and answering in request order, pipelined writes to one unit read
// ahead of their answers. The handlers are in one file per protocol family (*_handlers.cpp).
#include "gateway/http_session.hpp"

#include <utility>

#include "actors/random_ids.hpp"
#include "actors/runtime.hpp"
#include "core/correlation_id.hpp"
#include "core/origin.hpp"
#include "core/url.hpp"
#include "core/utf8.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/sse_head.hpp"
#include "log/log.hpp"

namespace weir::gateway {

namespace {
/// The request line and headers together (answered 431 past it).
constexpr std::size_t max_header_bytes = 16 * 1024;
// Answers a connection may owe (pipelined writes being applied, answers its client has not read
// yet) before Weir stops reading from it; the client's further requests then wait in TCP's
// buffers. Bounds one connection's claim on its unit's pending writes and the answers it holds.
constexpr std::size_t max_pipelined_writes = 32;
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
    // The head is complete, the body is not: answered 413 and the connection closed. Most
    // routes answer at once; those whose protocol puts other checks first (body_rule::
    // in_order) are dispatched without the body, and answer 413 where it belongs.
    keep_alive_ = false;
    auto req = parser_->release();
    route_match m{};
    std::tie(m.path, m.query) = core::split_target(req.target());
    m.body_too_large = true;
    if (const auto* r = find_route(req, m);
        r && (r->body == body_rule::in_order ||
              (r->body == body_rule::in_order_if_taken && !m.refusal))) {
      // Its answer's place among any still owed (read behind pipelined writes), taken now: it
      // may come later (the windowed API asks whether the space exists), and nothing is read
      // meanwhile.
      fill_next_ = &answers_.emplace_back();
      handle(std::move(req), true);
      return;
    }
    version_ = req.version();
    std::optional<std::string_view> inbound;
    if (auto it = req.find("X-Correlation-ID"); it != req.end()) {
      inbound = it->value();
    }
    correlation_ = core::correlation_id_for(inbound, actors::fast_uuid());
    respond(413, error_body(body_too_large(ctx_.opts.max_body_bytes)), true);
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

void http_session::handle(http::request<http::string_body>&& req, bool body_too_large) {
  head_ = req.method() == http::verb::head;
  version_ = req.version();
  keep_alive_ = req.keep_alive() && !body_too_large;
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
  route_match m{};
  std::tie(m.path, m.query) = core::split_target(req.target());
  m.body_too_large = body_too_large;
  dispatch(req, m);
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
  if (!retry_after_.empty()) {
    res.set(http::field::retry_after, retry_after_);
    retry_after_ = {};
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

void http_session::respond_auth(const core::error& e) {
  challenge_ = auth_status(e) == 401 ? bearer_challenge(e) : "";
  respond(auth_status(e), error_body(e));
}

bool http_session::refuse_if_draining() {
  if (!ctx_.draining) {
    return false;
  }
  respond(503, error_body(core::make_error("server.draining",
                                           "this node is shutting down; retry on another")));
  return true;
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

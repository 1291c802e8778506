// HTTP routing of a Weir node: /v1/spaces/... writes, /livez, and the WebSocket hub upgrade.
#include "gateway/http_session.hpp"

#include <boost/json/serialize.hpp>

#include "actors/runtime.hpp"
#include "core/url.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/write_api.hpp"
#include "gateway/ws_hub_session.hpp"

namespace weir::gateway {

namespace {
constexpr std::string_view ws_hub_path = "/.cratis/queries/ws";
}

http_session::http_session(tcp::socket&& socket, server_context& ctx)
    : stream_(std::move(socket)), ctx_(ctx) {}

void http_session::run() {
  asio::dispatch(stream_.get_executor(),
                 beast::bind_front_handler(&http_session::do_read, shared_from_this()));
}

void http_session::do_read() {
  head_ = false;
  parser_.emplace();
  parser_->body_limit(ctx_.opts.max_body_bytes);
  parser_->header_limit(16 * 1024);
  stream_.expires_after(std::chrono::seconds(60));
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&http_session::on_read, shared_from_this()));
}

void http_session::on_read(beast::error_code ec, std::size_t) {
  if (ec == http::error::end_of_stream) {
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    return;
  }
  if (ec == http::error::body_limit) {
    version_ = parser_->get().version();
    respond(413,
            error_body(core::make_error("request.too_large",
                                        "the body is larger than the configured limit of " +
                                            std::to_string(ctx_.opts.max_body_bytes) + " bytes",
                                        {{"limit", ctx_.opts.max_body_bytes}})),
            true);
    return;
  }
  if (ec) {
    return;  // timeout, reset, or unparsable request: nothing useful can be answered
  }
  handle(parser_->release());
}

void http_session::handle(http::request<http::string_body>&& req) {
  head_ = false;
  version_ = req.version();
  keep_alive_ = req.keep_alive();
  auto [path, query] = core::split_target(req.target());
  if (websocket::is_upgrade(req)) {
    if (path == ws_hub_path) {
      stream_.expires_never();
      std::make_shared<ws_hub_session>(stream_.release_socket(), ctx_)->run(std::move(req));
      return;
    }
    respond(404, error_body(core::make_error("route.not_found",
                                             "no WebSocket endpoint at " + std::string{path})));
    return;
  }
  head_ = req.method() == http::verb::head;
  if (path == "/livez" && (req.method() == http::verb::get || head_)) {
    respond(200, "{\"status\":\"ok\"}");
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
  if (ctx_.draining) {
    respond(503, error_body(core::make_error("server.draining",
                                             "this node is shutting down; retry on another")));
    return;
  }
  auto cmd = std::move(route->cmd);
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
  auto self = shared_from_this();
  ctx_.rt.submit(std::move(cmd), [self](core::result<actors::write_outcome> r) {
    asio::post(self->stream_.get_executor(), [self, r = std::move(r)]() mutable {
      if (r) {
        boost::json::object o;
        o["versionId"] = r->version_id;
        self->respond(200, boost::json::serialize(o));
      } else {
        self->respond(status_for(r.error()), error_body(r.error()));
      }
    });
  });
}

void http_session::respond_probe() {
  res_ = {};
  res_.version(version_);
  res_.result(200);
  res_.set(http::field::server, "weir");
  res_.set(http::field::content_type, "text/event-stream; charset=utf-8");
  res_.set(http::field::cache_control, "no-cache");
  res_.set("X-Accel-Buffering", "no");
  res_.keep_alive(keep_alive_);
  stream_.expires_after(std::chrono::seconds(30));
  http::async_write(
      stream_, res_,
      beast::bind_front_handler(&http_session::on_write, shared_from_this(), !res_.keep_alive()));
}

void http_session::respond(unsigned status, std::string body, bool close, std::string_view allow,
                           std::string_view upgrade) {
  res_ = {};
  res_.version(version_);
  res_.result(status);
  res_.set(http::field::server, "weir");
  res_.set(http::field::content_type, "application/json");
  res_.set(http::field::cache_control, "no-store");
  if (!allow.empty()) {
    res_.set(http::field::allow, allow);
  }
  if (!upgrade.empty()) {
    res_.set(http::field::upgrade, upgrade);
  }
  res_.keep_alive(keep_alive_ && !close);
  if (head_) {
    // HEAD: the headers GET would send, Content-Length included, and no body.
    res_.content_length(body.size());
  } else {
    res_.body() = std::move(body);
    res_.prepare_payload();
  }
  stream_.expires_after(std::chrono::seconds(30));
  http::async_write(
      stream_, res_,
      beast::bind_front_handler(&http_session::on_write, shared_from_this(), !res_.keep_alive()));
}

void http_session::on_write(bool close, beast::error_code ec, std::size_t) {
  if (ec) {
    return;
  }
  if (close) {
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    return;
  }
  do_read();
}

}  // namespace weir::gateway

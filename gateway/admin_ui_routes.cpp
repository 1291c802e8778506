// The admin page's routes (see admin_ui_routes.hpp): the static files with headers that let a
// browser run nothing but them (a Content-Security-Policy of 'self' only) and revalidate them
// by ETag, and the authorization of the data stream.
#include "gateway/admin_ui_routes.hpp"

#include "core/access_rule.hpp"
#include "gateway/admin_events_session.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/http_session.hpp"
#include "gateway/request_identity.hpp"
#include "gateway/ui_assets.hpp"

namespace weir::gateway {
namespace {

// The page's own files only: no inline script or style, no other origin, not framed (so no
// clickjacking of an operator's session), no forms.
constexpr std::string_view content_security_policy =
    "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The asset a path names: the page for /ui and /ui/, else the file after /ui/.
std::string_view asset_name(std::string_view path) {
  if (path == "/ui" || path == "/ui/") {
    return "index.html";
  }
  return path.substr(4);
}

/// Whether an If-None-Match header names `etag` (a list, or `*`).
bool matches_etag(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    auto comma = header.find(',');
    auto item = header.substr(0, comma);
    while (!item.empty() && item.front() == ' ') {
      item.remove_prefix(1);
    }
    while (!item.empty() && item.back() == ' ') {
      item.remove_suffix(1);
    }
    if (item.starts_with("W/")) {
      item.remove_prefix(2);  // a weak comparison is what If-None-Match asks for
    }
    if (item == etag || item == "*") {
      return true;
    }
    if (comma == std::string_view::npos) {
      break;
    }
    header.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

bool is_admin_ui_path(std::string_view path) {
  return path == "/ui" || path.starts_with("/ui/");
}

std::optional<core::error> admin_refusal(const server_context& ctx, const request_identity& id) {
  if (!ctx.opts.auth) {
    return std::nullopt;
  }
  if (id.refused) {
    return id.refused;
  }
  core::access_rule rule;
  rule.authenticated = true;
  rule.roles = {ctx.opts.admin_role};
  auto ok = core::check_access(rule, *id.who);
  if (ok) {
    return std::nullopt;
  }
  // check_access's code and details, with a message that names the setting to look at.
  auto e = std::move(ok).error();
  auto role = "'" + ctx.opts.admin_role + "' (auth.adminRole)";
  e.message = e.code == "auth.required"
                  ? "the admin page's data needs a signed-in caller with the role " + role
                  : "the admin page's data needs the role " + role;
  return e;
}

void http_session::serve_admin_file(http::request<http::string_body>& req, route_match& m) {
  const auto* asset = find_ui_asset(asset_name(m.path));
  if (!asset) {
    respond(404, error_body(core::make_error(
                     "route.not_found", "the admin page has no file at " + std::string{m.path})));
    return;
  }
  auto inm = header(req, http::field::if_none_match);
  respond_asset(*asset, inm && matches_etag(*inm, asset->etag));
}

void http_session::serve_admin_events(http::request<http::string_body>&, route_match&) {
  // The route checked the method, the Origin (an untrusted page must not read it with the
  // operator's cookie, as on the other streams a browser opens) and draining.
  if (auto e = admin_refusal(ctx_, id_)) {
    respond_auth(*e);
    return;
  }
  if (head_) {
    respond_probe();  // the stream's headers, nothing opened: how the page learns why it failed
    return;
  }
  // The stream takes the connection over; this session ends here.
  // With authentication on it ends with `closed{deauthorized}` when the admin's token expires.
  std::optional<std::int64_t> expires_at;
  if (ctx_.opts.auth && id_.who) {
    expires_at = id_.who->expires_at;
  }
  handed_over<admin_events_session>(std::move(stream_), ctx_, version_, correlation_, expires_at)
      ->run();
}

void http_session::respond_asset(const ui_asset& asset, bool not_modified) {
  http::response<http::string_body> res;
  res.version(version_);
  res.result(not_modified ? http::status::not_modified : http::status::ok);
  res.set(http::field::server, "weir");
  // Revalidated on every load: a node upgraded in place serves its new page at once, and an
  // unchanged one answers 304 without the bytes.
  res.set(http::field::cache_control, "no-cache");
  res.set(http::field::etag, asset.etag);
  res.set("Content-Security-Policy", content_security_policy);
  res.set("X-Content-Type-Options", "nosniff");
  res.set("Referrer-Policy", "no-referrer");
  res.set("X-Correlation-ID", correlation_);
  res.keep_alive(keep_alive_);
  if (!not_modified) {
    res.set(http::field::content_type, asset.content_type);
    if (head_) {
      res.content_length(asset.body.size());
    } else {
      res.body().assign(asset.body);
      res.prepare_payload();
    }
  }
  send_res(std::move(res));
}

}  // namespace weir::gateway

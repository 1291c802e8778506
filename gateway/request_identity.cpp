// weir::gateway request identity (see the header).
#include "gateway/request_identity.hpp"

#include <chrono>

#include "actors/budget.hpp"

namespace weir::gateway {

std::int64_t unix_now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

request_identity identify(const server_context& ctx, const http::request<http::string_body>& req,
                          std::string_view peer) {
  request_identity id;
  const auto& trusted = ctx.opts.trusted_proxies;
  id.client = core::client_address(trusted, peer, header(req, "X-Forwarded-For"));
  core::credential_sources in;
  in.authorization = header(req, "Authorization");
  in.cookie = header(req, "Cookie");
  auto target = std::string_view{req.target()};
  if (auto q = target.find('?'); q != std::string_view::npos) {
    in.query = target.substr(q + 1);
  }
  in.tenant_header = header(req, "x-cratis-tenant-id");
  in.websocket_upgrade = websocket::is_upgrade(req);
  in.from_trusted_proxy = core::is_trusted(trusted, peer);
  static const core::authenticator off;
  const auto& auth = ctx.opts.auth ? *ctx.opts.auth : off;
  auto who = auth.authenticate(in, unix_now_seconds());
  if (who) {
    id.who = std::move(*who);
  } else {
    id.refused = std::move(who).error();
  }
  return id;
}

unsigned auth_status(const core::error& e) {
  return e.code == "auth.forbidden" || e.code == "auth.tenant_forbidden" ? 403 : 401;
}

std::string bearer_challenge(const core::error& e) {
  std::string out = "Bearer realm=\"weir\"";
  if (e.code != "auth.required") {
    // RFC 6750 §3: quoted-string; the messages hold no quotes or backslashes, but be safe.
    std::string desc;
    for (char c : e.message) {
      if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) {
        desc.push_back(c);
      }
    }
    out += ", error=\"invalid_token\", error_description=\"" + desc + "\"";
  }
  return out;
}

std::string caller_of(const request_identity& id) {
  return actors::caller_key(*id.who, "anonymous-address", id.client);
}

}  // namespace weir::gateway

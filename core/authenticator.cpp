// weir::core::authenticator — credential extraction and tenant resolution.
#include "core/authenticator.hpp"

#include <boost/json/array.hpp>

#include "core/http_text.hpp"
#include "core/url.hpp"
#include "core/utf8.hpp"

namespace weir::core {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) {
      return false;
    }
  }
  return true;
}

/// The token an `access_token` query parameter carries, if any.
result<std::optional<std::string>> query_token(std::string_view query) {
  auto pairs = parse_query(query);
  if (!pairs) {
    return make_error("auth.invalid_token", "the query string has a bad %-escape");
  }
  std::optional<std::string> token;
  for (auto& [k, v] : *pairs) {
    if (k == "access_token") {
      if (token) {
        return make_error("auth.invalid_token", "access_token is given more than once");
      }
      token = std::move(v);
    }
  }
  return token;
}

}  // namespace

authenticator::authenticator(jwt_verifier verifier, authenticator_options options)
    : verifier_(std::move(verifier)), options_(std::move(options)) {}

result<std::shared_ptr<const principal>> authenticator::authenticate(const credential_sources& in,
                                                                     std::int64_t now) const {
  std::shared_ptr<const principal> who = anonymous_principal();
  if (verifier_) {
    std::optional<std::string> token;
    if (in.authorization) {
      auto h = trim_ows(*in.authorization);
      auto space = h.find(' ');
      if (space == std::string_view::npos || !iequals(h.substr(0, space), "bearer") ||
          trim_ows(h.substr(space + 1)).empty()) {
        return make_error("auth.invalid_token",
                          "the Authorization header must be 'Bearer <token>' (RFC 6750)");
      }
      token = std::string{trim_ows(h.substr(space + 1))};
    } else if (!options_.cookie.empty() && in.cookie) {
      if (auto c = cookie_value(*in.cookie, options_.cookie)) {
        token = std::string{*c};
      }
    }
    if (!token && options_.query_token && in.websocket_upgrade) {
      auto q = query_token(in.query);
      if (!q) {
        return std::move(q).error();
      }
      token = std::move(*q);
    }
    if (token) {
      auto p = verifier_->verify(*token, now);
      if (!p) {
        return std::move(p).error();
      }
      who = std::make_shared<const principal>(std::move(*p));
    }
  }
  if (in.tenant_header && !valid_utf8(*in.tenant_header)) {
    // Not echoed: the name would go out raw in JSON and in frames that must be UTF-8.
    return make_error("auth.tenant_forbidden", "x-cratis-tenant-id is not UTF-8 text");
  }
  if (in.tenant_header && *in.tenant_header != who->tenant) {
    std::string wanted{*in.tenant_header};
    bool allowed = in.from_trusted_proxy;
    if (!allowed && who->authenticated() && verifier_) {
      if (const auto* list = who->claims.if_contains(verifier_->options().tenants_claim);
          list && list->is_array()) {
        for (const auto& t : list->get_array()) {
          allowed = allowed || (t.is_string() && t.get_string() == wanted);
        }
      }
    }
    if (!allowed) {
      return make_error(
          "auth.tenant_forbidden",
          "x-cratis-tenant-id names tenant '" + wanted +
              "', which this caller may not select: the header is honoured only from a trusted "
              "proxy (http.trustedProxies) or when the token lists the tenant in its '" +
              (verifier_ ? verifier_->options().tenants_claim : std::string{"tenants"}) + "' claim",
          {{"tenant", wanted}});
    }
    auto p = std::make_shared<principal>(*who);
    p->tenant = std::move(wanted);
    who = std::move(p);
  }
  return who;
}

std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    auto semi = header.find(';');
    auto pair = trim_ows(header.substr(0, semi));
    header = semi == std::string_view::npos ? std::string_view{} : header.substr(semi + 1);
    auto eq = pair.find('=');
    if (eq == std::string_view::npos || trim_ows(pair.substr(0, eq)) != name) {
      continue;
    }
    auto v = trim_ows(pair.substr(eq + 1));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
      v = v.substr(1, v.size() - 2);
    }
    return v;
  }
  return std::nullopt;
}

std::string strip_access_token(std::string_view query) {
  std::string out;
  while (!query.empty()) {
    auto amp = query.find('&');
    auto part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (part == "access_token" || part.starts_with("access_token=")) {
      continue;
    }
    if (!out.empty()) {
      out += '&';
    }
    out += part;
  }
  return out;
}

}  // namespace weir::core

// weir::core::principal — the anonymous caller and the JSON form members exchange.
#include "core/principal.hpp"

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {

namespace json = boost::json;

bool principal::has_role(std::string_view role) const {
  for (const auto& r : roles) {
    if (r == role) {
      return true;
    }
  }
  return false;
}

const std::shared_ptr<const principal>& anonymous_principal() {
  static const auto anon = std::make_shared<const principal>();
  return anon;
}

std::string principal_to_json(const principal& p) {
  if (!p.authenticated() && p.tenant.empty()) {
    return {};
  }
  json::object o;
  o["sub"] = p.subject;
  o["tenant"] = p.tenant;
  json::array roles;
  for (const auto& r : p.roles) {
    roles.emplace_back(r);
  }
  o["roles"] = std::move(roles);
  o["claims"] = p.claims;
  if (p.expires_at) {
    o["exp"] = *p.expires_at;
  }
  return json::serialize(o);
}

result<principal> principal_from_json(std::string_view text) {
  principal p;
  if (text.empty()) {
    return p;
  }
  auto bad = [] {
    return make_error("cluster.mismatch", "a member sent a principal this member cannot read");
  };
  json::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_object()) {
    return bad();
  }
  const auto& o = v.get_object();
  const auto* sub = o.if_contains("sub");
  const auto* tenant = o.if_contains("tenant");
  const auto* roles = o.if_contains("roles");
  const auto* claims = o.if_contains("claims");
  if (!sub || !sub->is_string() || !tenant || !tenant->is_string() || !roles ||
      !roles->is_array() || !claims || !claims->is_object()) {
    return bad();
  }
  p.subject = std::string{sub->get_string()};
  p.tenant = std::string{tenant->get_string()};
  for (const auto& r : roles->get_array()) {
    if (!r.is_string()) {
      return bad();
    }
    p.roles.emplace_back(r.get_string());
  }
  p.claims = claims->get_object();
  if (const auto* exp = o.if_contains("exp"); exp && exp->is_int64()) {
    p.expires_at = exp->get_int64();
  }
  return p;
}

}  // namespace weir::core

// weir::core::access_rule — parsing and checking.
#include "core/access_rule.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace weir::core {

namespace json = boost::json;

namespace {

error rule_error(std::string_view field, std::string why) {
  return make_error("config.invalid", std::string{field} + ": " + why,
                    {{"field", std::string{field}}});
}

bool claim_matches(const json::value& claim, const json::value& wanted) {
  if (claim == wanted) {
    return true;
  }
  if (claim.is_array()) {
    for (const auto& e : claim.get_array()) {
      if (e == wanted) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

result<access_rule> parse_access_rule(const json::value& v, std::string_view field) {
  access_rule rule;
  if (v.is_null()) {
    return rule;
  }
  if (v.is_string()) {
    if (v.get_string() == "anonymous") {
      return rule;
    }
    if (v.get_string() == "authenticated") {
      rule.authenticated = true;
      return rule;
    }
    return rule_error(field, "'" + std::string{v.get_string()} +
                                 "' is not a rule (anonymous, authenticated, or "
                                 "{roles: [...], claims: {...}})");
  }
  if (!v.is_object()) {
    return rule_error(field, "must be anonymous, authenticated, or {roles: [...], claims: {...}}");
  }
  rule.authenticated = true;
  for (const auto& kv : v.get_object()) {
    if (kv.key() == "roles") {
      if (!kv.value().is_array() || kv.value().get_array().empty()) {
        return rule_error(field, "roles must be a non-empty list of role names");
      }
      for (const auto& r : kv.value().get_array()) {
        if (!r.is_string() || r.get_string().empty()) {
          return rule_error(field, "roles must be a non-empty list of role names");
        }
        rule.roles.emplace_back(r.get_string());
      }
    } else if (kv.key() == "claims") {
      if (!kv.value().is_object() || kv.value().get_object().empty()) {
        return rule_error(field, "claims must map claim names to the values they must have");
      }
      for (const auto& c : kv.value().get_object()) {
        if (c.value().is_object() || c.value().is_array() || c.value().is_null()) {
          return rule_error(field, "claims." + std::string{c.key()} +
                                       ": a required claim value must be a string, number or "
                                       "boolean");
        }
        rule.claims.emplace_back(std::string{c.key()}, c.value());
      }
    } else {
      return rule_error(field,
                        "unknown member '" + std::string{kv.key()} + "' (known: roles, claims)");
    }
  }
  return rule;
}

result<void> check_access(const access_rule& rule, const principal& who) {
  if (rule.anonymous()) {
    return {};
  }
  if (!who.authenticated()) {
    return make_error("auth.required", "sign in first: this needs an authenticated caller");
  }
  if (!rule.roles.empty()) {
    bool any = false;
    for (const auto& r : rule.roles) {
      any = any || who.has_role(r);
    }
    if (!any) {
      json::array wanted;
      for (const auto& r : rule.roles) {
        wanted.emplace_back(r);
      }
      return make_error("auth.forbidden", "this needs one of the roles the rule names",
                        {{"roles", std::move(wanted)}});
    }
  }
  for (const auto& [name, value] : rule.claims) {
    const auto* c = who.claims.if_contains(name);
    if (!c || !claim_matches(*c, value)) {
      return make_error("auth.forbidden", "this needs the claim '" + name + "' with another value",
                        {{"claim", name}});
    }
  }
  return {};
}

}  // namespace weir::core

// The `auth` section of weir.yaml: JWT verification (a secret, public keys or a JWKS file, the
// claims that name subjects, tenants and roles), who may open a hub connection, the admin role.
#include "apps/config/config_reader.hpp"
#include "core/authenticator.hpp"

namespace weir::config::reader {

result<void> read_auth(std::string_view file, const json::object& root, auth_settings& auth) {
  auto s = open_section(file, root, "auth", keys_of("auth"));
  if (!s) {
    return std::move(s).error();
  }
  auto admin_role = s->text("adminRole");
  if (!admin_role) {
    return std::move(admin_role).error();
  }
  if (*admin_role) {
    auth.admin_role = std::move(**admin_role);
  }
  if (const auto* v = s->get("hubs")) {
    auto rule = core::parse_access_rule(*v, "auth.hubs");
    if (!rule) {
      return config_error(file, "auth.hubs", rule.error().message);
    }
    auth.hubs = std::move(*rule);
  }
  if (const auto* v = root.if_contains("spaces"); v && !v->is_null()) {
    auto rules = core::parse_space_rules(*v);
    if (!rules) {
      return config_error(file, "spaces", rules.error().message);
    }
    auth.spaces = std::move(*rules);
  }
  if (s->obj == nullptr || s->get("jwt") == nullptr) {
    if (!auth.hubs.anonymous()) {
      return config_error(file, "auth.hubs", "needs auth.jwt: without it nobody is signed in");
    }
    if (s->get("adminRole") != nullptr) {
      // A role nobody can hold would read as a closed page while its data is open to all.
      return config_error(file, "auth.adminRole",
                          "needs auth.jwt: without it nobody is signed in and the admin page's "
                          "data is open");
    }
    return {};
  }
  auto j = open_section(file, *s->obj, "jwt", keys_of("auth.jwt"), "auth.jwt");
  if (!j) {
    return std::move(j).error();
  }
  core::jwt_options o;
  core::jwt_key_material keys;
  core::authenticator_options ao;
  auto text = [&](std::string_view key, std::string& out) -> result<void> {
    auto t = j->text(key);
    if (!t) {
      return std::move(t).error();
    }
    if (*t) {
      out = std::move(**t);
    }
    return {};
  };
  auto flag = [&](std::string_view key, bool& out) -> result<void> {
    if (const auto* v = j->get(key)) {
      if (!v->is_bool()) {
        return config_error(file, j->path(key), "must be true or false");
      }
      out = v->get_bool();
    }
    return {};
  };
  WEIR_TRY(text("secret", keys.secret));
  std::string secret_file, jwks_file;
  WEIR_TRY(text("secretFile", secret_file));
  WEIR_TRY(text("jwksFile", jwks_file));
  if (!secret_file.empty()) {
    if (!keys.secret.empty()) {
      return config_error(file, j->path("secretFile"), "give secret or secretFile, not both");
    }
    auto t = read_named_file(file, j->path("secretFile"), secret_file);
    if (!t) {
      return std::move(t).error();
    }
    keys.secret = std::move(*t);
    while (!keys.secret.empty() && (keys.secret.back() == '\n' || keys.secret.back() == '\r')) {
      keys.secret.pop_back();  // a file written by `echo` ends in a newline that is not the key
    }
  }
  if (!jwks_file.empty()) {
    auto t = read_named_file(file, j->path("jwksFile"), jwks_file);
    if (!t) {
      return std::move(t).error();
    }
    keys.jwks = std::move(*t);
  }
  if (const auto* v = j->get("publicKeyFiles")) {
    if (!v->is_array()) {
      return config_error(file, j->path("publicKeyFiles"), "must be a list of PEM file paths");
    }
    for (const auto& f : v->get_array()) {
      if (!f.is_string() || f.get_string().empty()) {
        return config_error(file, j->path("publicKeyFiles"), "must be a list of PEM file paths");
      }
      auto t = read_named_file(file, j->path("publicKeyFiles"), std::string{f.get_string()});
      if (!t) {
        return std::move(t).error();
      }
      keys.public_pems.push_back(std::move(*t));
    }
  }
  WEIR_TRY(text("issuer", o.issuer));
  WEIR_TRY(text("audience", o.audience));
  WEIR_TRY(text("cookie", ao.cookie));
  WEIR_TRY(text("subjectClaim", o.subject_claim));
  WEIR_TRY(text("tenantClaim", o.tenant_claim));
  WEIR_TRY(text("tenantsClaim", o.tenants_claim));
  WEIR_TRY(text("rolesClaim", o.roles_claim));
  // Not a node_config field (the verifier's own option): read here, not from integer_keys().
  auto skew = j->integer("clockSkewSeconds", 0, 300);
  if (!skew) {
    return std::move(skew).error();
  }
  if (*skew) {
    o.clock_skew = std::chrono::seconds{**skew};
  }
  WEIR_TRY(flag("requireExpiry", o.require_expiry));
  WEIR_TRY(flag("queryParameter", ao.query_token));
  auto verifier = core::jwt_verifier::create(std::move(o), keys);
  if (!verifier) {
    return config_error(file, "auth.jwt", verifier.error().message);
  }
  auth.authenticator =
      std::make_shared<const core::authenticator>(std::move(*verifier), std::move(ao));
  return {};
}

}  // namespace weir::config::reader

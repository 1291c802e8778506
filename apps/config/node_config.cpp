// weir::config — loads weir.yaml: YAML → JSON (one value model for every check, and the one the
// query parser in core/ already speaks), then section-by-section validation with strict keys.
#include "apps/config/node_config.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

#include <yaml-cpp/yaml.h>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

namespace weir::config {

/// YAML → JSON. Scalars: null/~/empty → null, true/false → bool, integers → int64, floats →
/// double, anything else → string; quoted and block scalars are always strings. For a map with a
/// repeated key the last value wins (load_config_text refuses repeated keys before this matters).
boost::json::value yaml_to_json(const YAML::Node& n);

namespace {

namespace json = boost::json;
using core::make_error;
using core::result;

constexpr std::string_view config_invalid = "config.invalid";

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// YAML 1.2 core-schema booleans.
std::optional<bool> plain_bool(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") {
    return true;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    return false;
  }
  return std::nullopt;
}

// [-+]?[0-9]+
bool looks_integer(std::string_view s) {
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size()) {
    return false;
  }
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i])) {
      return false;
    }
  }
  return true;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? — checked by hand because from_chars would
// also take words such as "nan" and "inf", which YAML reads as strings.
bool looks_float(std::string_view s) {
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  std::size_t int_digits = 0;
  std::size_t frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) {
    ++i;
    ++int_digits;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) {
      ++i;
      ++frac_digits;
    }
  }
  if (int_digits + frac_digits == 0) {
    return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
      ++i;
    }
    std::size_t exp_digits = 0;
    while (i < s.size() && is_digit(s[i])) {
      ++i;
      ++exp_digits;
    }
    if (exp_digits == 0) {
      return false;
    }
  }
  return i == s.size();
}

json::value plain_scalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    return nullptr;
  }
  if (auto b = plain_bool(s)) {
    return *b;
  }
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (looks_integer(s)) {
    std::int64_t n = 0;
    auto [ptr, ec] = std::from_chars(first + (s[0] == '+' ? 1 : 0), last, n);
    if (ec == std::errc{} && ptr == last) {
      return n;
    }
    return json::string(s);  // out of int64 range: keep the text, the reader will refuse it
  }
  if (looks_float(s)) {
    double d = 0.0;
    auto [ptr, ec] = std::from_chars(first + (s[0] == '+' ? 1 : 0), last, d);
    if (ec == std::errc{} && ptr == last) {
      return d;
    }
  }
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF") {
    return std::numeric_limits<double>::infinity();
  }
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") {
    return -std::numeric_limits<double>::infinity();
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return json::string(s);
}

// Finds what yaml_to_json would silently paper over: repeated keys and non-scalar keys.
std::optional<std::string> structural_problem(const YAML::Node& n, const std::string& where) {
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) {
      if (auto p = structural_problem(n[i], where + "[" + std::to_string(i) + "]")) {
        return p;
      }
    }
  } else if (n.IsMap()) {
    std::vector<std::string> seen;
    for (const auto& kv : n) {
      const std::string line = "line " + std::to_string(kv.first.Mark().line + 1);
      if (!kv.first.IsScalar()) {
        return line + ": mapping keys must be plain text" +
               (where.empty() ? "" : " (in '" + where + "')");
      }
      const std::string& key = kv.first.Scalar();
      const std::string path = where.empty() ? key : where + "." + key;
      for (const auto& s : seen) {
        if (s == key) {
          return line + ": key '" + path + "' appears more than once";
        }
      }
      seen.push_back(key);
      if (auto p = structural_problem(kv.second, path)) {
        return p;
      }
    }
  }
  return std::nullopt;
}

// ---- validation helpers ---------------------------------------------------------------------

core::error config_error(std::string_view file, const std::string& field, const std::string& why) {
  json::object details;
  details["file"] = file;
  details["field"] = field;
  return make_error(std::string(config_invalid),
                    std::string(file) + ": field '" + field + "': " + why, std::move(details));
}

std::string join(std::initializer_list<std::string_view> names) {
  std::string out;
  for (auto n : names) {
    out += out.empty() ? "" : ", ";
    out += n;
  }
  return out;
}

// A section: a mapping (or absent/null = all defaults) whose keys must all be known.
struct section {
  std::string_view file;
  std::string name;
  const json::object* obj = nullptr;

  std::string path(std::string_view key) const {
    return name.empty() ? std::string(key) : name + "." + std::string(key);
  }

  const json::value* get(std::string_view key) const {
    if (obj == nullptr) {
      return nullptr;
    }
    auto it = obj->find(key);
    if (it == obj->end() || it->value().is_null()) {
      return nullptr;
    }
    return &it->value();
  }

  result<std::optional<std::int64_t>> integer(std::string_view key, std::int64_t min,
                                              std::int64_t max) const {
    const json::value* v = get(key);
    if (v == nullptr) {
      return std::optional<std::int64_t>{};
    }
    std::optional<std::int64_t> n;
    if (v->is_int64()) {
      n = v->get_int64();
    } else if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(max)) {
      n = static_cast<std::int64_t>(v->get_uint64());
    }
    if (!n) {
      return config_error(
          file, path(key),
          "must be an integer between " + std::to_string(min) + " and " + std::to_string(max));
    }
    if (*n < min || *n > max) {
      return config_error(file, path(key),
                          "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                              " (got " + std::to_string(*n) + ")");
    }
    return n;
  }

  result<std::optional<std::string>> text(std::string_view key) const {
    const json::value* v = get(key);
    if (v == nullptr) {
      return std::optional<std::string>{};
    }
    if (!v->is_string() || v->get_string().empty()) {
      return config_error(file, path(key), "must be a non-empty string");
    }
    return std::optional<std::string>(std::string(v->get_string()));
  }
};

// `display`: the section's full dotted name in messages when it is nested ("auth.jwt").
result<section> open_section(std::string_view file, const json::object& root, std::string name,
                             std::initializer_list<std::string_view> keys,
                             std::string display = {}) {
  section s{file, display.empty() ? name : display, nullptr};
  auto it = root.find(name);
  if (it == root.end() || it->value().is_null()) {
    return s;
  }
  if (!it->value().is_object()) {
    return config_error(file, s.name, "must be a mapping (keys: " + join(keys) + ")");
  }
  s.obj = &it->value().get_object();
  for (const auto& kv : *s.obj) {
    bool known = false;
    for (auto k : keys) {
      known = known || kv.key() == k;
    }
    if (!known) {
      return config_error(file, s.path(kv.key()), "unknown key (known: " + join(keys) + ")");
    }
  }
  return s;
}

// "host:port", "[v6]:port"; port 0 means "pick a free one".
result<void> read_endpoint(const section& s, std::string_view key, std::string& host,
                           std::uint16_t& port) {
  auto t = s.text(key);
  if (!t) {
    return std::move(t).error();
  }
  if (!*t) {
    return {};
  }
  const std::string& text = **t;
  auto bad = [&] {
    return config_error(s.file, s.path(key),
                        "must be \"host:port\" with a port 0..65535 (got \"" + text + "\")");
  };
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return bad();
  }
  std::string h = text.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
  }
  std::string_view p = std::string_view(text).substr(colon + 1);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (h.empty() || ec != std::errc{} || ptr != p.data() + p.size() || value > 65535) {
    return bad();
  }
  host = std::move(h);
  port = static_cast<std::uint16_t>(value);
  return {};
}

// Assigns an integer option to `out` when present; `out` keeps its default otherwise.
template <class T>
result<void> assign(const section& s, std::string_view key, std::int64_t min, std::int64_t max,
                    T& out) {
  auto v = s.integer(key, min, max);
  if (!v) {
    return std::move(v).error();
  }
  if (*v) {
    out = static_cast<T>(**v);
  }
  return {};
}

#define WEIR_TRY(expr)              \
  do {                              \
    if (auto r_ = (expr); !r_) {    \
      return std::move(r_).error(); \
    }                               \
  } while (false)

// A file named in the configuration: relative paths are relative to the file's own directory.
result<std::string> read_named_file(std::string_view file, const std::string& key,
                                    const std::string& name) {
  std::string path = name;
  if (!path.empty() && path.front() != '/') {
    if (auto slash = std::string_view{file}.rfind('/'); slash != std::string_view::npos) {
      path = std::string{file.substr(0, slash + 1)} + path;
    }
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) {
    text << in.rdbuf();
  }
  if (!in || in.bad()) {
    return config_error(file, key, "cannot read '" + path + "'");
  }
  return text.str();
}

result<void> read_auth(std::string_view file, const json::object& root, auth_settings& auth) {
  auto s = open_section(file, root, "auth", {"jwt", "hubs", "adminRole"});
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
  auto j = open_section(file, *s->obj, "jwt",
                        {"secret", "secretFile", "publicKeyFiles", "jwksFile", "issuer", "audience",
                         "cookie", "subjectClaim", "tenantClaim", "tenantsClaim", "rolesClaim",
                         "clockSkewSeconds", "requireExpiry", "queryParameter"},
                        "auth.jwt");
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
  std::int64_t skew = o.clock_skew.count();
  WEIR_TRY(assign(*j, "clockSkewSeconds", 0, 300, skew));
  o.clock_skew = std::chrono::seconds{skew};
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

result<void> read_node(std::string_view file, const json::object& root, node_config& cfg) {
  auto s = open_section(file, root, "node",
                        {"http", "grpc", "peer", "dataDir", "ioThreads", "actorThreads"});
  if (!s) {
    return std::move(s).error();
  }
  WEIR_TRY(read_endpoint(*s, "http", cfg.http_address, cfg.http_port));
  WEIR_TRY(read_endpoint(*s, "grpc", cfg.grpc_address, cfg.grpc_port));
  WEIR_TRY(read_endpoint(*s, "peer", cfg.peer_address, cfg.peer_port));
  auto dir = s->text("dataDir");
  if (!dir) {
    return std::move(dir).error();
  }
  if (*dir) {
    cfg.data_dir = **dir;
  }
  WEIR_TRY(assign(*s, "ioThreads", 1, 256, cfg.io_threads));
  WEIR_TRY(assign(*s, "actorThreads", 1, 256, cfg.actor_threads));
  return {};
}

// "host:port" with a non-zero port (members must be reachable at a fixed address).
bool endpoint_ok(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return false;
  }
  auto p = text.substr(colon + 1);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  return ec == std::errc{} && ptr == p.data() + p.size() && value > 0 && value <= 65535;
}

result<void> read_cluster(std::string_view file, const json::object& root, cluster_settings& c) {
  auto s =
      open_section(file, root, "cluster",
                   {"nodeId", "members", "heartbeatIntervalMs", "suspectAfterMs", "downAfterMs",
                    "ownerUnavailableErrorMs", "forwardTimeoutMs", "maxStreamQueueBytes", "token",
                    "tokenFile", "tls", "advertise", "leaseMs", "leaseRenewMs"});
  if (!s) {
    return std::move(s).error();
  }
  // Peer authentication: a shared token, mutual TLS, or both.
  {
    auto token = s->text("token");
    auto token_file = s->text("tokenFile");
    if (!token) {
      return std::move(token).error();
    }
    if (!token_file) {
      return std::move(token_file).error();
    }
    if (*token && *token_file) {
      return config_error(file, "cluster.tokenFile", "give token or tokenFile, not both");
    }
    if (*token) {
      c.token = **token;
    } else if (*token_file) {
      auto t = read_named_file(file, "cluster.tokenFile", **token_file);
      if (!t) {
        return std::move(t).error();
      }
      c.token = std::move(*t);
      while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r')) {
        c.token.pop_back();
      }
    }
    if (!c.token.empty() && c.token.size() < 32) {
      return config_error(file, *token ? "cluster.token" : "cluster.tokenFile",
                          "the peer token must be at least 32 bytes (use a random one)");
    }
    if (s->obj != nullptr && s->get("tls") != nullptr) {
      auto t = open_section(file, *s->obj, "tls", {"certFile", "keyFile", "caFile"}, "cluster.tls");
      if (!t) {
        return std::move(t).error();
      }
      for (auto [key, out] :
           {std::pair{"certFile", &c.tls.cert_pem}, std::pair{"keyFile", &c.tls.key_pem},
            std::pair{"caFile", &c.tls.ca_pem}}) {
        auto name = t->text(key);
        if (!name) {
          return std::move(name).error();
        }
        if (!*name) {
          return config_error(file, t->path(key), "is required");
        }
        auto pem = read_named_file(file, t->path(key), **name);
        if (!pem) {
          return std::move(pem).error();
        }
        *out = std::move(*pem);
      }
    }
  }
  auto id = s->text("nodeId");
  if (!id) {
    return std::move(id).error();
  }
  if (*id) {
    c.node_id = **id;
  }
  WEIR_TRY(assign(*s, "heartbeatIntervalMs", 10, 60000, c.heartbeat_interval_ms));
  WEIR_TRY(assign(*s, "suspectAfterMs", 10, 600000, c.suspect_after_ms));
  WEIR_TRY(assign(*s, "downAfterMs", 10, 600000, c.down_after_ms));
  WEIR_TRY(assign(*s, "ownerUnavailableErrorMs", 0, 86400000, c.owner_unavailable_error_ms));
  WEIR_TRY(assign(*s, "forwardTimeoutMs", 10, 600000, c.forward_timeout_ms));
  WEIR_TRY(
      assign(*s, "maxStreamQueueBytes", 65536, std::int64_t{1} << 30, c.max_stream_queue_bytes));
  if (c.down_after_ms <= c.suspect_after_ms) {
    return config_error(file, "cluster.downAfterMs", "must be greater than cluster.suspectAfterMs");
  }
  WEIR_TRY(assign(*s, "leaseMs", 500, 600000, c.lease_ms));
  WEIR_TRY(assign(*s, "leaseRenewMs", 50, 300000, c.lease_renew_ms));
  if (c.lease_renew_ms * 2 > c.lease_ms) {
    return config_error(file, "cluster.leaseRenewMs", "must be at most half of cluster.leaseMs");
  }
  if (s->obj != nullptr && s->get("advertise") != nullptr) {
    auto a = open_section(file, *s->obj, "advertise", {"peer", "http"}, "cluster.advertise");
    if (!a) {
      return std::move(a).error();
    }
    for (auto [key, out] :
         {std::pair{"peer", &c.advertise_peer}, std::pair{"http", &c.advertise_http}}) {
      auto t = a->text(key);
      if (!t) {
        return std::move(t).error();
      }
      if (!*t) {
        return config_error(file, a->path(key), "is required (\"host:port\")");
      }
      *out = **t;
    }
  }
  if (const json::value* m = s->get("members")) {
    if (!m->is_array()) {
      return config_error(file, "cluster.members",
                          "must be a list of {id, peer: \"host:port\", http: \"host:port\"}");
    }
    std::size_t i = 0;
    for (const auto& v : m->get_array()) {
      auto where = "cluster.members[" + std::to_string(i++) + "]";
      json::object holder;
      holder[where] = v;
      auto ms = open_section(file, holder, where, {"id", "peer", "http"});
      if (!ms) {
        return std::move(ms).error();
      }
      cluster_member member;
      for (auto [key, out] : {std::pair{"id", &member.id}, std::pair{"peer", &member.peer},
                              std::pair{"http", &member.http}}) {
        auto t = ms->text(key);
        if (!t) {
          return std::move(t).error();
        }
        if (!*t) {
          return config_error(file, ms->path(key), "is required");
        }
        *out = **t;
      }
      c.members.push_back(std::move(member));
    }
  }
  if (auto r = validate_cluster(c, false); !r) {
    return config_error(file, "cluster", r.error().message);
  }
  return {};
}

result<void> read_hub(std::string_view file, const json::object& root, hub_limits& hub) {
  constexpr std::int64_t mib = 1 << 20;
  auto s = open_section(file, root, "query",
                        {"keepAliveIntervalMs",
                         "maxObservableHubConnections",
                         "maxObservableHubConnectionsPerCaller",
                         "maxObservableHubConnectionsPerAddress",
                         "maxObservableHubSubscriptionsPerConnection",
                         "maxObservableSubscriptions",
                         "maxObservableSubscriptionsPerCaller",
                         "maxObservableInboundFrames",
                         "maxObservableOutboundFrames",
                         "maxObservableInboundFrameBytes",
                         "maxObservableOutboundFrameBytes",
                         "maxOutboundQueueBytes",
                         "maxObservableTombstones",
                         "tombstoneRetentionMs",
                         "observableShutdownTimeoutMs",
                         "healthIntervalMs",
                         "allowedOrigins",
                         "allowNullOrigin",
                         "maxSortIndexesPerDataset",
                         "agentRunMaxMs"});
  if (!s) {
    return std::move(s).error();
  }
  // Zero or negative disables keep-alive and is advertised as 0 (arc-hub §6, seed 003).
  WEIR_TRY(assign(*s, "keepAliveIntervalMs", std::numeric_limits<std::int32_t>::min(), 3600000,
                  hub.keep_alive_interval_ms));
  hub.keep_alive_interval_ms = std::max<std::int64_t>(0, hub.keep_alive_interval_ms);
  WEIR_TRY(assign(*s, "maxObservableHubConnections", 1, 100000, hub.max_hub_connections));
  // Per-caller budgets default to the global one as configured (seed 001).
  hub.max_hub_connections_per_caller = hub.max_hub_connections;
  WEIR_TRY(assign(*s, "maxObservableHubConnectionsPerCaller", 1, 100000,
                  hub.max_hub_connections_per_caller));
  // Not in Arc: one client address gets an eighth of the node's slots unless set (but not fewer
  // than 64, or all of a smaller node's), so that one host cannot hold them all; raise it for a
  // proxy that does not forward client addresses.
  hub.max_hub_connections_per_address = std::max<std::size_t>(
      std::min<std::size_t>(hub.max_hub_connections, 64), hub.max_hub_connections / 8);
  WEIR_TRY(assign(*s, "maxObservableHubConnectionsPerAddress", 1, 100000,
                  hub.max_hub_connections_per_address));
  WEIR_TRY(assign(*s, "maxObservableHubSubscriptionsPerConnection", 1, 10000,
                  hub.max_subscriptions_per_connection));
  WEIR_TRY(assign(*s, "maxObservableSubscriptions", 1, 100000, hub.max_subscriptions));
  hub.max_subscriptions_per_caller = hub.max_subscriptions;
  WEIR_TRY(assign(*s, "maxObservableSubscriptionsPerCaller", 1, 100000,
                  hub.max_subscriptions_per_caller));
  WEIR_TRY(assign(*s, "maxObservableInboundFrames", 1, 10000, hub.max_inbound_frames));
  WEIR_TRY(assign(*s, "maxObservableOutboundFrames", 1, 10000, hub.max_outbound_frames));
  WEIR_TRY(assign(*s, "maxObservableInboundFrameBytes", 1, 16 * mib, hub.max_inbound_frame_bytes));
  WEIR_TRY(
      assign(*s, "maxObservableOutboundFrameBytes", 1, 16 * mib, hub.max_outbound_frame_bytes));
  WEIR_TRY(assign(*s, "maxOutboundQueueBytes", 1, 1024 * mib, hub.max_outbound_queue_bytes));
  if (hub.max_outbound_queue_bytes < hub.max_outbound_frame_bytes) {
    // Otherwise one largest permitted frame would already overflow the queue.
    return config_error(file, s->path("maxOutboundQueueBytes"),
                        "must be at least maxObservableOutboundFrameBytes (" +
                            std::to_string(hub.max_outbound_frame_bytes) + ")");
  }
  WEIR_TRY(assign(*s, "maxObservableTombstones", 1, 100000, hub.max_tombstones));
  // Not in Arc: each distinct sort of a dataset's windows holds an index over every record.
  WEIR_TRY(assign(*s, "maxSortIndexesPerDataset", 1, 1024, hub.max_sort_indexes_per_dataset));
  WEIR_TRY(assign(*s, "tombstoneRetentionMs", 1, 86400000, hub.tombstone_retention_ms));
  WEIR_TRY(assign(*s, "observableShutdownTimeoutMs", 0, 600000, hub.shutdown_timeout_ms));
  WEIR_TRY(assign(*s, "healthIntervalMs", 10, 60000, hub.health_interval_ms));
  // Not in Arc: an AG-UI agent run over a state stream ends with RUN_FINISHED after this long.
  WEIR_TRY(assign(*s, "agentRunMaxMs", 100, 86400000, hub.agent_run_max_ms));
  // Browser origins trusted besides the request's own (arc-hub §8): exact origins such as
  // "https://app.example.com", without paths.
  if (const auto* v = s->get("allowedOrigins")) {
    if (!v->is_array()) {
      return config_error(file, s->path("allowedOrigins"), "must be a list of origins");
    }
    for (const auto& o : v->get_array()) {
      if (!o.is_string() || o.get_string().empty()) {
        return config_error(file, s->path("allowedOrigins"),
                            "must hold origins like \"https://app.example.com\"");
      }
      hub.allowed_origins.emplace_back(o.get_string());
    }
  }
  if (const auto* v = s->get("allowNullOrigin")) {
    if (!v->is_bool()) {
      return config_error(file, s->path("allowNullOrigin"), "must be true or false");
    }
    hub.allow_null_origin = v->get_bool();
  }
  return {};
}

result<void> read_queries(std::string_view file, const json::object& root, node_config& cfg) {
  auto it = root.find("queries");
  if (it == root.end()) {
    return {};
  }
  auto queries = core::parse_query_definitions(it->value());
  if (!queries) {
    core::error e = std::move(queries).error();
    e.message = std::string(file) + ": " + e.message;
    e.details["file"] = file;
    return e;
  }
  cfg.queries = std::move(*queries);
  return {};
}

result<node_config> validate(std::string_view file, const json::value& doc) {
  node_config cfg;
  if (doc.is_null()) {
    return cfg;  // an empty file: every default
  }
  if (!doc.is_object()) {
    json::object details;
    details["file"] = file;
    return make_error(std::string(config_invalid),
                      std::string(file) + ": the top level must be a mapping", std::move(details));
  }
  const json::object& root = doc.get_object();
  const std::initializer_list<std::string_view> sections = {
      "node",    "http", "store",  "query",   "windowed", "records",
      "cluster", "auth", "spaces", "queries", "log"};
  for (const auto& kv : root) {
    bool known = false;
    for (auto k : sections) {
      known = known || kv.key() == k;
    }
    if (!known) {
      return config_error(file, kv.key(), "unknown key (known: " + join(sections) + ")");
    }
  }
  WEIR_TRY(read_node(file, root, cfg));
  {
    auto s =
        open_section(file, root, "http",
                     {"maxBodyBytes", "trustedProxies", "maxConnections", "maxConnectionsPerClient",
                      "maxDataCallsInFlight", "sendStallTimeoutMs"});
    if (!s) {
      return std::move(s).error();
    }
    WEIR_TRY(assign(*s, "maxBodyBytes", 1, std::int64_t{256} << 20, cfg.max_body_bytes));
    WEIR_TRY(assign(*s, "maxConnections", 1, 1000000, cfg.max_connections));
    cfg.max_connections_per_client = std::min(cfg.max_connections_per_client, cfg.max_connections);
    WEIR_TRY(assign(*s, "maxConnectionsPerClient", 1, 1000000, cfg.max_connections_per_client));
    WEIR_TRY(assign(*s, "maxDataCallsInFlight", 1, 1000000, cfg.max_data_calls_in_flight));
    WEIR_TRY(assign(*s, "sendStallTimeoutMs", 1000, 600000, cfg.send_stall_timeout_ms));
    if (const auto* v = s->get("trustedProxies")) {
      auto bad = [&] {
        return config_error(file, s->path("trustedProxies"),
                            "must be a list of addresses or CIDR ranges such as \"10.0.0.0/8\"");
      };
      if (!v->is_array()) {
        return bad();
      }
      for (const auto& e : v->get_array()) {
        std::optional<core::ip_network> n;
        if (e.is_string()) {
          n = core::ip_network::parse(std::string_view{e.get_string()});
        }
        if (!n) {
          return bad();
        }
        cfg.auth.trusted_proxies.push_back(*n);
      }
    }
  }
  WEIR_TRY(read_auth(file, root, cfg.auth));
  {
    auto s = open_section(file, root, "store",
                          {"backend", "postgres", "queueCapacity", "maxPendingWritesPerUnit",
                           "unitIdleMs", "idempotencyKeyTtlMs", "maxIdempotencyKeysPerUnit"});
    if (!s) {
      return std::move(s).error();
    }
    auto backend = s->text("backend");
    if (!backend) {
      return std::move(backend).error();
    }
    if (*backend) {
      if (**backend != "embedded" && **backend != "postgres") {
        return config_error(file, s->path("backend"),
                            "must be \"embedded\" or \"postgres\" (got \"" + **backend + "\")");
      }
      cfg.store_backend = **backend;
    }
    if (s->obj) {
      auto pg = open_section(file, *s->obj, "postgres", {"url", "changeCapture"}, "store.postgres");
      if (!pg) {
        return std::move(pg).error();
      }
      auto url = pg->text("url");
      if (!url) {
        return std::move(url).error();
      }
      if (*url) {
        cfg.postgres_url = **url;
      }
      if (const auto* v = pg->get("changeCapture")) {
        if (!v->is_bool()) {
          return config_error(file, pg->path("changeCapture"), "must be true or false");
        }
        cfg.postgres_change_capture = v->get_bool();
      }
    }
    WEIR_TRY(assign(*s, "queueCapacity", 1, 1000000, cfg.store_queue_capacity));
    WEIR_TRY(assign(*s, "maxPendingWritesPerUnit", 1, 1000000, cfg.max_pending_writes_per_unit));
    WEIR_TRY(assign(*s, "unitIdleMs", 10, 86400000, cfg.unit_idle_ms));
    WEIR_TRY(assign(*s, "idempotencyKeyTtlMs", 1000, 604800000, cfg.idempotency_key_ttl_ms));
    WEIR_TRY(
        assign(*s, "maxIdempotencyKeysPerUnit", 1, 10000000, cfg.max_idempotency_keys_per_unit));
  }
  WEIR_TRY(read_hub(file, root, cfg.hub));
  {
    auto s =
        open_section(file, root, "windowed", {"keepAliveMs", "maxQueueBytes", "closeDeadlineMs"});
    if (!s) {
      return std::move(s).error();
    }
    WEIR_TRY(assign(*s, "keepAliveMs", 0, 3600000, cfg.windowed.keep_alive_ms));
    WEIR_TRY(assign(*s, "maxQueueBytes", 64 * 1024, std::int64_t{1024} << 20,
                    cfg.windowed.max_queue_bytes));
    WEIR_TRY(assign(*s, "closeDeadlineMs", 100, 600000, cfg.windowed.close_deadline_ms));
  }
  {
    auto s = open_section(file, root, "records", {"maxBytes", "maxMembers", "maxKeyBytes"});
    if (!s) {
      return std::move(s).error();
    }
    WEIR_TRY(assign(*s, "maxBytes", 1024, std::int64_t{64} << 20, cfg.records.max_bytes));
    WEIR_TRY(assign(*s, "maxMembers", 16, 10000000, cfg.records.max_members));
    WEIR_TRY(assign(*s, "maxKeyBytes", 16, 65536, cfg.records.max_key_bytes));
  }
  WEIR_TRY(read_cluster(file, root, cfg.cluster));
  WEIR_TRY(read_queries(file, root, cfg));
  {
    auto s = open_section(file, root, "log", {"level", "format"});
    if (!s) {
      return std::move(s).error();
    }
    auto one_of = [&](std::string_view key, std::initializer_list<std::string_view> allowed,
                      std::string& out) -> result<void> {
      auto t = s->text(key);
      if (!t) {
        return std::move(t).error();
      }
      if (!*t) {
        return {};
      }
      for (auto a : allowed) {
        if (**t == a) {
          out = **t;
          return {};
        }
      }
      return config_error(file, s->path(key),
                          "must be one of " + join(allowed) + " (got \"" + **t + "\")");
    };
    WEIR_TRY(one_of("level", {"debug", "info", "warn", "error", "off"}, cfg.log_level));
    WEIR_TRY(one_of("format", {"text", "json"}, cfg.log_format));
  }
  return cfg;
}

#undef WEIR_TRY

}  // namespace

core::result<void> validate_cluster(const cluster_settings& c, bool require_node_id) {
  auto bad = [](std::string msg) {
    return make_error(std::string(config_invalid), std::move(msg));
  };
  auto id_ok = [](const std::string& id) {
    return !id.empty() && id.size() <= 128 && id.find_first_of(" \t\r\n/@") == std::string::npos;
  };
  if (!c.members.empty() && !c.advertise_peer.empty()) {
    return bad(
        "give members (a static list) or advertise (elastic membership on the postgres "
        "backend), not both");
  }
  if (c.members.empty()) {
    if (c.advertise_peer.empty()) {
      if (!c.node_id.empty()) {
        return bad(
            "nodeId is set but neither members are listed nor this member's advertise "
            "addresses (elastic membership) given");
      }
      return {};
    }
    if (!endpoint_ok(c.advertise_peer) || !endpoint_ok(c.advertise_http)) {
      return bad("advertise needs peer and http as \"host:port\" with a port 1..65535");
    }
    if (require_node_id && c.token.empty() && !c.tls.enabled()) {
      return bad(
          "members must authenticate each other: set cluster.token (or tokenFile) to a "
          "shared secret of at least 32 bytes, or cluster.tls for mutual TLS");
    }
    if (require_node_id && c.node_id.empty()) {
      return bad("advertise is set but this node's nodeId (--node-id) is not");
    }
    if (!c.node_id.empty() && !id_ok(c.node_id)) {
      return bad("nodeId '" + c.node_id + "' must be 1..128 characters without spaces, '/' or '@'");
    }
    return {};
  }
  if (c.members.size() > 64) {
    return bad("at most 64 members are supported");
  }
  if (require_node_id && c.token.empty() && !c.tls.enabled()) {
    // The peer services apply writes and drive connections: nobody else may call them.
    return bad(
        "members must authenticate each other: set cluster.token (or tokenFile) to a "
        "shared secret of at least 32 bytes, or cluster.tls for mutual TLS");
  }
  if (c.node_id.empty() && require_node_id) {
    return bad("members are listed but this node's nodeId (--node-id) is not set");
  }
  bool self = false;
  for (std::size_t i = 0; i < c.members.size(); ++i) {
    const auto& m = c.members[i];
    if (!id_ok(m.id)) {
      return bad("member id '" + m.id + "' must be 1..128 characters without spaces, '/' or '@'");
    }
    if (!endpoint_ok(m.peer) || !endpoint_ok(m.http)) {
      return bad("member '" + m.id + "' needs peer and http as \"host:port\" with a port 1..65535");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (c.members[j].id == m.id) {
        return bad("member id '" + m.id + "' is listed twice");
      }
    }
    self = self || m.id == c.node_id;
  }
  if (!self && !c.node_id.empty()) {
    return bad("nodeId '" + c.node_id + "' is not one of the members");
  }
  return {};
}

core::result<cluster_member> parse_member_flag(std::string_view text) {
  auto bad = [&] {
    return make_error(
        std::string(config_invalid),
        "--member wants ID=PEER_HOST:PORT,HTTP_HOST:PORT, got '" + std::string(text) + "'");
  };
  auto eq = text.find('=');
  auto comma = text.find(',', eq == std::string_view::npos ? 0 : eq);
  if (eq == std::string_view::npos || eq == 0 || comma == std::string_view::npos) {
    return bad();
  }
  cluster_member m{std::string(text.substr(0, eq)),
                   std::string(text.substr(eq + 1, comma - eq - 1)),
                   std::string(text.substr(comma + 1))};
  if (!endpoint_ok(m.peer) || !endpoint_ok(m.http)) {
    return bad();
  }
  return m;
}

boost::json::value yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      // yaml-cpp tags plain scalars "?" and quoted/block ones "!"; an explicit tag such as !!str
      // also means "take the text as written".
      if (n.Tag() == "?" || n.Tag().empty()) {
        return plain_scalar(n.Scalar());
      }
      return json::string(n.Scalar());
    case YAML::NodeType::Sequence: {
      json::array out;
      out.reserve(n.size());
      for (const auto& e : n) {
        out.push_back(yaml_to_json(e));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json::object out;
      for (const auto& kv : n) {
        out[kv.first.Scalar()] = yaml_to_json(kv.second);
      }
      return out;
    }
  }
  return nullptr;
}

core::result<node_config> load_config_text(std::string_view yaml_text, std::string_view file_name) {
  json::object details;
  details["file"] = file_name;
  try {
    YAML::Node doc = YAML::Load(std::string(yaml_text));
    if (auto problem = structural_problem(doc, "")) {
      return make_error(std::string(config_invalid), std::string(file_name) + ": " + *problem,
                        std::move(details));
    }
    return validate(file_name, yaml_to_json(doc));
  } catch (const YAML::Exception& e) {
    // yaml-cpp reports malformed YAML by throwing; this is the boundary that turns it into a value.
    std::string where = e.mark.is_null() ? std::string()
                                         : "line " + std::to_string(e.mark.line + 1) + ", column " +
                                               std::to_string(e.mark.column + 1) + ": ";
    return make_error(std::string(config_invalid), std::string(file_name) + ": " + where + e.msg,
                      std::move(details));
  }
}

core::result<node_config> load_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    json::object details;
    details["file"] = path;
    return make_error(std::string(config_invalid), path + ": cannot open the file",
                      std::move(details));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    json::object details;
    details["file"] = path;
    return make_error(std::string(config_invalid), path + ": cannot read the file",
                      std::move(details));
  }
  return load_config_text(text.str(), path);
}

}  // namespace weir::config

// weir::config — loads weir.yaml: YAML → JSON (one value model for every check, and the one the
// query parser in core/ already speaks), then section-by-section validation with strict keys
// (the keys from config_schema; the `auth` section in auth_config.cpp, `cluster` in
// cluster_config.cpp, the shared reading helpers in config_reader).
#include "apps/config/node_config.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
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

#include "apps/config/config_reader.hpp"
#include "core/origin.hpp"

namespace weir::config {

/// YAML → JSON. Scalars: null/~/empty → null, true/false → bool, integers → int64, floats →
/// double, anything else → string; quoted and block scalars are always strings. For a map with a
/// repeated key the last value wins (load_config_text refuses repeated keys before this matters).
boost::json::value yaml_to_json(const YAML::Node& n);

using namespace reader;

namespace {

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

result<void> read_node(std::string_view file, const json::object& root, node_config& cfg) {
  auto s = open_section(file, root, "node", keys_of("node"));
  if (!s) {
    return std::move(s).error();
  }
  WEIR_TRY(read_declared(*s, "node", cfg));
  return {};
}

result<void> read_hub(std::string_view file, const json::object& root, node_config& cfg) {
  auto& hub = cfg.hub;
  auto s = open_section(file, root, "query", keys_of("query"));
  if (!s) {
    return std::move(s).error();
  }
  WEIR_TRY(read_declared(*s, "query", cfg));
  if (hub.max_outbound_queue_bytes < hub.max_outbound_frame_bytes) {
    // Otherwise one largest permitted frame would already overflow the queue.
    return config_error(file, s->path("maxOutboundQueueBytes"),
                        "must be at least maxObservableOutboundFrameBytes (" +
                            std::to_string(hub.max_outbound_frame_bytes) + ")");
  }
  // Browser origins trusted besides the request's own (arc-hub §8): exact origins such as
  // "https://app.example.com", without paths.
  if (const auto* v = s->get("allowedOrigins")) {
    if (!v->is_array()) {
      return config_error(file, s->path("allowedOrigins"), "must be a list of origins");
    }
    for (const auto& o : v->get_array()) {
      // Checked as requests' origins are, so an entry that could never match (a path, a query,
      // no scheme) is refused here rather than silently never allowing anything.
      if (!o.is_string() || !core::normalize_origin(o.get_string())) {
        std::string got = o.is_string() ? " (got \"" + std::string{o.get_string()} + "\")" : "";
        return config_error(file, s->path("allowedOrigins"),
                            "must hold origins like \"https://app.example.com\": a scheme, a "
                            "host and an optional port, no path" +
                                got);
      }
      hub.allowed_origins.emplace_back(o.get_string());
    }
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
  const auto sections = keys_of("");
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
    auto s = open_section(file, root, "http", keys_of("http"));
    if (!s) {
      return std::move(s).error();
    }
    WEIR_TRY(read_declared(*s, "http", cfg));
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
    auto s = open_section(file, root, "store", keys_of("store"));
    if (!s) {
      return std::move(s).error();
    }
    if (s->obj) {
      auto pg =
          open_section(file, *s->obj, "postgres", keys_of("store.postgres"), "store.postgres");
      if (!pg) {
        return std::move(pg).error();
      }
      WEIR_TRY(read_declared(*pg, "store.postgres", cfg));
    }
    WEIR_TRY(read_declared(*s, "store", cfg));
  }
  WEIR_TRY(read_hub(file, root, cfg));
  {
    auto s = open_section(file, root, "windowed", keys_of("windowed"));
    if (!s) {
      return std::move(s).error();
    }
    WEIR_TRY(read_declared(*s, "windowed", cfg));
  }
  {
    auto s = open_section(file, root, "records", keys_of("records"));
    if (!s) {
      return std::move(s).error();
    }
    WEIR_TRY(read_declared(*s, "records", cfg));
  }
  WEIR_TRY(read_cluster(file, root, cfg));
  WEIR_TRY(read_queries(file, root, cfg));
  {
    auto s = open_section(file, root, "log", keys_of("log"));
    if (!s) {
      return std::move(s).error();
    }
    WEIR_TRY(read_declared(*s, "log", cfg));
  }
  return cfg;
}

}  // namespace

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
// weir::config reader — what the loader's files share to read weir.yaml's sections: a section
// with its keys checked against the schema (config_schema.hpp), its declared keys read from the
// schema, the config.invalid errors naming the file and key, files the
// configuration names. Private to apps/config (node_config.cpp, auth_config.cpp,
// cluster_config.cpp).
#pragma once

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

#include <span>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include "apps/config/config_schema.hpp"
#include "apps/config/node_config.hpp"

namespace weir::config::reader {

namespace json = boost::json;
using core::make_error;
using core::result;

inline constexpr std::string_view config_invalid = "config.invalid";

/// config.invalid, its message "<file>: field '<field>': <why>", details {file, field}.
core::error config_error(std::string_view file, const std::string& field, const std::string& why);

/// "a, b, c": the keys a message lists.
std::string join(std::span<const std::string_view> names);

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
// `keys`: the schema's keys of the section (keys_of).
result<section> open_section(std::string_view file, const json::object& root, std::string name,
                             const std::vector<std::string_view>& keys, std::string display = {});

// "host:port", "[v6]:port"; port 0 means "pick a free one". False (host and port untouched)
// when `s` does not hold `key`.
result<bool> read_endpoint(const section& s, std::string_view key, std::string& host,
                           std::uint16_t& port);

// Reads the endpoint, text, integer, flag and choice keys the schema declares for
// `schema_section` (config_schema.cpp) that `s` holds, in the schema's order; each key absent
// keeps its default (fixed, or derived from keys read before it).
result<void> read_declared(const section& s, std::string_view schema_section, node_config& cfg);

// A file named in the configuration: relative paths are relative to the file's own directory.
result<std::string> read_named_file(std::string_view file, const std::string& key,
                                    const std::string& name);

#define WEIR_TRY(expr)              \
  do {                              \
    if (auto r_ = (expr); !r_) {    \
      return std::move(r_).error(); \
    }                               \
  } while (false)

// auth_config.cpp

result<void> read_auth(std::string_view file, const json::object& root, auth_settings& auth);

// cluster_config.cpp

result<void> read_cluster(std::string_view file, const json::object& root, node_config& cfg);

}  // namespace weir::config::reader

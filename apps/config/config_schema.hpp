// weir::config schema — the declared shape of weir.yaml: every key of every section; for each
// integer key its range, the field of node_config it sets (whose initializer is its default)
// and, where its default follows another key as configured, how; for each true/false key, each
// key that takes one word of a list (a choice), each plain text key and each address to listen
// on (an endpoint), the field it sets (and a choice's words). The loader (node_config.cpp)
// refuses keys that are not here and reads every such key of node_config from here, with the
// messages that come from it ("must be between MIN and MAX", "must be true or false", "must be
// one of A, B (got "X")", "must be a non-empty string", "must be "host:port" …"); the keys with
// checks of their own (lists, rules, the cluster's peers and secrets, the token verifier's
// options) are read by the loader's code for them. `weir serve --check` runs the loader.
// docs/configuration.md's key tables are generated from it (config_reference.hpp);
// tests/unit/apps/config_schema_test.cpp checks the page's rows and complete file of defaults.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/config/node_config.hpp"

namespace weir::config {

/// One integer key.
struct integer_key {
  std::string_view section;  ///< its section as written in the file: "query", "cluster", …
  std::string_view key;
  std::int64_t min;
  std::int64_t max;
  /// Sets the field from a value in [min, max].
  void (*set)(node_config&, std::int64_t);
  /// Reads the field: node_config{}'s is the default.
  std::int64_t (*get)(const node_config&);
  /// When set, runs just before the key is read: its default is then another key's value as
  /// configured (docs/configuration.md writes it in words), not the field's initializer.
  void (*derive)(node_config&) = nullptr;
};

/// Every integer key, in the order the loader reads them (a derived default reads keys before
/// it).
std::span<const integer_key> integer_keys();

/// One true/false key of node_config.
struct flag_key {
  std::string_view section;
  std::string_view key;
  void (*set)(node_config&, bool);
  /// Reads the field: node_config{}'s is the default.
  bool (*get)(const node_config&);
};

/// Every flag key of node_config (auth.jwt's go to the token verifier: auth_config.cpp).
std::span<const flag_key> flag_keys();

/// One key of node_config that takes one word of a fixed list.
struct choice_key {
  std::string_view section;
  std::string_view key;
  std::span<const std::string_view> words;  ///< in the order messages and the reference list them
  void (*set)(node_config&, std::string_view);
  /// Reads the field: node_config{}'s is the default.
  std::string (*get)(const node_config&);
};

/// Every choice key.
std::span<const choice_key> choice_keys();

/// One key of node_config that takes a non-empty string as it stands (a path, a name, a URL).
struct text_key {
  std::string_view section;
  std::string_view key;
  void (*set)(node_config&, std::string);
  /// Reads the field: node_config{}'s is the default ("" for none).
  std::string (*get)(const node_config&);
};

/// Every text key of node_config read as it stands (the cluster's token, files and addresses
/// and the token verifier's options have checks of their own: cluster_config.cpp,
/// auth_config.cpp).
std::span<const text_key> text_keys();

/// One address to listen on: "host:port" (IPv6 as "[::1]:8080"), port 0 to 65535, 0 picking a
/// free one.
struct endpoint_key {
  std::string_view section;
  std::string_view key;
  void (*set)(node_config&, std::string host, std::uint16_t port);
  /// The field as "host:port" (IPv6 in brackets): node_config{}'s is the default.
  std::string (*get)(const node_config&);
};

/// Every endpoint key.
std::span<const endpoint_key> endpoint_keys();

/// Every key `section` takes ("store.postgres" and "cluster.tls" for nested ones; the top level
/// is ""), integer keys included, in the order messages list them.
std::vector<std::string_view> keys_of(std::string_view section);

/// Every section with keys of its own, as keys_of names them.
std::span<const std::string_view> sections();

}  // namespace weir::config

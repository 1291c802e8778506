// weir::config schema — the declared shape of weir.yaml: every key of every section, and for
// each integer key its range, the field of node_config it sets (whose initializer is its
// default) and, where its default follows another key as configured, how. The loader
// (node_config.cpp) refuses keys that are not here and reads every integer key from here, with
// the messages that come from it ("must be between MIN and MAX"); `weir serve --check` runs the
// loader. tests/unit/apps/config_schema_test.cpp checks docs/configuration.md against it: each
// integer key's row (section, default, range) and the complete file of defaults.
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

/// Every key `section` takes ("store.postgres" and "cluster.tls" for nested ones; the top level
/// is ""), integer keys included, in the order messages list them.
std::vector<std::string_view> keys_of(std::string_view section);

/// Every section with keys of its own, as keys_of names them.
std::span<const std::string_view> sections();

}  // namespace weir::config

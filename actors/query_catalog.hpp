// weir::actors::query_catalog — the named queries of the configuration, by fully-qualified
// name and by route. Immutable after start, so lookups need no lock.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/query_definition.hpp"

namespace weir::actors {

class query_catalog {
 public:
  explicit query_catalog(std::vector<core::query_definition> defs);

  /// Exact, case-sensitive match on the fully-qualified name (arc-hub §2.3).
  const core::query_definition* by_name(std::string_view name) const;
  const core::query_definition* by_route(std::string_view route) const;
  const std::vector<core::query_definition>& all() const { return defs_; }

 private:
  std::vector<core::query_definition> defs_;
  std::unordered_map<std::string, std::size_t> by_name_;
  std::unordered_map<std::string, std::size_t> by_route_;
};

}  // namespace weir::actors

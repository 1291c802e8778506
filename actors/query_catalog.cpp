// Lookup tables over the configured named queries.
#include "actors/query_catalog.hpp"

namespace weir::actors {

query_catalog::query_catalog(std::vector<core::query_definition> defs) : defs_(std::move(defs)) {
  for (std::size_t i = 0; i < defs_.size(); ++i) {
    by_name_.emplace(defs_[i].name, i);
    by_route_.emplace(defs_[i].route, i);
  }
}

const core::query_definition* query_catalog::by_name(std::string_view name) const {
  auto it = by_name_.find(std::string{name});
  return it == by_name_.end() ? nullptr : &defs_[it->second];
}

const core::query_definition* query_catalog::by_route(std::string_view route) const {
  auto it = by_route_.find(std::string{route});
  return it == by_route_.end() ? nullptr : &defs_[it->second];
}

}  // namespace weir::actors

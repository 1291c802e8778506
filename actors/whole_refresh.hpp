// weir::actors whole refresh — change capture's re-read of whole datasets, for a transaction
// that changed more rows than the change reader keeps the keys of (store/captured_rows): the
// ids the store holds and the ids the shard holds in memory, refreshed a chunk at a time, one
// chunk after another, through the registry (so a unit handed over meanwhile is refreshed by
// its successor); and, for a transaction past even that, every unit this node holds.
// Internal to actors/.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "actors/runtime_impl.hpp"

namespace weir::actors {

/// Ids per refresh command: a forwarded one must fit one message (http.maxBodyBytes), and one
/// read of them holds the store's writer for a moment only.
inline constexpr std::size_t ids_per_refresh = 1000;

/// On a loader thread (it reads the store): refreshes `dataset` of `unit` ("" every dataset)
/// whole. `held` are the (dataset, id) the shard holds in memory; the store's are read here.
/// `done` runs once, after the last chunk was applied, or with the first failure.
void refresh_whole(runtime::impl& rt, const store::unit_key& unit, const std::string& dataset,
                   std::vector<std::pair<std::string, std::string>> held, write_callback done);

/// Refreshes every unit whose shard this node holds, whole, one unit after another; `done`
/// once all were, or with the first failure.
void refresh_every_held_unit(runtime::impl& rt, write_callback done);

/// A refresh of `dataset` of the unit (`space`, `object`) whole; with `space` "" (and the rest
/// empty) every unit the receiving node holds.
write_command whole_refresh_command(std::string space, std::string object, std::string dataset);

}  // namespace weir::actors

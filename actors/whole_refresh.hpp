// weir::actors whole refresh — change capture's re-read of whole datasets, for a transaction
// that changed more rows than the change reader keeps the keys of (store/captured_rows).
//
// The owner takes such a refresh at once and does it in the background, on the node's whole
// refresh lane: one at a time node-wide (so the loader threads stay free for unit loads), the
// ids the store holds (read on a loader thread) with the ids the shard holds in memory,
// refreshed 1,000 at a time, one chunk after another, through the registry (each chunk read
// after the writes before it, as any refresh). A refresh that fails (the store unreachable,
// its queue full) goes to the back of the queue and the lane pauses a second; it is tried
// again for as long as the node holds the unit. One asked for again while still waiting is
// done once. Taking it at once is safe: while this node holds the unit
// it will read the unit's state after the transaction, and a node that gets the unit later
// (after a restart, an idle stop, a change of owners) loads it from the store, transaction
// included. So the reader never waits minutes for a whole unit, and nothing long runs on a
// forwarded call.
//
// A transaction past even that has every member refresh every unit it holds, each whole.
// Internal to actors/.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/runtime_impl.hpp"

namespace weir::actors {

/// Ids per refresh command: a forwarded one must fit one message (http.maxBodyBytes), and one
/// read of them holds the store's writer for a moment only.
inline constexpr std::size_t ids_per_refresh = 1000;

/// The node's whole refreshes, one at a time (runtime::impl::whole_refreshes).
class whole_refresh_lane;
std::shared_ptr<whole_refresh_lane> make_whole_refresh_lane(runtime::impl& rt);

/// Queues the refresh of `dataset` of `unit` ("" every dataset) whole, on the node's lane.
/// Returns at once (any thread).
void refresh_whole(runtime::impl& rt, store::unit_key unit, std::string dataset);

/// Queues a whole refresh of every unit whose shard this node holds.
void refresh_every_held_unit(runtime::impl& rt);

/// Whether `cmd` is the lane starting a queued whole refresh on the unit's shard (`"now"`), as
/// opposed to change capture asking for one.
bool is_whole_refresh_now(const write_command& cmd);

/// The shard's part of a started job: on a loader thread, the store's ids of `dataset` with
/// `held` (the ids the shard holds in memory), refreshed in chunks; `done` once all are applied
/// or at the first failure.
void run_whole_refresh(runtime::impl& rt, store::unit_key unit, std::string dataset,
                       std::vector<std::pair<std::string, std::string>> held, write_callback done);

/// A refresh of `dataset` of the unit (`space`, `object`) whole ("" every dataset).
write_command whole_refresh_command(std::string space, std::string object, std::string dataset);

/// A refresh of every unit the receiving node holds, whole.
write_command every_held_unit_command();

}  // namespace weir::actors

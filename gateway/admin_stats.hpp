// weir::gateway admin stats — the document the admin page (/ui) draws: every member with its
// state and figures, this node's slowest consumers (docs/operations.md#admin-page). Internal
// to gateway/.
#pragma once

#include <cstddef>
#include <string>

namespace weir::gateway {

struct server_context;

/// How many of the slowest consumers the document lists.
inline constexpr std::size_t admin_slowest_count = 10;

/// The stats document as JSON: {"node","at","members":[…],"slowest":[…]}. Cheap enough for the
/// I/O thread: counters and the members' last heartbeat answers, no call to anyone.
std::string admin_stats_json(server_context& ctx);

}  // namespace weir::gateway

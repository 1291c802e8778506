// weir::gateway node totals — this node's running totals of writes and frames: what its admin
// page shows for itself and what Peer.Status reports to the other members' pages (through
// actors::cluster_link::set_local_totals). Internal to gateway/.
#pragma once

#include <cstdint>

namespace weir::gateway {

struct server_context;

/// Writes this node answered since it started (durable or refused; a write forwarded to its
/// owner counts on both members).
std::uint64_t writes_total(server_context& ctx);

/// Frames this node handed to client sockets since it started.
std::uint64_t frames_total(server_context& ctx);

}  // namespace weir::gateway

// weir::gateway::sse_control_router — where an SSE hub control POST (arc-hub §8) is applied once
// its body parsed: on this node when the connection id names it (or names no node), else
// forwarded over gRPC to the member holding the stream, with the caller's client address and
// principal; the holder applies the ownership rules and its status is relayed unchanged.
// Internal to gateway/.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "actors/cluster_link.hpp"
#include "actors/hub_connection.hpp"

namespace weir::gateway {

struct server_context;

/// Seed 001's ownership rule: `who`, calling from `client_address`, is the caller that opened a
/// connection described by `owner`.
bool same_caller(const actors::connection_info& owner, const core::principal& who,
                 std::string_view client_address);

/// The node id a connection id names ("<uuid>@<node>"), or "" when it names none.
std::string_view holder_of(std::string_view connection_id);

/// Applies a control POST here: parse (400), look the connection up and check its owner (404),
/// the late 400, then the connection's state machine. `done` runs on any thread.
void apply_sse_control(server_context& ctx, actors::control_request req,
                       std::function<void(unsigned)> done);

/// Applies it here or forwards it to its holder.
void route_sse_control(server_context& ctx, actors::control_request req,
                       std::string_view connection_id, std::function<void(unsigned)> done);

}  // namespace weir::gateway

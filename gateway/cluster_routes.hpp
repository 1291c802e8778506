// weir::gateway cluster routes — GET /readyz and GET /cluster/health (docs/operations.md).
// Internal to gateway/.
#pragma once

#include <string>
#include <utility>

namespace weir::gateway {

struct server_context;

/// /readyz: 200 once the node serves (store open, listening, not draining) and, in a cluster,
/// reaches a majority of the members (itself included) on a static list, or renewed its lease
/// within leaseMs with elastic membership; 503 otherwise.
std::pair<unsigned, std::string> readiness(server_context& ctx);

/// /cluster/health: the cluster's view from this node; a single node reports itself alone.
std::pair<unsigned, std::string> cluster_health(server_context& ctx);

}  // namespace weir::gateway

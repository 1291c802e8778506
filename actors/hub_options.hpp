// weir::actors::hub_options — the Arc hub limits and timings the actors enforce
// (arc-hub.md §9 names and defaults). Filled from configuration by apps/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weir::actors {

struct hub_options {
  std::int64_t keep_alive_interval_ms = 30000;  ///< outbound silence before a server Ping; 0 = off
  std::size_t max_hub_connections = 512;
  std::size_t max_hub_connections_per_caller = 512;
  /// Hub connections from one client address, whoever signs in on them (the address as
  /// http.trustedProxies resolves it); by default all of the node's (query.…PerAddress).
  std::size_t max_hub_connections_per_address = 512;
  std::size_t max_subscriptions_per_connection = 256;
  std::size_t max_subscriptions = 4096;
  std::size_t max_subscriptions_per_caller = 4096;
  std::size_t max_inbound_frames = 256;            ///< queued inbound frames → close 1013
  std::size_t max_outbound_frames = 256;           ///< queued outbound frames → close 1013
  std::size_t max_inbound_frame_bytes = 65536;     ///< → close 1009
  std::size_t max_outbound_frame_bytes = 1 << 20;  ///< one frame larger → close 1008
  std::size_t max_outbound_queue_bytes = 4 << 20;  ///< queued outbound bytes → close 1013
  std::size_t max_tombstones = 1024;
  /// Sort indexes one dataset of a unit may hold for windows in use (query.
  /// maxSortIndexesPerDataset): a window on one more sort is refused with query.too_many_sorts.
  std::size_t max_sort_indexes_per_dataset = 16;
  /// windowed.maxObjectsPerSpaceWindow: objects of a space (on this node) one space-wide window
  /// merges; a dataset spread over more is refused (query.too_many_objects), since each object's
  /// unit is loaded and held for as long as the window lives.
  std::size_t max_objects_per_space_window = 10000;
  std::int64_t tombstone_retention_ms = 120000;
  std::int64_t shutdown_timeout_ms = 10000;
  std::int64_t health_interval_ms = 1000;  ///< how often a health-feed subscription samples
  /// How long an AG-UI agent run (`POST …/agent`) streams before RUN_FINISHED
  /// (query.agentRunMaxMs).
  std::int64_t agent_run_max_ms = 3600000;
  /// Authentication is configured (auth.jwt): the health feed then needs a signed-in caller
  /// (arc-hub decision 7) instead of showing anonymous callers their own address's connections.
  bool authentication = false;
};

}  // namespace weir::actors

// weir::actors::runtime — the node's actor side: the CAF actor system, the shard registry (one
// shard actor per ownership unit, spawned on first use), the query catalog and the budgets.
// This header carries no CAF types, so the gateway and apps can include it cheaply.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/budget.hpp"
#include "actors/hub_options.hpp"
#include "actors/write_command.hpp"

namespace weir::core {
struct query_definition;
}
namespace weir::store {
class durable_store;
}

namespace weir::actors {

class query_catalog;

struct runtime_options {
  int actor_threads = 2;
  std::size_t max_pending_writes_per_unit = 4096;  ///< in-flight (not yet durable) per unit
  std::int64_t unit_idle_ms = 60000;               ///< an unused unit's actor stops after this long
  hub_options hub;
};

/// Counters for health and tests; read without stopping anything.
struct runtime_stats {
  std::size_t units = 0;       ///< shard actors alive
  std::size_t query_keys = 0;  ///< materialized query results alive
  std::size_t hub_connections = 0;
  std::size_t subscriptions = 0;
};

class runtime {
 public:
  runtime(runtime_options opts, std::vector<core::query_definition> queries,
          store::durable_store& store);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// Applies a write on the owning unit; `done` runs once it is durable (or failed).
  void submit(write_command cmd, write_callback done);

  const query_catalog& catalog() const;
  const hub_options& hub() const;
  budget& connection_budget();
  budget& subscription_budget();
  runtime_stats stats() const;

  /// Writes submitted whose callback has not run yet.
  std::size_t in_flight_writes() const;

  /// Stops every actor (shards, queries, connections) and the actor system. Must run on the
  /// thread that constructed the runtime: CAF 0.17 keeps a thread-local logger reference there
  /// and its actor_system destructor waits for that logger to go (observed as a hang when
  /// stopped from another thread). Sessions that outlive this make no more actor calls.
  void shutdown();

  struct impl;
  impl& internals() { return *impl_; }

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::actors

// weir::actors::runtime — the node's actor side: the CAF actor system, the shard registry (one
// shard actor per ownership unit, spawned on first use), the query catalog and the budgets.
// This header carries no CAF types, so the gateway and apps can include it cheaply.
#pragma once

#include <array>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/budget.hpp"
#include "actors/hub_options.hpp"
#include "actors/skipped_rows.hpp"
#include "actors/write_command.hpp"
#include "core/document_limits.hpp"

namespace weir::core {
struct windowed_request;
struct connection_health;
struct health_scope;
struct query_definition;
struct bound_query;
class count_histogram;
class latency_histogram;
}  // namespace weir::core
namespace weir::store {
class durable_store;
struct captured_txn;
struct capture_status;
struct connection_health;
}  // namespace weir::store

namespace weir::actors {

class query_catalog;
class cluster_link;
class replica_sink;

struct runtime_options {
  int actor_threads = 2;
  std::size_t max_pending_writes_per_unit = 4096;  ///< in-flight (not yet durable) per unit
  std::int64_t unit_idle_ms = 60000;               ///< an unused unit's actor stops after this long
  std::int64_t idempotency_key_ttl_ms = 86400000;  ///< store.idempotencyKeyTtlMs
  std::size_t max_idempotency_keys_per_unit = 100000;  ///< store.maxIdempotencyKeysPerUnit
  /// Change capture's refreshes running at once, node-wide (refresh_pacer): a quarter of
  /// store.queueCapacity, at most 64, so that a large transaction never overflows that queue.
  std::size_t captured_refreshes_in_flight = 64;
  /// Cluster: how long subscribers of an unreachable owner wait for it before an Error.
  std::int64_t owner_unavailable_error_ms = 30000;
  hub_options hub;
  /// What every record must hold to (records.*): checked on every write, by the node that
  /// receives it and again by the owner, and on every row a load or change capture reads.
  core::document_limits records;
};

/// Counters for health and tests; read without stopping anything.
struct runtime_stats {
  std::size_t units = 0;       ///< shard actors alive
  std::size_t query_keys = 0;  ///< materialized query results alive
  std::size_t hub_connections = 0;
  std::size_t subscriptions = 0;
  std::size_t remote_units = 0;  ///< of `units`: units another node owns, served here by watches
  std::size_t upstreams = 0;     ///< watches this node holds on other nodes (one per query key)
  std::size_t replicas = 0;      ///< watches other nodes hold on this one
  /// JSON bytes of the rows this node's query actors hold (windows and results, owner and
  /// gateway alike).
  std::int64_t held_row_bytes = 0;
  /// Client subscriptions held by this node's query actors, by how their results are encoded:
  /// the four Arc transfer modes (legacy, full, delta, patch, in core::transfer_mode's order),
  /// AG-UI state streams, windowed streams.
  std::array<std::size_t, 6> subscriptions_by_encoding{};
  /// Write batches queued for the store or being committed.
  std::size_t store_queued = 0;
  /// Records read from the store that could not be served and were skipped (a row another
  /// program wrote that is not a record or is outside the record limits), since start.
  std::uint64_t skipped_records = 0;
  /// Passes over a dataset's records made on a loader thread rather than the unit's, since
  /// start: [0] index builds (a window on a new sort), [1] filter passes (a filter's first
  /// count, or a window whose index does not give its rows within a bounded walk).
  std::array<std::uint64_t, 2> dataset_passes{};
  /// Filter passes handed to the loader threads and not finished (at most one per dataset), and
  /// the most there were at once since start.
  std::size_t filter_passes_running = 0;
  std::size_t filter_passes_peak = 0;
  /// Index builds on loader threads now (a new sort's, or a filter's field's after its pass).
  std::size_t index_builds_running = 0;
};

/// An owner-side watch opened by open_replica: what close and resync need to find it.
struct replica_handle {
  std::string space;
  std::string object;
  std::string key;
  std::uint64_t token = 0;
  /// Set for this node's part of a space-wide dataset (held by its space view, not a unit).
  std::shared_ptr<const core::windowed_request> merged;
};

class runtime {
 public:
  runtime(runtime_options opts, std::vector<core::query_definition> queries,
          store::durable_store& store);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// Joins a cluster: units other members own are served through `link` (writes forwarded,
  /// subscriptions watched). Call once, before any traffic; `link` must outlive shutdown().
  void set_cluster(cluster_link* link);
  /// The cluster, or null for a single node.
  cluster_link* cluster() const;

  /// Applies a write on the owning unit; `done` runs once it is durable (or failed). The write
  /// is checked first (actors::check_write, against options().records): a bad one is answered
  /// at once and goes nowhere. A unit another member owns is forwarded to it.
  void submit(write_command cmd, write_callback done);
  /// submit() of a write the caller has already checked (actors::check_write against
  /// record_limits()), which is not checked again here. A unit's owner still checks what a
  /// member forwards to it.
  void submit_checked(write_command cmd, write_callback done);

  /// Where `cmd` would be applied when two submits of it keep their order: the registry key of
  /// the local unit whose shard applies it (a shard takes its writes in the order they were
  /// submitted). nullopt when another member owns the unit (forwarded writes may overtake each
  /// other) or the write spans two units (an object's delete). The HTTP write API lets a
  /// pipelined write go ahead of its predecessor's answer only when both have the same key.
  std::optional<std::string> ordered_unit(const write_command& cmd) const;

  /// Owner side of a remote watch: subscribes `sink` to `query` on this node's unit. The sink
  /// first gets a snapshot, then every change. Errors: cluster.not_owner when another member
  /// owns the unit (the two nodes disagree about the member list), server.draining.
  core::result<replica_handle> open_replica(core::bound_query query,
                                            std::shared_ptr<replica_sink> sink);
  void close_replica(const replica_handle& h);
  /// Asks for a fresh snapshot on the watch (its queued changes were dropped).
  void resync_replica(const replica_handle& h);

  /// Whether anything was ever written to `space`, here or (in a cluster) on another member:
  /// the windowed API's space.not_found. `done` runs once, on any thread. Positive answers are
  /// remembered (a space never stops existing).
  void space_exists(const std::string& space, std::function<void(bool)> done);

  /// The store backend this node runs on (`embedded`, `postgres`), for /cluster/health.
  const char* store_backend() const;
  /// Whether the store holds strings with U+0000 (PostgreSQL's jsonb does not).
  bool store_holds_nul_characters() const;
  /// The store's change capture (the reader, its lag), for /cluster/health.
  store::capture_status store_capture() const;
  /// The store's connections (reconnects, the last failure to reach the database).
  store::connection_health store_connections() const;
  /// The latest rows read from the store and skipped (unit, id, reason), oldest first.
  std::vector<skipped_rows::entry> recent_skipped_rows() const;

  /// Rows another program changed in the store, one of its transactions (the store's
  /// capture_sink): each unit's rows go to its owner (here or another member), whose shard, if
  /// it holds the unit, reads them again and publishes what differs as a write. `applied` runs
  /// once every owner answered, with false when one could not take them (unreachable,
  /// overloaded, stopping), so that the transaction is read again.
  void take_captured(store::captured_txn txn, std::function<void(bool taken)> applied);

  /// A change capture re-read sent to this node (refresh_records): taken by the unit's shard
  /// when this node holds the unit in memory as its owner, else answered at once (there is
  /// nothing to refresh). Never forwarded: the sender chose this node as the owner. A refresh
  /// of every held unit (is_every_held_unit_refresh) queues each unit held here, whole.
  void refresh_held(write_command cmd, write_callback done);

  /// The cluster's owners changed (elastic membership): every unit held here whose owner
  /// changed is handed from its old entry to a new one (its queries' subscribers get a fresh
  /// baseline, windowed streams close with `server_shutdown`), and space-wide views end. With
  /// `reload_held`, the units this node owns and holds are loaded again as well: this node
  /// missed a change of owners (another member may have owned them meanwhile).
  void ownership_changed(bool reload_held = false);

  /// Whether this node's store holds anything of `space`.
  bool has_local_space(const std::string& space) const;

  /// The hub connections held on this node that `scope` may see (the health feed's data).
  std::vector<core::connection_health> local_connections(const core::health_scope& scope) const;

  const query_catalog& catalog() const;
  const hub_options& hub() const;
  /// The record limits (runtime_options::records).
  const core::document_limits& record_limits() const;
  budget& connection_budget();
  budget& subscription_budget();
  runtime_stats stats() const;

  /// How long writes took, from submit to their answer (durable, or refused).
  const core::latency_histogram& write_latency() const;
  /// How many write batches each of the store's group commits made durable together (null when
  /// the store does not report it).
  const core::count_histogram* commit_group_sizes() const;

  /// Writes submitted whose callback has not run yet.
  std::size_t in_flight_writes() const;

  /// Stops every actor (shards, queries, space views, health watches, the timer) and the actor
  /// system. Must run on the
  /// thread that constructed the runtime: CAF 0.17 keeps a thread-local logger reference there
  /// and its actor_system destructor waits for that logger to go (observed as a hang when
  /// stopped from another thread). Sessions that outlive this make no more actor calls.
  void shutdown();
  /// Starts no more of change capture's refreshes that are still waiting (their transactions
  /// stay unconfirmed and are read again by the next reader): right after capture stops.
  void stop_captured_refreshes();

  struct impl;
  impl& internals() { return *impl_; }

 private:
  void submit_write(write_command cmd, write_callback done, bool check);

  std::unique_ptr<impl> impl_;
};

}  // namespace weir::actors

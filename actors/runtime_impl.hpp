// weir::actors::runtime::impl — the actor system and registries behind runtime. Internal to
// actors/ (includes CAF).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/logger.hpp>
#include <caf/send.hpp>

#include "actors/cluster_link.hpp"
#include "actors/connection_directory.hpp"
#include "actors/messages.hpp"
#include "actors/query_catalog.hpp"
#include "actors/refresh_pacer.hpp"
#include "actors/runtime.hpp"
#include "actors/skipped_rows.hpp"
#include "actors/unit_loader.hpp"
#include "actors/view_update.hpp"
#include "core/latency_histogram.hpp"
#include "core/record.hpp"
#include "store/durable_store.hpp"

namespace weir::actors {

class timed_target;
class whole_refresh_lane;

/// Runs `spawn` (which spawns an actor) on any thread. CAF 0.17's spawn leaves a reference to
/// the system's logger in the calling thread's thread-local storage, and ~actor_system waits
/// until every such reference is gone: one spawn from a gRPC thread, which outlives the
/// runtime, hung shutdown. A thread that had no logger before is cleared again after.
/// Returns what `spawn` returns (the spawned actor's typed handle).
template <class F>
auto spawn_anywhere(F&& spawn) {
  bool foreign = caf::logger::current_logger() == nullptr;
  auto a = spawn();
  if (foreign) {
    caf::logger::set_current_actor_system(nullptr);
  }
  return a;
}

/// The registry key of the space view serving `req` (space_view.cpp).
std::string space_view_key(const std::shared_ptr<const core::windowed_request>& req,
                           bool member_part);
/// Tells a space view that `object` got records of its dataset (space_view.cpp).
void notify_unit_appeared(const space_view_actor& view, std::string object);
/// Tells a space view that the cluster's owners changed: it ends (space_view.cpp).
void notify_membership_changed(const space_view_actor& view);

/// A unit's key in the registry: space '\0' object.
/// The unit a bound query's rows live on: its object's, or the space's objects collection for a
/// single document.
inline store::unit_key unit_of(const core::bound_query& q) {
  return store::unit_key{q.space, q.single_id ? std::string{} : q.object};
}

inline std::string unit_registry_key(const store::unit_key& unit) {
  std::string key = unit.space;
  key.push_back('\0');
  key.append(unit.object);
  return key;
}

struct runtime::impl {
  impl(runtime_options o, std::vector<core::query_definition> queries, store::durable_store& s);

  /// Sends `msg` to the shard actor of `unit`, spawning it on first use. The send happens under
  /// the lock of the unit's stripe of the registry, which is what lets an idle shard retire
  /// safely (see retire_shard); units of other stripes are not held up by it.
  /// Returns false, dropping `msg`, once the runtime is shutting down (a write's callback then
  /// answers server.unavailable through its guard, see runtime::submit).
  template <class Msg>
  bool send_to_shard(const store::unit_key& unit, Msg&& msg) {
    auto key = unit_registry_key(unit);
    auto& s = stripe_of(key);
    std::lock_guard lock{s.mu};
    if (stopping) {
      return false;
    }
    caf::anon_send(shard_locked(s, std::move(key), unit), std::forward<Msg>(msg));
    return true;
  }

  /// Drops the registry entry of a shard that stopped for any reason (called on its exit), so a
  /// unit whose actor died is respawned from the store on next use instead of black-holing.
  void forget_shard(const store::unit_key& unit, const caf::actor_addr& addr);

  /// Per-connection actors (health watches), so shutdown can stop them while their sessions
  /// still exist. By address: only an exit is ever sent, and the registry keeps none alive.
  std::uint64_t add_connection(caf::actor_addr a);
  void remove_connection(std::uint64_t id);

  /// Calls `target->on_timer()` on an actor thread after `wait`, if it still exists then and the
  /// node is not stopping. One timer actor serves the node (hub connections have none each).
  void call_after(std::chrono::milliseconds wait, std::weak_ptr<timed_target> target);

  /// Sends `msg` only if the unit's shard is alive (an unsubscribe for a retired unit has
  /// nothing left to cancel, and must not bring the unit back). False, leaving `msg` as it
  /// was, when it is not.
  template <class Msg>
  bool send_to_live_shard(const store::unit_key& unit, Msg&& msg) {
    auto key = unit_registry_key(unit);
    auto& s = stripe_of(key);
    std::lock_guard lock{s.mu};
    if (auto it = s.shards.find(key); it != s.shards.end()) {
      caf::anon_send(it->second.actor, std::forward<Msg>(msg));
      return true;
    }
    return false;
  }

  /// Removes `self` from the registry if `may_retire()` (evaluated under the lock) agrees. Every
  /// registry send holds the lock, so an empty mailbox seen under it stays empty.
  bool retire_shard(const store::unit_key& unit, const unit_actor& self,
                    const std::function<bool()>& may_retire);

  std::uint64_t next_token() { return token_counter.fetch_add(1, std::memory_order_relaxed) + 1; }

  /// Sends `msg` to the space view serving `req` (the space-wide dataset; `member_part`: this
  /// node's share of it for another member), spawning it on first use. False once stopping.
  template <class Msg>
  bool send_to_space_view(const std::shared_ptr<const core::windowed_request>& req,
                          bool member_part, Msg&& msg) {
    std::lock_guard lock{space_views_mu};
    if (stopping) {
      return false;
    }
    caf::anon_send(space_view_locked(req, member_part), std::forward<Msg>(msg));
    return true;
  }
  template <class Msg>
  void send_to_live_space_view(const std::shared_ptr<const core::windowed_request>& req,
                               bool member_part, Msg&& msg) {
    std::lock_guard lock{space_views_mu};
    if (auto it = space_views.find(space_view_key(req, member_part)); it != space_views.end()) {
      caf::anon_send(it->second, std::forward<Msg>(msg));
    }
  }
  void forget_space_view(const std::string& key, const caf::actor_addr& addr);
  bool retire_space_view(const std::string& key, const space_view_actor& self,
                         const std::function<bool()>& may_retire);

  /// Space views merging (space, dataset) hear of units that get their first record of it.
  void watch_space(const std::string& space, const std::string& dataset, space_view_actor view);
  void unwatch_space(const std::string& space, const std::string& dataset,
                     const space_view_actor& view);
  /// Called by a shard when a write gave `dataset` of its unit its first record.
  void unit_has_dataset(const std::string& space, const std::string& object,
                        const std::string& dataset);

  /// Sends `cmd` to its unit's shard, or to the unit's owner when another node owns it.
  void submit_unit(store::unit_key unit, write_command cmd, write_callback done);

  /// Hands change capture's re-read of some rows to the unit's shard on this node when it holds
  /// the unit in memory (else there is nothing to refresh: its next load reads the rows).
  void refresh_local(const store::unit_key& unit, write_command cmd, write_callback done);

  /// Replaces `self`, the shard of `unit`, with a fresh one that loads the unit again once
  /// `self` handed its queries over (hand_over_msg). Nothing when `self` is no longer the entry.
  void reload_unit(const store::unit_key& unit, const unit_actor& self);

  /// Each member's share of a signed-in caller's budgets (recomputed when members change).
  void update_principal_shares();

  runtime_options opts;
  cluster_link* link = nullptr;  ///< null: a single node
  /// An index a named query's filter wants (core::query_definition::filter_index_sorts): the
  /// shards of `space` and `object` ("" for any, when the query binds it) keep one sorted by
  /// `keys` on `dataset` once the dataset is large (shard_views.cpp, keep_filter_indexes).
  struct filter_index {
    std::string space;
    std::string object;
    std::string dataset;
    std::vector<std::string> keys;
  };
  std::vector<filter_index> filter_indexes;
  store::durable_store& store;
  query_catalog catalog;
  budget connections;
  budget addresses;  ///< hub connections per client address (no global cap of its own)
  budget subscriptions;
  std::atomic<std::uint64_t> token_counter{0};
  std::atomic<std::uint64_t> origins{0};
  /// A new write_batch::origin, unique in the node.
  std::uint64_t next_origin() { return origins.fetch_add(1, std::memory_order_relaxed) + 1; }
  std::atomic<std::size_t> query_actors{0};
  std::atomic<std::size_t> hub_connections{0};
  std::atomic<std::size_t> in_flight_writes{0};
  /// Records a load or change capture read from the store and skipped: not a record, or outside
  /// the record limits (runtime_stats::skipped_records).
  actors::skipped_rows skipped;
  core::latency_histogram write_latency;  ///< submit → answer, every write
  std::atomic<std::size_t> remote_units{0};
  std::atomic<std::size_t> upstreams{0};
  /// Change capture's refreshes, paced (take_captured).
  std::shared_ptr<refresh_pacer> refreshes =
      std::make_shared<refresh_pacer>(opts.captured_refreshes_in_flight);
  /// Change capture's whole-dataset refreshes, one at a time (whole_refresh.hpp).
  std::shared_ptr<whole_refresh_lane> whole_refreshes;
  std::atomic<std::size_t> replicas{0};
  /// JSON bytes of the rows query actors hold (windows, unbounded results), all keys together:
  /// what a gateway holds for the queries it serves.
  std::atomic<std::int64_t> held_row_bytes{0};
  /// Client subscriptions in query actors by encoding slot (runtime_stats::
  /// subscriptions_by_encoding); each query actor gives its share back when it ends.
  std::array<std::atomic<std::int64_t>, 6> subscriptions_by_encoding{};
  /// Passes over a dataset's records made on a loader thread (runtime_stats::dataset_passes).
  std::array<std::atomic<std::uint64_t>, 2> dataset_passes{};
  /// Filter passes handed to the loader and not finished, and the most at once since start
  /// (runtime_stats::filter_passes_running, filter_passes_peak).
  std::atomic<std::int64_t> filter_passes_running{0};
  std::atomic<std::int64_t> filter_passes_peak{0};
  /// Index builds handed to the loader and not finished (runtime_stats::index_builds_running).
  std::atomic<std::int64_t> index_builds_running{0};

  /// A unit's registry entry: its shard, or its remote shard when `owner` (another member)
  /// owns it.
  struct shard_entry {
    unit_actor actor;
    std::string owner;
  };
  /// One part of the unit registry, by the hash of the unit's key: a send takes only its unit's
  /// stripe, so sends to different units (from the I/O threads, gRPC threads and actors at once)
  /// rarely meet on a lock, and a shard's spawn holds up only its stripe.
  struct shard_stripe {
    std::mutex mu;
    std::unordered_map<std::string, shard_entry> shards;  // key: space '\0' object
  };
  static constexpr std::size_t shard_stripes = 64;
  std::array<shard_stripe, shard_stripes> stripes;
  shard_stripe& stripe_of(const std::string& key) {
    return stripes[std::hash<std::string>{}(key) % shard_stripes];
  }
  /// Every stripe's lock, taken in order (walks over all units: owner changes, shutdown).
  std::vector<std::unique_lock<std::mutex>> lock_all_stripes() {
    std::vector<std::unique_lock<std::mutex>> locks;
    locks.reserve(shard_stripes);
    for (auto& s : stripes) {
      locks.emplace_back(s.mu);
    }
    return locks;
  }
  std::mutex space_views_mu;
  std::unordered_map<std::string, space_view_actor> space_views;  // key: space '\0' query key
  /// Set once, by shutdown, under every stripe's lock and space_views_mu: read under any one.
  std::atomic<bool> stopping{false};
  std::atomic<bool> stopped{false};  // the actor system is gone

  connection_directory directory;  ///< hub connections, for the health feed
  unit_loader loader;              ///< reads units off the actor threads

  std::mutex known_spaces_mu;
  std::unordered_set<std::string> known_spaces;  // spaces seen to exist (bounded, see cpp)

  std::mutex space_watch_mu;
  std::unordered_map<std::string, std::vector<space_view_actor>>
      space_watchers;  // space '\0' dataset

  std::mutex timers_mu;
  timer_actor timers;  // guarded by timers_mu: the timer actor behind call_after; null once stopped
  std::mutex conns_mu;
  std::unordered_map<std::uint64_t, caf::actor_addr> conns;
  std::uint64_t next_conn = 0;

 private:
  unit_actor shard_locked(shard_stripe& s, std::string key, const store::unit_key& unit);
  space_view_actor space_view_locked(const std::shared_ptr<const core::windowed_request>& req,
                                     bool member_part);

 public:
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;  // last: destroyed first, after shutdown()
};

/// Spawns the shard actor of `unit` (shard_actor.cpp). With a `predecessor` (the unit's
/// previous registry entry, told to hand over) it serves once that one handed its queries over.
unit_actor spawn_shard(runtime::impl& rt, store::unit_key unit, unit_actor predecessor = {});

/// Spawns the space view serving `req` (space_view.cpp).
space_view_actor spawn_space_view(runtime::impl& rt,
                                  std::shared_ptr<const core::windowed_request> req,
                                  bool member_part);

/// Spawns the gateway-side actor of `unit`, which another member (`owner`) owns
/// (remote_shard.cpp).
unit_actor spawn_remote_shard(runtime::impl& rt, store::unit_key unit, std::string owner,
                              unit_actor predecessor = {});

/// Spawns the actor that encodes `query` for its subscribers, starting from `snapshot` (its
/// window or matches as the owner computed them).
query_actor spawn_query(runtime::impl& rt, query_parent_actor shard,
                        std::shared_ptr<const core::bound_query> query, view_snapshot snapshot);

}  // namespace weir::actors

// weir::actors::unit_loader — reads units from the store off the actor threads. A unit's first
// use must not stall a CAF worker: reading and parsing a million records takes most of a second.
// A loader thread reads the unit, builds its records (parsing each once for its id and
// identity) and hands the result to the shard, which meanwhile keeps its mail waiting. Two
// threads take the queue, so one large unit (or a new sort's index, which shards build here)
// does not hold every other unit's first use behind it; the store decides how far their reads
// overlap (PostgreSQL's reader session is one).
// Internal to actors/ (includes CAF).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/skipped_rows.hpp"
#include "core/document_limits.hpp"
#include "core/record.hpp"
#include "core/result.hpp"
#include "store/durable_store.hpp"

namespace weir::actors {

struct loaded_msg;  // messages.hpp

/// What a load is answered to: a shard, which hears the loader's loaded_msg.
using load_client = caf::typed_actor<caf::reacts_to<loaded_msg>>;

/// A unit as the loader built it.
struct unit_load {
  std::uint64_t seq = 0;
  bool deleted = false;
  std::unordered_map<std::string, core::record_set> datasets;
  std::int64_t last_modified_ms = 0;          ///< objects unit: the largest `modifiedAt` it holds
  std::vector<core::idempotency_entry> keys;  ///< idempotency keys not yet expired
  std::optional<core::error> error;           ///< set when the unit could not be read
};

class unit_loader {
 public:
  /// `limits`: what a row must hold to when other programs may write the store
  /// (durable_store::shared_with_others); records of Weir's own store are held only to the
  /// fixed rules (depth, numbers JSON can carry, UTF-8), so that lowering a limit never hides
  /// what was accepted under the old one. A row that fails is skipped, logged and counted in
  /// `skipped`.
  unit_loader(store::durable_store& store, const core::document_limits& limits,
              skipped_rows& skipped);
  ~unit_loader();
  unit_loader(const unit_loader&) = delete;
  unit_loader& operator=(const unit_loader&) = delete;

  /// Queues a load of `unit`; `shard` gets a loaded_msg with the result.
  void load(store::unit_key unit, load_client shard);

  /// Runs `job` on a loader thread once the jobs queued before it were taken (a store read or a
  /// build that must not block an actor thread). Dropped once stopping.
  void post(std::function<void()> job);

  /// Loader threads: bounded, so loads cannot take every core from the actors.
  static constexpr std::size_t threads = 2;
  /// Their CPU priority below the actor and I/O threads' (a nice value, per thread): on a busy
  /// core a unit load, an index build or a filter pass (hundreds of milliseconds at a million
  /// records) gets about a tenth of what they get, so it delays no loaded unit's writes and
  /// frames; on an idle core it runs at full speed.
  static constexpr int nice = 10;

  /// Stops the threads; queued loads are dropped (their shards are being stopped too).
  void stop();

 private:
  void run();

  store::durable_store& store_;
  core::document_limits limits_;
  skipped_rows& skipped_;
  std::mutex mu_;
  std::condition_variable cv_;
  struct job {
    store::unit_key unit;
    load_client shard;
    std::function<void()> run;  // set: a posted job instead of a load
  };
  std::deque<job> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace weir::actors

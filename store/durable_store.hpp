// weir::store::durable_store — what a node needs from its system of record: durable group
// commit of write batches (acknowledged only once durable), and whole-unit reads for shard
// activation. Two implementations: the embedded RocksDB store (rocksdb_store, the default) and
// PostgreSQL (postgres_store, store.backend: postgres), which also reports the changes that other
// programs commit to its tables (change capture), so that they reach subscribers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/idempotency_key.hpp"
#include "core/result.hpp"

namespace weir::core {
class count_histogram;
}

namespace weir::store {

/// An ownership unit: one object's datasets, or (object == "") the space's `objects` rows.
struct unit_key {
  std::string space;
  std::string object;
  bool operator==(const unit_key&) const = default;
};

/// One record write inside a batch; `json` empty means delete.
struct record_write {
  std::string dataset;
  std::string id;
  std::string json;
  /// A PATCH ($set/$unset/$inc, its body's JSON text) and the record's JSON it was applied to
  /// (`based_on`). A store that other programs write too applies the update again to the record
  /// it holds when that is not `based_on`, so no change is lost between them (and reports the
  /// result in the batch's `corrected`). Empty for every other write.
  std::string update{};
  std::string based_on{};
};

/// Everything one write applies to one unit, atomically, with the unit's new sequence.
struct write_batch {
  unit_key unit;
  std::uint64_t seq = 0;
  std::vector<record_write> writes;
  /// Whether the unit's object is now deleted (its records purged by an object delete): set by
  /// that delete, cleared by the next write. Unset: unchanged.
  std::optional<bool> deleted;
  /// The records are already in the store as `writes` says (changes another program made there,
  /// read back by change capture): only the unit's sequence (and `deleted`) is written.
  bool captured = false;
  /// Elastic membership: the epoch of the owners the shard's state is known to be valid under
  /// (0: no check). The store refuses the batch once the owners on record are more than one
  /// change newer.
  std::uint64_t epoch = 0;
  /// Set by a store that refused this batch alone (the rest of its group committed): why. The
  /// batch's answer is then that error. Stores set it up themselves; callers leave it null.
  std::shared_ptr<core::error> refused;
  /// Filled by the store, before the batch is answered, with the records it wrote differently
  /// than `writes` says: updates applied again to a record another program changed meanwhile
  /// (`json` empty: that program had deleted it). Null: nobody asks.
  std::shared_ptr<std::vector<record_write>> corrected{};
  /// Which run of consecutive batches this one belongs to (0: none): a writer's batches built
  /// one on another share it. Once one of them fails or is refused, the store refuses the later
  /// ones of the same origin without writing them (they built on what was not applied), until
  /// the writer starts a new origin from what is durable.
  std::uint64_t origin = 0;
  /// Idempotency keys the batch's writes carried: stored with it, atomically, and loaded with
  /// the unit (those not yet expired), so a retry after a restart or failover finds them.
  std::vector<core::idempotency_entry> keys;
  /// Idempotency keys of the unit its shard no longer remembers (expired, or past
  /// store.maxIdempotencyKeysPerUnit): deleted with the batch, before `keys` are stored.
  std::vector<std::string> forget_keys{};
};

/// A record as loaded from disk.
struct stored_record {
  std::string dataset;
  std::string id;
  std::string json;
};

/// A record read back by id: `json` is nullopt when the store has no such record.
struct read_record {
  std::string id;
  std::optional<std::string> json;
};

/// A row of the store that a committed transaction of another program changed (inserted,
/// updated or deleted), as change capture reports it.
struct captured_row {
  std::string space;
  std::string object;
  std::string dataset;
  std::string id;
};

/// A dataset of a unit that change capture has the owner read again whole: one transaction
/// changed more of its rows than it keeps the keys of (captured_rows).
struct captured_dataset {
  std::string space;
  std::string object;
  std::string dataset;
};

/// One committed transaction of another program, as change capture read it: the rows it
/// changed, each once — or, past the bounds that keep a huge transaction's keys from taking
/// the reader's memory (captured_rows), the datasets it changed, or nothing but the fact.
struct captured_txn {
  std::vector<captured_row> rows;
  std::vector<captured_dataset> whole;  ///< read again whole (their rows are not in `rows`)
  /// It changed more datasets than the reader keeps: every unit held anywhere is read again
  /// whole (rows and whole are then empty).
  bool everything = false;
  /// The owners of units in force at its commit (elastic membership: the membership record as
  /// the change stream carried it, or newer); null when membership is a static list, so this
  /// node's own view routes the rows.
  std::shared_ptr<const std::vector<std::string>> owners;
};

/// Receives one transaction at a time, in commit order, and calls `applied` (from any thread,
/// exactly once) when their owners answered: `taken` true when every owner took them in (or did
/// not hold the unit in memory). The capture position advances past a transaction only once it
/// was taken; one that was not is read again from that position.
using capture_sink = std::function<void(captured_txn txn, std::function<void(bool taken)> applied)>;

/// What /cluster/health reports about change capture.
struct capture_status {
  bool enabled = false;            ///< this store captures changes (store.postgres.changeCapture)
  bool reading = false;            ///< this member holds the replication stream now
  std::string reader;              ///< the member that does ("" when none or unknown)
  std::uint64_t lag_bytes = 0;     ///< WAL between the server's end and what is applied (reader)
  std::string applied_lsn;         ///< the position confirmed to the server (reader)
  std::uint64_t transactions = 0;  ///< others' transactions this member handed on (reader)
  /// Datasets of units handed on to be read again whole, and transactions handed on as "every
  /// held unit", because a transaction changed more rows than the reader keeps (captured_rows).
  std::uint64_t whole_datasets = 0;
  std::uint64_t whole_nodes = 0;
  std::string error;  ///< why capture is not running, when it is not
};

/// How the store's connections to its database fare (PostgreSQL; an embedded store has none).
struct connection_health {
  std::uint64_t reconnects = 0;  ///< broken sessions replaced by fresh ones since the start
  /// Why the last statement that needed the database could not reach it, even on a fresh
  /// connection ("" once one succeeds again).
  std::string error;
};

/// A unit's state as loaded from disk at activation (its records go to the visitor).
struct unit_snapshot {
  std::uint64_t seq = 0;
  bool deleted = false;  ///< its object was deleted and nothing was written since
  /// Its idempotency keys that had not expired when it was read (write_batch::keys).
  std::vector<core::idempotency_entry> keys;
};

/// Receives each record of a unit being loaded: dataset, id, and the JSON text (movable).
using record_visitor =
    std::function<void(std::string_view dataset, std::string_view id, std::string&& json)>;

/// Called on the writer thread once the batch is durable (or failed). Must not block.
using commit_callback = std::function<void(core::result<void>)>;

class durable_store {
 public:
  virtual ~durable_store() = default;

  /// The backend's name as configured and reported (`embedded`, `postgres`).
  virtual const char* backend() const = 0;

  /// Whether records may hold U+0000 in their strings (PostgreSQL's jsonb cannot): writes that
  /// would are refused before they are applied.
  virtual bool holds_nul_characters() const { return true; }

  /// Whether other programs may write the records too, so that a PATCH must carry its update
  /// (record_write::update) to be applied again to what the store holds when it commits.
  virtual bool shared_with_others() const { return false; }

  /// Reads a whole unit (blocking; called off the actor threads when its shard starts), handing
  /// each record to `visit` as it is read, in (dataset, id) order.
  virtual core::result<unit_snapshot> load_unit(const unit_key& unit,
                                                const record_visitor& visit) = 0;

  using read_callback = std::function<void(core::result<std::vector<read_record>>)>;

  /// Reads records `ids` of one dataset of a unit, in the order of `ids`, as they are once every
  /// batch submitted before this call is durable: the read is queued behind those batches and
  /// made on the writer thread (where `done` runs) before any later batch commits. Refusals as
  /// submit().
  virtual core::result<void> read_after_writes(const unit_key& unit, const std::string& dataset,
                                               std::vector<std::string> ids,
                                               read_callback done) = 0;

  /// Whether anything was ever written to `space` (a few key reads, or one query).
  virtual bool has_space(const std::string& space) const = 0;

  /// The objects of `space` whose unit holds records of `dataset`.
  virtual std::vector<std::string> objects_with_dataset(const std::string& space,
                                                        const std::string& dataset) const = 0;

  /// Queues a batch for durable commit. Refuses it, without queuing, with server.overloaded
  /// when the queue is at capacity (the caller answers 503 instead of buffering without bound)
  /// or server.draining once stop() began. Batches commit in submission order; `done` runs on
  /// the writer thread.
  virtual core::result<void> submit(write_batch batch, commit_callback done) = 0;

  /// Batches (and ordered reads) queued or being written right now.
  virtual std::size_t queued() const = 0;

  /// How many batches each group commit made durable together (null: the store has no group
  /// commit to report).
  virtual const core::count_histogram* group_sizes() const { return nullptr; }

  /// Commits what is queued, then stops the writer thread (later submits are refused; reads
  /// still work until destruction). Idempotent.
  virtual void stop() = 0;

  /// Starts reporting changes that other programs commit to the store, as `member` (the name
  /// other members see in capture_status().reader). A store only this process writes (the
  /// embedded one) has nothing to report and ignores it. Stopped by stop().
  virtual void start_capture(std::string member, capture_sink sink) {
    (void)member;
    (void)sink;
  }

  /// Ends change capture (what was not taken yet is read again by the next reader); before the
  /// routes to the owners close at shutdown. Idempotent; stop() does it too.
  virtual void stop_capture() {}

  virtual capture_status capture() const { return {}; }
  /// Its connections' state (/cluster/health's `storeConnections`, /metrics).
  virtual connection_health connections() const { return {}; }
};

}  // namespace weir::store

// weir::store::postgres_store — PostgreSQL as the system of record (store.backend: postgres):
// the same durable_store contract as the embedded store, over libpq. A writer thread owns one
// connection and commits everything queued in one transaction (one WAL flush for the group), a
// reader connection serves unit loads and a third one space lookups; none runs on an actor
// thread. The schema (docs/operations.md "PostgreSQL") is created and migrated on open, under an
// advisory lock, so members starting together migrate once. Each transaction it commits carries
// a logical message ("weir") that tells change capture to skip it.
#pragma once

#include <memory>
#include <string>

#include "store/durable_store.hpp"

namespace weir::store {

class postgres_store final : public durable_store {
 public:
  struct options {
    std::string url;                    ///< a libpq connection string or URI
    std::size_t queue_capacity = 4096;  ///< batches waiting for the writer; beyond → refused
    /// Report what other programs commit to weir_records (store.postgres.changeCapture).
    bool change_capture = true;
    /// This member's id, named as the writer of each transaction it commits.
    std::string member;
    /// Elastic membership: commit a unit's writes only while the membership record names
    /// `member` its owner (else cluster.not_owner, nothing applied).
    bool fence = false;
  };

  /// Connects (writer and reader), applies the schema migrations that are missing, starts the
  /// writer thread. Errors: store.open_failed (cannot connect, a migration failed, or the
  /// schema is newer than this build).
  static core::result<std::unique_ptr<postgres_store>> open(options opts);

  ~postgres_store() override;

  const char* backend() const override { return "postgres"; }
  bool holds_nul_characters() const override { return false; }
  bool shared_with_others() const override { return true; }

  core::result<unit_snapshot> load_unit(const unit_key& unit, const record_visitor& visit) override;
  core::result<void> read_after_writes(const unit_key& unit, const std::string& dataset,
                                       std::vector<std::string> ids, read_callback done) override;
  bool has_space(const std::string& space) const override;
  std::vector<std::string> objects_with_dataset(const std::string& space,
                                                const std::string& dataset) const override;
  core::result<void> submit(write_batch batch, commit_callback done) override;
  std::size_t queued() const override;
  const core::count_histogram* group_sizes() const override;
  void stop() override;
  /// Starts this member's change reader (postgres_change_reader): it competes for the
  /// cluster's one replication stream and hands what it reads to `sink`.
  void start_capture(std::string member, capture_sink sink) override;
  void stop_capture() override;
  capture_status capture() const override;
  /// Reconnects of the writer, loader and lookup connections (each heals before use and runs a
  /// statement once more on a fresh session when its session broke under it), and the last
  /// failure to reach the database.
  connection_health connections() const override;

  /// The schema version this build migrates to.
  static int schema_version();

 private:
  struct impl;
  explicit postgres_store(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::store

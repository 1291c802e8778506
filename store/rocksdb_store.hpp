// weir::store::rocksdb_store — the embedded store (the default backend): RocksDB under
// --data-dir, a writer thread that group-commits queued batches with one fsync. Owns the
// RocksDB handle; RocksDB headers stay in rocksdb_store.cpp.
#pragma once

#include <memory>
#include <string>

#include "store/durable_store.hpp"

namespace weir::store {

class rocksdb_store final : public durable_store {
 public:
  struct options {
    std::string dir;
    std::size_t queue_capacity = 4096;  ///< batches waiting for the writer; beyond → refused
    bool sync = true;                   ///< fsync each group commit (tests may not turn it off)
  };

  /// Opens (creating if needed) the store under `opts.dir` and starts the writer thread.
  static core::result<std::unique_ptr<rocksdb_store>> open(options opts);

  ~rocksdb_store() override;

  const char* backend() const override { return "embedded"; }

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

 private:
  struct impl;
  explicit rocksdb_store(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::store

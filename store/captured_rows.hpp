// weir::store::captured_rows — the keys of the rows one captured transaction changed, as the
// change reader collects them before its COMMIT, in bounded memory. A transaction another
// program commits can change any number of rows (a backfill, a migration's UPDATE of every
// record); keeping each row's key until the commit would make the reader's memory follow it.
// Instead, past `per_dataset` distinct rows of one dataset of a unit that dataset is read again
// whole;
// past `total` keys held, the dataset a new row belongs to is; past `datasets` datasets, every
// unit held anywhere is (the transaction is then only a fact), as for a TRUNCATE, which names no
// rows at all. The owners then read what changed from the store itself, which is what a refresh
// does anyway.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "store/durable_store.hpp"

namespace weir::store {

class captured_rows {
 public:
  struct bounds {
    std::size_t per_dataset = 1000;  ///< keys of one dataset of a unit (one refresh's worth)
    std::size_t total = 100000;      ///< keys of the whole transaction
    std::size_t datasets = 100000;   ///< datasets of units, whole ones included
  };

  captured_rows() = default;
  explicit captured_rows(bounds b) : bounds_(b) {}

  /// One changed row (a row seen again is kept once).
  void add(captured_row row);

  /// A change that names no rows (a TRUNCATE of weir_records): every unit held anywhere is read
  /// again whole, and nothing else of the transaction is kept.
  void add_everything();

  /// What was collected, each row once, in (space, object, dataset, id) order; empties it.
  captured_txn take();

  /// Forgets everything (a transaction of Weir's own, or a session that ended).
  void clear();

  bool empty() const { return groups_.empty() && !everything_; }
  /// Row keys held now (what the bounds keep in check).
  std::size_t keys() const { return keys_; }

 private:
  using group_key = std::tuple<std::string, std::string, std::string>;
  struct group {
    bool whole = false;
    bool sorted = false;           // once at the bound: sorted and distinct from then on
    std::vector<std::string> ids;  // until then unsorted, repeats allowed (take() sorts them)
  };
  void add_to_sorted(group& g, std::string id);
  void make_whole(group& g);

  bounds bounds_;
  std::map<group_key, group> groups_;
  std::size_t keys_ = 0;
  bool everything_ = false;
};

}  // namespace weir::store

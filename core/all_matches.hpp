// weir::core::all_matches — every match of a filter among a dataset's records, found by one pass
// over them in any order and brought up to date with the changes published after the records
// were taken.
//
// Why: an unbounded query's first result (a new query key without a limit, an HTTP snapshot no
// open query has) evaluated its filter on every record on the unit's thread: at a million
// records about 0.3 s of held writes, repeatable by any caller with a new filter. A loader
// thread makes this pass instead, while the unit goes on serving; the journal of what the unit
// published meanwhile brings it up to date (catch_up) before the query opens from it.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "core/filter.hpp"
#include "core/record.hpp"

namespace weir::core {

class all_matches {
 public:
  /// One pass over `records`: keeps those `where` matches, in the order given. Reads with
  /// thread_doc_reader().
  static all_matches scan(const std::vector<record_ptr>& records, filter where);

  /// The changes published since the records were taken, in publication order: (before, after),
  /// either side null. Afterwards rows() holds every current match (those the changes touched
  /// last, after the others). O(rows + changes).
  void catch_up(const std::vector<std::pair<record_ptr, record_ptr>>& journal);

  /// Forgets every match, as when the object was deleted after the records were taken.
  void clear() { rows_.clear(); }

  std::vector<record_ptr>& rows() { return rows_; }
  const filter& where() const { return where_; }

 private:
  explicit all_matches(filter where) : where_(std::move(where)) {}

  filter where_;
  std::vector<record_ptr> rows_;
};

}  // namespace weir::core

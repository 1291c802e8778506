// weir::core::first_matches — the first matches of a filter in one sort order, found by one pass
// over a dataset's records in any order, and brought up to date with the changes published
// after the records were taken.
//
// Why: a window whose filter matches only records far down its sort (or none at all) used to
// find its rows by walking the sort's index from its start on the unit's thread, parsing each
// record: at a million records, ~110 ms of held writes for matches starting halfway, and a whole
// pass for a filter matching nothing, repeatable by any caller with a new filter. A loader thread
// runs this pass instead (it also gives the count, which Arc paging needs), while the unit goes
// on serving; the window then opens from these rows (window_view::fill(const first_matches&)).
//
// Invariant: rows() holds, in order, every match whose position is at or before bound() (every
// match when bound() is null). A change keeps it: a match at or before the bound that leaves is
// erased, a match that arrives at or before it is inserted, and what lies past it is not known
// and so not kept. The count is exact whatever the bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/filter.hpp"
#include "core/record.hpp"
#include "core/sort_spec.hpp"

namespace weir::core {

class first_matches {
 public:
  struct row {
    record_ptr rec;
    sort_position pos;
  };

  /// One pass over `records` (any order): counts the matches of `where` and keeps the `want`
  /// first of them in `order` (O(N) filter evaluations, O(M log want) for M matches; a position
  /// is read only for a match that would be kept). `want` > 0. Reads with thread_doc_reader().
  static first_matches scan(const std::vector<record_ptr>& records, filter where, sort_spec order,
                            std::size_t want);

  /// A change published after the scanned records were taken, in publication order (`before`
  /// is the record as the previous change left it; either side null).
  void apply(const record* before, const record_ptr& after);

  /// Forgets every match, as when the object was deleted after the records were taken.
  void clear();

  /// The matches at or before bound(), in order.
  const std::vector<row>& rows() const { return rows_; }
  /// Where rows() stops being every match; null when it is every match.
  const sort_position* bound() const { return bound_ ? &*bound_ : nullptr; }
  std::uint64_t count() const { return count_ < 0 ? 0 : static_cast<std::uint64_t>(count_); }
  const sort_spec& order() const { return order_; }
  const filter& where() const { return where_; }

 private:
  first_matches(filter where, sort_spec order)
      : where_(std::move(where)), order_(std::move(order)) {}
  /// Whether `pos` lies at or before the bound (always, without one).
  bool within(const sort_position& pos) const;

  filter where_;
  sort_spec order_;
  std::vector<row> rows_;
  std::optional<sort_position> bound_;
  std::int64_t count_ = 0;
};

}  // namespace weir::core

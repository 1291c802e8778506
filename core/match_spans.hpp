// weir::core::match_spans — where in a sort index the matches of a filter can be. A filter that
// bounds the index's first key ({"ts": {"$gte": 5}}, {"name": {"$regex": "^ab"}},
// {"state": {"$in": ["a", "b"]}}, {"deleted": {"$ne": true}}) can only be matched by records whose
// key lies in the values it admits, or by records holding an array there (an element matches):
// runs of ranks, found in O(k log N) for k intervals. Windows walk those runs instead of the
// whole index, and a filter that is nothing but those bounds is counted from the ranks alone, so
// a paged query with such a filter opens in O(k log N + page) at any dataset size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/filter.hpp"
#include "core/order_index.hpp"

namespace weir::core {

/// Ranks [first, last) of an index.
struct rank_span {
  std::size_t first = 0;
  std::size_t last = 0;
  std::size_t size() const { return last > first ? last - first : 0; }
};

/// The values a filter admits at an index's first key, kept so that the spans can be found
/// again as the index changes (ranks move; the bounds do not).
class span_plan {
 public:
  /// nullopt when `where` does not bound the first key of `order` (the whole index must then
  /// be read).
  static std::optional<span_plan> make(const filter& where, const sort_spec& order);

  /// The runs of ranks of `idx` (sorted by the `order` given to make()) where matches can be, in
  /// index order, disjoint, empty runs left out: the records whose first key is admitted, and
  /// those whose first key is an array.
  std::vector<rank_span> spans(const order_index<record_ptr>& idx) const;

  /// Every record in the admitted runs matches (the filter is the bounds alone).
  bool exact() const { return bounds_.exact; }

  /// The bounds admit no more than intervals do: no complement ($ne, $nin, $not, $nor) unless
  /// intersected with an interval ({"$gte": 5, "$ne": 7}). What they admit is then typically a
  /// small part of the index, so an index on the field narrows a filter that also tests other
  /// fields. A complement alone typically admits most of it, and serves only a filter it is
  /// exact for (a count from ranks).
  bool narrow() const;

  /// The runs of records whose first key is admitted (arrays apart), in index order, disjoint,
  /// none empty.
  std::vector<rank_span> scalar_spans(const order_index<record_ptr>& idx) const;

  /// The run of records whose first key is an array.
  rank_span array_span(const order_index<record_ptr>& idx) const;

 private:
  path_bounds bounds_;
  bool descending_ = false;
};

/// How many records holding an array at the first key count_by_ranks reads before giving up:
/// about a millisecond of parsing, on the thread that asked.
inline constexpr std::size_t max_array_reads_for_count = 4096;

/// The number of records of `idx` that match `where`, read from ranks when the filter is bounds
/// on the index's first key alone (span_plan::exact): the admitted ranks, plus the matches among
/// the records holding an array there, which are read one by one only when there are at most
/// `max_array_reads` of them. nullopt otherwise (the caller counts some other way).
std::optional<std::uint64_t> count_by_ranks(const order_index<record_ptr>& idx, const filter& where,
                                            std::size_t max_array_reads);

}  // namespace weir::core

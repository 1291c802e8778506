// weir::core::match_spans — where in a sort index the matches of a filter can be. A filter that
// bounds the index's first key ({"ts": {"$gte": 5}}, {"name": {"$regex": "^ab"}},
// {"state": {"$in": ["a", "b"]}}, {"deleted": {"$ne": true}}) can only be matched by records whose
// key lies in the values it admits, or by records holding an array there (an element matches):
// runs of ranks, found in O(k log N) for k intervals. On an index of two keys or more, a filter
// that fixes the first key to values and bounds the second ({"owner": "u", "ts": {"$gte": 5}})
// gives the runs of the second key's bounds within each value's. Windows walk those runs instead
// of the whole index, and a filter that is nothing but those bounds is counted from the ranks
// alone, so a paged query with such a filter opens in O(k log N + page) at any dataset size.
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

/// The runs of ranks a span_plan gives on one index, in index order, disjoint, none empty.
struct plan_runs {
  std::vector<rank_span> admitted;  ///< records whose bounded keys the bounds admit, arrays apart
  std::vector<rank_span> arrays;    ///< records holding an array at a bounded key: to be read
};

/// The values a filter admits at an index's first key, and at its second when the first is
/// fixed to values ({"owner": "u", "ts": {"$gte": 5}} on ["owner", "ts"]: the runs of ts ≥ 5
/// within owner "u"'s), kept so that the runs can be found again as the index changes (ranks
/// move; the bounds do not).
class span_plan {
 public:
  /// nullopt when `where` does not bound the first key of `order` (the whole index must then
  /// be read).
  static std::optional<span_plan> make(const filter& where, const sort_spec& order);

  /// The runs of ranks of `idx` (sorted by the `order` given to make()) where matches can be.
  plan_runs runs(const order_index<record_ptr>& idx) const;

  /// Both kinds of runs of runs(), merged: every record that can match lies in them.
  std::vector<rank_span> spans(const order_index<record_ptr>& idx) const;

  /// Every record in the admitted runs matches (the filter is the bounds alone).
  bool exact() const { return exact_; }

  /// The bounds admit no more than intervals do: no complement ($ne, $nin, $not, $nor) and no
  /// whole type class ($type) unless intersected with an interval ({"$gte": 5, "$ne": 7}). What
  /// they admit is then typically a small part of the index, so an index on the field narrows a
  /// filter that also tests other fields. A complement or a class alone typically admits most of
  /// it, and serves only a filter it is exact for (a count from ranks).
  bool narrow() const;

  /// The first key's bounds are values alone ($eq, $in) and the second key is bounded too: the
  /// runs are those of the second key's bounds within each value's.
  bool compound() const { return second_.has_value(); }

 private:
  path_bounds bounds_;  // on the first key
  bool descending_ = false;
  std::vector<boost::json::value> points_;  // the first key's values, when compound
  std::optional<path_bounds> second_;       // on the second key, when compound
  bool second_descending_ = false;
  bool exact_ = false;
};

/// The ascending order of an index on `paths` (one or two of a filter's paths, filter::paths),
/// or nullopt where sort keys cannot name it: a path starting with '-' reads as a descending key
/// on the rest (so {"-a": 1} would index "a"), and a malformed one.
std::optional<sort_spec> filter_index_order(const std::vector<std::string>& paths);

/// The most fields an $or across fields (filter::disjuncts) has indexed for it, one per branch
/// at least: each index holds one of a dataset's query.maxSortIndexesPerDataset slots (16 by
/// default), and the $or is read from indexes only when every branch has one, so an $or over
/// more fields than fit would only have its indexes push each other out.
inline constexpr std::size_t max_disjunct_index_fields = 4;

/// How many records holding an array at a bounded key count_by_ranks reads before giving up:
/// about a millisecond of parsing, on the thread that asked.
inline constexpr std::size_t max_array_reads_for_count = 4096;

/// The number of records of `idx` that match `where`, read from ranks when the filter is bounds
/// on the index's first key (or its first two, span_plan::compound) alone (span_plan::exact):
/// the admitted ranks, plus the matches among the records holding an array at a bounded key,
/// which are read one by one only when there are at most `max_array_reads` of them. nullopt
/// otherwise (the caller counts some other way).
std::optional<std::uint64_t> count_by_ranks(const order_index<record_ptr>& idx, const filter& where,
                                            std::size_t max_array_reads);

}  // namespace weir::core

// Runs of an index's ranks where a filter's matches can be (see match_spans.hpp).
//
// Why the array run: a filter clause on a path is also satisfied by an array holding a matching
// element (filter.hpp, "contains"), and arrays sort as their own type class, apart from the
// numbers and strings the interval speaks of. Objects, booleans, null and missing values never
// satisfy a clause that gives an interval (a number or string operand, a literal prefix).
#include "core/match_spans.hpp"

#include <algorithm>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace weir::core {

namespace {

using boost::json::value;

// An interval of first-key values in value order: [lower, upper] with each end inclusive or not.
struct interval {
  value lower;
  bool lower_inclusive = true;
  value upper;
  bool upper_inclusive = false;
};

// The smallest value of each type class, as json_type_rank orders them: a class's values lie in
// [its smallest, the next class's smallest). Numbers have no smallest; they come after null.
interval class_interval(int rank) {
  switch (rank) {
    case 1:
      return {value(nullptr), false, value(""), false};
    case 2:
      return {value(""), true, value(boost::json::object{}), false};
    default:  // 4: arrays
      return {value(boost::json::array{}), true, value(false), false};
  }
}

rank_span ranks_of(const order_index<record_ptr>& idx, const interval& i, bool descending) {
  // The index runs in value order on an ascending first key, against it on a descending one.
  rank_span s = !descending ? rank_span{idx.key_bound(i.lower, !i.lower_inclusive),
                                        idx.key_bound(i.upper, i.upper_inclusive)}
                            : rank_span{idx.key_bound(i.upper, !i.upper_inclusive),
                                        idx.key_bound(i.lower, i.lower_inclusive)};
  s.last = std::max(s.first, s.last);  // crossed bounds ({$gt: 5, $lt: 2}): an empty run
  return s;
}

}  // namespace

std::optional<span_plan> span_plan::make(const filter& where, const sort_spec& order) {
  auto range = where.range_on(order.first_key_path());
  if (!range) {
    return std::nullopt;
  }
  span_plan p;
  p.range_ = std::move(*range);
  p.descending_ = !order.keys().empty() && order.keys()[0].descending;
  return p;
}

rank_span span_plan::scalar_span(const order_index<record_ptr>& idx) const {
  if (range_.none) {
    return {};
  }
  auto i = class_interval(range_.type_rank);
  if (range_.lower) {
    i.lower = *range_.lower;
    i.lower_inclusive = range_.lower_inclusive;
  }
  if (range_.upper) {
    i.upper = *range_.upper;
    i.upper_inclusive = range_.upper_inclusive;
  }
  return ranks_of(idx, i, descending_);
}

rank_span span_plan::array_span(const order_index<record_ptr>& idx) const {
  return ranks_of(idx, class_interval(4), descending_);
}

std::vector<rank_span> span_plan::spans(const order_index<record_ptr>& idx) const {
  std::vector<rank_span> out;
  auto scalars = scalar_span(idx);
  auto arrays = array_span(idx);
  // Arrays sort after numbers and strings: last in ascending order, first in descending.
  for (const auto& s : descending_ ? std::vector{arrays, scalars} : std::vector{scalars, arrays}) {
    if (s.size() > 0) {
      out.push_back(s);
    }
  }
  return out;
}

std::optional<std::uint64_t> count_by_ranks(const order_index<record_ptr>& idx, const filter& where,
                                            std::size_t max_array_reads) {
  auto plan = span_plan::make(where, idx.spec());
  if (!plan || !plan->exact()) {
    return std::nullopt;
  }
  auto arrays = plan->array_span(idx);
  if (arrays.size() > max_array_reads) {
    return std::nullopt;
  }
  std::uint64_t n = plan->scalar_span(idx).size();
  auto& reader = thread_doc_reader();
  auto it = idx.select(arrays.first);
  for (std::size_t k = 0; k < arrays.size(); ++k, ++it) {
    n += where.matches(reader.read_only(it.rec(), where.fields())) ? 1 : 0;
  }
  return n;
}

}  // namespace weir::core

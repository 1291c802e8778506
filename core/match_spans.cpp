// Runs of an index's ranks where a filter's matches can be (see match_spans.hpp).
//
// Why the array run: a filter clause on a path is also satisfied by an array holding a matching
// element (filter.hpp, "contains"), and arrays sort as their own type class, apart from the
// scalars the bounds speak of. Objects never satisfy a bound; missing values sort, and are
// admitted, as null.
//
// The bounds (filter::bounds_on) are an expression of intervals; each interval is two key_bound
// lookups, and the expression's intersections, unions and complements are taken on the resulting
// runs of ranks, which are plain integers however the values compare.
#include "core/match_spans.hpp"

#include <algorithm>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace weir::core {

namespace {

using boost::json::value;
using spans_t = std::vector<rank_span>;

// An interval of first-key values in value order: [lower, upper] with each end inclusive or not;
// no upper: to the end of the index's values (booleans sort last).
struct interval {
  value lower;
  bool lower_inclusive = true;
  std::optional<value> upper;
  bool upper_inclusive = false;
};

// Each type class's values, as json_type_rank orders them: a class's values lie in [its
// smallest, the next class's smallest). Null (and missing) is one value; numbers have no
// smallest, they come after null.
interval class_interval(int rank) {
  switch (rank) {
    case 0:
      return {value(nullptr), true, value(nullptr), true};
    case 1:
      return {value(nullptr), false, value(""), false};
    case 2:
      return {value(""), true, value(boost::json::object{}), false};
    case 4:
      return {value(boost::json::array{}), true, value(false), false};
    default:  // 5: booleans, the last class
      return {value(false), true, std::nullopt, false};
  }
}

rank_span ranks_of(const order_index<record_ptr>& idx, const interval& i, bool descending) {
  // The index runs in value order on an ascending first key, against it on a descending one.
  const std::size_t value_end = !descending ? idx.size() : 0;
  rank_span s = !descending
                    ? rank_span{idx.key_bound(i.lower, !i.lower_inclusive),
                                i.upper ? idx.key_bound(*i.upper, i.upper_inclusive) : value_end}
                    : rank_span{i.upper ? idx.key_bound(*i.upper, !i.upper_inclusive) : value_end,
                                idx.key_bound(i.lower, i.lower_inclusive)};
  s.last = std::max(s.first, s.last);  // crossed bounds ({$gt: 5, $lt: 2}): an empty run
  return s;
}

rank_span range_ranks(const order_index<record_ptr>& idx, const value_range& r, bool descending) {
  auto i = class_interval(r.type_rank);
  if (r.lower) {
    i.lower = *r.lower;
    i.lower_inclusive = r.lower_inclusive;
  }
  if (r.upper) {
    i.upper = *r.upper;
    i.upper_inclusive = r.upper_inclusive;
  }
  return ranks_of(idx, i, descending);
}

// Sorted, disjoint, non-empty runs from any runs.
spans_t normalized(spans_t v) {
  std::erase_if(v, [](const rank_span& s) { return s.size() == 0; });
  std::sort(v.begin(), v.end(),
            [](const rank_span& a, const rank_span& b) { return a.first < b.first; });
  spans_t out;
  for (const auto& s : v) {
    if (!out.empty() && s.first <= out.back().last) {
      out.back().last = std::max(out.back().last, s.last);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

spans_t intersection(const spans_t& a, const spans_t& b) {
  spans_t out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const rank_span s{std::max(a[i].first, b[j].first), std::min(a[i].last, b[j].last)};
    if (s.size() > 0) {
      out.push_back(s);
    }
    (a[i].last < b[j].last ? i : j)++;
  }
  return out;
}

// [0, n) without the runs of `a` (sorted, disjoint).
spans_t complement(const spans_t& a, std::size_t n) {
  spans_t out;
  std::size_t at = 0;
  for (const auto& s : a) {
    if (s.first > at) {
      out.push_back({at, s.first});
    }
    at = std::max(at, s.last);
  }
  if (at < n) {
    out.push_back({at, n});
  }
  return out;
}

// The ranks of the records with a first key other than an array that `b` admits.
spans_t admitted(const order_index<record_ptr>& idx, const value_bounds& b, bool descending,
                 const rank_span& arrays) {
  using kind = value_bounds::kind;
  switch (b.k) {
    case kind::range:
      return normalized({range_ranks(idx, b.range, descending)});
    case kind::all_of: {
      spans_t out{{0, idx.size()}};
      for (const auto& p : b.parts) {
        out = intersection(out, admitted(idx, p, descending, arrays));
      }
      return normalized(std::move(out));
    }
    case kind::any_of:
    case kind::none_of: {
      spans_t any;
      for (const auto& p : b.parts) {
        auto s = admitted(idx, p, descending, arrays);
        any.insert(any.end(), s.begin(), s.end());
      }
      any = normalized(std::move(any));
      if (b.k == kind::any_of) {
        return any;
      }
      // Arrays are never admitted: they are read.
      any.push_back(arrays);
      return complement(normalized(std::move(any)), idx.size());
    }
  }
  return {};
}

// Whether `b` admits no more than intervals do: a complement admits most values, unless it is
// intersected with something that does not.
bool narrows(const value_bounds& b) {
  switch (b.k) {
    case value_bounds::kind::range:
      return true;
    case value_bounds::kind::all_of:
      return std::any_of(b.parts.begin(), b.parts.end(), narrows);
    case value_bounds::kind::any_of:
      return std::all_of(b.parts.begin(), b.parts.end(), narrows);
    case value_bounds::kind::none_of:
      return false;
  }
  return false;
}

}  // namespace

bool span_plan::narrow() const {
  return narrows(bounds_.admitted);
}

std::optional<span_plan> span_plan::make(const filter& where, const sort_spec& order) {
  auto bounds = where.bounds_on(order.first_key_path());
  if (!bounds) {
    return std::nullopt;
  }
  span_plan p;
  p.bounds_ = std::move(*bounds);
  p.descending_ = !order.keys().empty() && order.keys()[0].descending;
  return p;
}

std::vector<rank_span> span_plan::scalar_spans(const order_index<record_ptr>& idx) const {
  return admitted(idx, bounds_.admitted, descending_, array_span(idx));
}

rank_span span_plan::array_span(const order_index<record_ptr>& idx) const {
  return ranks_of(idx, class_interval(4), descending_);
}

std::vector<rank_span> span_plan::spans(const order_index<record_ptr>& idx) const {
  const auto arrays = array_span(idx);
  auto out = admitted(idx, bounds_.admitted, descending_, arrays);
  out.push_back(arrays);
  return normalized(std::move(out));
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
  std::uint64_t n = 0;
  for (const auto& s : plan->scalar_spans(idx)) {
    n += s.size();
  }
  auto& reader = thread_doc_reader();
  auto it = idx.select(arrays.first);
  for (std::size_t k = 0; k < arrays.size(); ++k, ++it) {
    n += where.matches(reader.read_only(it.rec(), where.fields())) ? 1 : 0;
  }
  return n;
}

}  // namespace weir::core

// Runs of an index's ranks where a filter's matches can be (see match_spans.hpp).
//
// Why the array run: a filter clause on a path is also satisfied by an array holding a matching
// element (filter.hpp, "contains"), and arrays sort as their own type class, apart from the
// values the bounds speak of. Objects satisfy only a whole class ($type: "object") or a
// complement; missing values sort, and are admitted, as null.
//
// The bounds (filter::bounds_on) are an expression of intervals; each interval is two key_bound
// (keys_bound, within a value of the first key) lookups, and the expression's intersections, unions
// and complements are taken on the resulting runs of ranks, which are plain integers however the
// values compare.
#include "core/match_spans.hpp"

#include <algorithm>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace weir::core {

namespace {

using boost::json::value;
using spans_t = std::vector<rank_span>;

// An interval of one key's values in value order: [lower, upper] with each end inclusive or not;
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
    case 3:  // objects: {} is the smallest (compare_json compares members, then sizes)
      return {value(boost::json::object{}), true, value(boost::json::array{}), false};
    case 4:
      return {value(boost::json::array{}), true, value(false), false};
    default:  // 5: booleans, the last class
      return {value(false), true, std::nullopt, false};
  }
}

// Where bounds on one key are resolved: that key's direction, and the block of ranks where the
// keys before it are fixed (the whole index for the first key; one value's run of it for the
// second).
struct key_scope {
  const order_index<record_ptr>& idx;
  const value* fixed = nullptr;  // the first key's value, when the key is the second
  bool descending = false;
  rank_span block;
};

std::size_t bound(const key_scope& s, const value& v, bool after) {
  if (s.fixed == nullptr) {
    return s.idx.key_bound(v, after);
  }
  const value vs[2] = {*s.fixed, v};
  return s.idx.keys_bound(vs, after);
}

rank_span ranks_of(const key_scope& s, const interval& i) {
  // The block runs in value order on an ascending key, against it on a descending one.
  const std::size_t value_end = !s.descending ? s.block.last : s.block.first;
  rank_span r = !s.descending
                    ? rank_span{bound(s, i.lower, !i.lower_inclusive),
                                i.upper ? bound(s, *i.upper, i.upper_inclusive) : value_end}
                    : rank_span{i.upper ? bound(s, *i.upper, !i.upper_inclusive) : value_end,
                                bound(s, i.lower, i.lower_inclusive)};
  r.first = std::max(r.first, s.block.first);
  r.last = std::min(r.last, s.block.last);
  r.last = std::max(r.first, r.last);  // crossed bounds ({$gt: 5, $lt: 2}): an empty run
  return r;
}

rank_span range_ranks(const key_scope& s, const value_range& r) {
  auto i = class_interval(r.type_rank);
  if (r.lower) {
    i.lower = *r.lower;
    i.lower_inclusive = r.lower_inclusive;
  }
  if (r.upper) {
    i.upper = *r.upper;
    i.upper_inclusive = r.upper_inclusive;
  }
  return ranks_of(s, i);
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

// `block` without the runs of `a` (sorted, disjoint, within it).
spans_t complement(const spans_t& a, rank_span block) {
  spans_t out;
  std::size_t at = block.first;
  for (const auto& s : a) {
    if (s.first > at) {
      out.push_back({at, s.first});
    }
    at = std::max(at, s.last);
  }
  if (at < block.last) {
    out.push_back({at, block.last});
  }
  return out;
}

// The ranks of the records of the scope's block whose key, not an array, `b` admits.
spans_t admitted(const key_scope& s, const value_bounds& b, const rank_span& arrays) {
  using kind = value_bounds::kind;
  switch (b.k) {
    case kind::range:
      return normalized({range_ranks(s, b.range)});
    case kind::all_of: {
      spans_t out{s.block};
      for (const auto& p : b.parts) {
        out = intersection(out, admitted(s, p, arrays));
      }
      return normalized(std::move(out));
    }
    case kind::any_of:
    case kind::none_of: {
      spans_t any;
      for (const auto& p : b.parts) {
        auto a = admitted(s, p, arrays);
        any.insert(any.end(), a.begin(), a.end());
      }
      any = normalized(std::move(any));
      if (b.k == kind::any_of) {
        return any;
      }
      // Arrays are never admitted: they are read.
      any.push_back(arrays);
      return complement(normalized(std::move(any)), s.block);
    }
  }
  return {};
}

// The values `b` admits when they are single values ($eq, $in): nullopt otherwise.
std::optional<std::vector<value>> points_of(const value_bounds& b) {
  auto point = [](const value_bounds& x) {
    return x.k == value_bounds::kind::range && x.range.lower && x.range.upper &&
           x.range.lower_inclusive && x.range.upper_inclusive &&
           compare_json(&*x.range.lower, &*x.range.upper) == 0;
  };
  std::vector<value> out;
  if (point(b)) {
    out.push_back(*b.range.lower);
  } else if (b.k == value_bounds::kind::any_of &&
             std::all_of(b.parts.begin(), b.parts.end(), point)) {
    for (const auto& p : b.parts) {
      out.push_back(*p.range.lower);
    }
  } else {
    return std::nullopt;
  }
  return out;
}

bool narrows(const value_bounds& b) {
  switch (b.k) {
    case value_bounds::kind::range:
      // A whole type class ({"$type": "string"}) is typically most of an index.
      return b.range.lower.has_value() || b.range.upper.has_value();
    case value_bounds::kind::all_of:
      return std::any_of(b.parts.begin(), b.parts.end(), narrows);
    case value_bounds::kind::any_of:
      return std::all_of(b.parts.begin(), b.parts.end(), narrows);
    case value_bounds::kind::none_of:
      return false;
  }
  return false;
}

// The intervals of a bounds tree (bounds_on keeps them to max_bound_ranges).
std::size_t range_count(const value_bounds& b) {
  if (b.k == value_bounds::kind::range) {
    return 1;
  }
  std::size_t n = 0;
  for (const auto& part : b.parts) {
    n += range_count(part);
  }
  return n;
}

}  // namespace

std::optional<sort_spec> filter_index_order(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    if (!p.empty() && p.front() == '-') {
      return std::nullopt;
    }
  }
  auto order = sort_spec::parse(paths);
  if (!order) {
    return std::nullopt;
  }
  return std::move(order).value();
}

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
  p.exact_ = p.bounds_.exact;
  if (order.keys().size() >= 2 && !(order.paths()[1] == order.paths()[0])) {
    auto points = points_of(p.bounds_.admitted);
    auto second = points ? where.bounds_on(order.paths()[1]) : std::nullopt;
    // The second key's intervals are looked up within each value's block, on every walk: the
    // product stays within the bound filter::bounds_on keeps for one key, or the first key's
    // bounds serve alone.
    if (second && points->size() * (range_count(second->admitted) + 1) <= max_bound_ranges) {
      p.points_ = std::move(*points);
      p.second_ = std::move(*second);
      p.second_descending_ = order.keys()[1].descending;
      p.exact_ = where.exact_on(order.paths()[0], order.paths()[1]);
    }
  }
  return p;
}

plan_runs span_plan::runs(const order_index<record_ptr>& idx) const {
  const key_scope first{idx, nullptr, descending_, {0, idx.size()}};
  const auto arrays = ranks_of(first, class_interval(4));
  if (!second_) {
    return {admitted(first, bounds_.admitted, arrays), normalized({arrays})};
  }
  plan_runs out;
  out.arrays.push_back(arrays);  // an element may be one of the values
  for (const auto& v : points_) {
    const key_scope within{idx, &v, second_descending_, ranks_of(first, {v, true, v, true})};
    if (within.block.size() == 0) {
      continue;
    }
    const auto second_arrays = ranks_of(within, class_interval(4));
    auto a = admitted(within, second_->admitted, second_arrays);
    out.admitted.insert(out.admitted.end(), a.begin(), a.end());
    out.arrays.push_back(second_arrays);
  }
  // Values equal as numbers (1 and 1.0) give the same block twice.
  out.admitted = normalized(std::move(out.admitted));
  out.arrays = normalized(std::move(out.arrays));
  return out;
}

std::vector<rank_span> span_plan::spans(const order_index<record_ptr>& idx) const {
  auto r = runs(idx);
  r.admitted.insert(r.admitted.end(), r.arrays.begin(), r.arrays.end());
  return normalized(std::move(r.admitted));
}

std::optional<std::uint64_t> count_by_ranks(const order_index<record_ptr>& idx, const filter& where,
                                            std::size_t max_array_reads) {
  auto plan = span_plan::make(where, idx.spec());
  if (!plan || !plan->exact()) {
    return std::nullopt;
  }
  const auto runs = plan->runs(idx);
  std::size_t reads = 0;
  for (const auto& s : runs.arrays) {
    reads += s.size();
  }
  if (reads > max_array_reads) {
    return std::nullopt;
  }
  std::uint64_t n = 0;
  for (const auto& s : runs.admitted) {
    n += s.size();
  }
  auto& reader = thread_doc_reader();
  for (const auto& s : runs.arrays) {
    auto it = idx.select(s.first);
    for (std::size_t k = 0; k < s.size(); ++k, ++it) {
      n += where.matches(reader.read_only(it.rec(), where.fields())) ? 1 : 0;
    }
  }
  return n;
}

}  // namespace weir::core

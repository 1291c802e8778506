// Evaluation of Mongo-style filters (see filter.hpp for grammar and semantics), and the
// values they admit at a field (filter::bounds_on). The parser is filter_parse.cpp.
#include "core/filter.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <re2/re2.h>
#include <boost/json/serialize.hpp>

#include "core/filter_tree.hpp"
#include "core/json_path.hpp"
#include "core/sort_spec.hpp"

namespace weir::core {

using namespace filter_detail;
using boost::json::array;
using boost::json::object;
using boost::json::value;

namespace {

// ---------------------------------------------------------------------------------------------
// Evaluation

std::uint32_t type_of(const value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return type_null;
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
      return type_int;
    case boost::json::kind::double_:
      return type_double;
    case boost::json::kind::string:
      return type_string;
    case boost::json::kind::object:
      return type_object;
    case boost::json::kind::array:
      return type_array;
    case boost::json::kind::bool_:
      return type_bool;
  }
  return 0;
}

// `contains` is Mongo's "a scalar against an array field matches when any element matches". It is
// off inside $elemMatch's operator form, which tests each element as a whole value: there, [[3]]
// has no element equal to 3.

bool match_eq(const value* v, const value& operand, bool contains) {
  if (v == nullptr) {
    return operand.is_null();
  }
  if (json_equal(*v, operand)) {
    return true;
  }
  if (const auto* arr = v->if_array(); arr != nullptr && contains) {
    for (const auto& e : *arr) {
      if (json_equal(e, operand)) {
        return true;
      }
    }
  }
  return false;
}

bool compare_holds(op_kind kind, int c) {
  switch (kind) {
    case op_kind::gt:
      return c > 0;
    case op_kind::gte:
      return c >= 0;
    case op_kind::lt:
      return c < 0;
    default:
      return c <= 0;
  }
}

bool match_compare(const value* v, const op& o, bool contains) {
  const int rank = json_type_rank(&o.operand);
  // Missing reads as null, so {$gte: null} and {$lte: null} match it.
  if (json_type_rank(v) == rank && compare_holds(o.kind, compare_json(v, &o.operand))) {
    return true;
  }
  if (v != nullptr && contains) {
    if (const auto* arr = v->if_array()) {
      for (const auto& e : *arr) {
        if (json_type_rank(&e) == rank && compare_holds(o.kind, compare_json(&e, &o.operand))) {
          return true;
        }
      }
    }
  }
  return false;
}

// Whether one value equals an element of an $in operand: its scalars by binary search over
// op::in_scalars, its arrays and objects one by one.
bool in_operand(const value& x, const op& o) {
  const auto& candidates = o.operand.get_array();
  const int rank = json_type_rank(&x);
  if (rank == 3 || rank == 4) {
    return std::any_of(o.in_compounds.begin(), o.in_compounds.end(),
                       [&](std::uint32_t i) { return json_equal(x, candidates[i]); });
  }
  auto it = std::lower_bound(
      o.in_scalars.begin(), o.in_scalars.end(), x,
      [&](std::uint32_t i, const value& key) { return compare_json(&candidates[i], &key) < 0; });
  return it != o.in_scalars.end() && compare_json(&candidates[*it], &x) == 0;
}

// Any element of the operand match_eq's `v` (as a loop of match_eq over it would say).
bool match_in(const value* v, const op& o, bool contains) {
  if (v == nullptr) {
    // Missing equals a null candidate only: null sorts first.
    const auto& candidates = o.operand.get_array();
    return !o.in_scalars.empty() && candidates[o.in_scalars.front()].is_null();
  }
  if (in_operand(*v, o)) {
    return true;
  }
  if (const auto* arr = v->if_array(); arr != nullptr && contains) {
    for (const auto& e : *arr) {
      if (in_operand(e, o)) {
        return true;
      }
    }
  }
  return false;
}

bool match_type(const value* v, std::uint32_t bits, bool contains) {
  if (v == nullptr) {
    return false;
  }
  if ((type_of(*v) & bits) != 0) {
    return true;
  }
  if (const auto* arr = v->if_array(); arr != nullptr && contains) {
    for (const auto& e : *arr) {
      if ((type_of(e) & bits) != 0) {
        return true;
      }
    }
  }
  return false;
}

// One unanchored search. RE2 runs in time linear in the string for any pattern, so a hostile
// one costs a record no more than a plain one of its size.
bool regex_found(const boost::json::string& s, const re2::RE2& re) {
  return re2::RE2::PartialMatch(re2::StringPiece{s.data(), s.size()}, re);
}

// A "^literal" pattern (op::regex_prefix) is exactly a prefix test, which costs a comparison
// where a search costs its setup (a pass evaluates it on every record).
bool regex_found(const boost::json::string& s, const op& o) {
  if (o.regex_prefix) {
    return std::string_view{s}.starts_with(*o.regex_prefix);
  }
  return regex_found(s, *o.regex);
}

bool match_regex(const value* v, const op& o, bool contains) {
  if (v == nullptr) {
    return false;
  }
  if (const auto* s = v->if_string()) {
    return regex_found(*s, o);
  }
  if (const auto* arr = v->if_array(); arr != nullptr && contains) {
    for (const auto& e : *arr) {
      if (const auto* s = e.if_string(); s != nullptr && regex_found(*s, o)) {
        return true;
      }
    }
  }
  return false;
}

bool match_ops(const value* v, const std::vector<op>& ops, bool contains);
bool match_node(const filter_node& n, const object& doc);

// $elemMatch: some element of an array field satisfies the operators as a whole value (operator
// form) or is an object that satisfies the filter (filter form). Anything but an array fails.
bool match_elem(const value* v, const op& o) {
  const auto* arr = v != nullptr ? v->if_array() : nullptr;
  if (arr == nullptr) {
    return false;
  }
  for (const auto& e : *arr) {
    if (o.element_filter != nullptr) {
      if (const auto* obj = e.if_object(); obj != nullptr && match_node(*o.element_filter, *obj)) {
        return true;
      }
    } else if (match_ops(&e, o.inner, false)) {
      return true;
    }
  }
  return false;
}

bool match_op(const value* v, const op& o, bool contains) {
  switch (o.kind) {
    case op_kind::eq:
      return match_eq(v, o.operand, contains);
    case op_kind::ne:
      return !match_eq(v, o.operand, contains);
    case op_kind::gt:
    case op_kind::gte:
    case op_kind::lt:
    case op_kind::lte:
      return match_compare(v, o, contains);
    case op_kind::in:
      return match_in(v, o, contains);
    case op_kind::nin:
      return !match_in(v, o, contains);
    case op_kind::exists:
      return (v != nullptr) == (o.number != 0);
    case op_kind::all: {
      const auto& wanted = o.operand.get_array();
      if (wanted.empty()) {
        return false;
      }
      for (const auto& w : wanted) {
        if (!match_eq(v, w, contains)) {
          return false;
        }
      }
      return true;
    }
    case op_kind::size:
      return v != nullptr && v->is_array() && v->get_array().size() == o.number;
    case op_kind::type:
      return match_type(v, static_cast<std::uint32_t>(o.number), contains);
    case op_kind::regex:
      return match_regex(v, o, contains);
    case op_kind::not_:
      return !match_ops(v, o.inner, contains);
    case op_kind::elem_match:
      return match_elem(v, o);
  }
  return false;
}

bool match_ops(const value* v, const std::vector<op>& ops, bool contains) {
  for (const auto& o : ops) {
    if (!match_op(v, o, contains)) {
      return false;
    }
  }
  return true;
}

bool match_node(const filter_node& n, const object& doc) {
  switch (n.k) {
    case filter_node::kind::field:
      return match_ops(n.path.find(doc), n.ops, true);
    case filter_node::kind::all_of:
      for (const auto& c : n.children) {
        if (!match_node(c, doc)) {
          return false;
        }
      }
      return true;
    case filter_node::kind::any_of:
      for (const auto& c : n.children) {
        if (match_node(c, doc)) {
          return true;
        }
      }
      return false;
    case filter_node::kind::none_of:
      for (const auto& c : n.children) {
        if (match_node(c, doc)) {
          return false;
        }
      }
      return true;
  }
  return false;
}

}  // namespace

bool json_equal(const value& a, const value& b) {
  if (a.is_number() && b.is_number()) {
    return compare_numbers(a, b) == 0;
  }
  if (a.kind() != b.kind()) {
    return false;
  }
  switch (a.kind()) {
    case boost::json::kind::null:
      return true;
    case boost::json::kind::bool_:
      return a.get_bool() == b.get_bool();
    case boost::json::kind::string:
      return a.get_string() == b.get_string();
    case boost::json::kind::array: {
      const auto& x = a.get_array();
      const auto& y = b.get_array();
      if (x.size() != y.size()) {
        return false;
      }
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!json_equal(x[i], y[i])) {
          return false;
        }
      }
      return true;
    }
    case boost::json::kind::object: {
      const auto& x = a.get_object();
      const auto& y = b.get_object();
      if (x.size() != y.size()) {
        return false;
      }
      for (const auto& m : x) {
        const auto* other = y.if_contains(m.key());
        if (other == nullptr || !json_equal(m.value(), *other)) {
          return false;
        }
      }
      return true;
    }
    default:
      return false;
  }
}

filter::filter() : filter(std::make_shared<const impl>()) {}

filter::filter(std::shared_ptr<const impl> impl) : impl_(std::move(impl)), root_(&impl_->root) {}

bool filter::matches(const object& doc) const {
  return match_node(*root_, doc);
}

bool filter::matches_all() const {
  return root_->children.empty();
}

namespace {

// The first $or among the children of `n` (an all_of) and of the $ands among them.
const filter_node* top_level_or(const filter_node& n) {
  for (const auto& c : n.children) {
    if (c.k == filter_node::kind::any_of) {
      return &c;
    }
  }
  for (const auto& c : n.children) {
    if (c.k == filter_node::kind::all_of) {
      if (const auto* found = top_level_or(c)) {
        return found;
      }
    }
  }
  return nullptr;
}

}  // namespace

std::vector<filter> filter::disjuncts() const {
  std::vector<filter> out;
  if (root_->k != filter_node::kind::all_of) {
    return out;
  }
  if (const auto* any = top_level_or(*root_)) {
    for (const auto& branch : any->children) {
      out.push_back(filter(impl_, &branch));
    }
  }
  return out;
}

const std::vector<std::string>& filter::fields() const {
  return impl_->fields;
}

const std::vector<std::string>& filter::paths() const {
  return impl_->paths;
}

namespace {

// The smallest string greater than every string starting with `s` (byte-wise), or nullopt
// when there is none (s is empty or all 0xff bytes).
std::optional<std::string> prefix_successor(std::string s) {
  while (!s.empty() && static_cast<unsigned char>(s.back()) == 0xff) {
    s.pop_back();
  }
  if (s.empty()) {
    return std::nullopt;
  }
  s.back() = static_cast<char>(static_cast<unsigned char>(s.back()) + 1);
  return s;
}

// A scalar an index orders within its own type class (json_type_rank 0, 1, 2 or 5): what a
// value_range can bound. Objects and arrays compare as wholes against elements as well, which no
// interval of the index says.
bool bounded_scalar(const value& v) {
  const int rank = json_type_rank(&v);
  return rank == 0 || rank == 1 || rank == 2 || rank == 5;
}

value_bounds range_of(value_range r) {
  value_bounds b;
  b.range = std::move(r);
  return b;
}

value_bounds parts_of(value_bounds::kind k, std::vector<value_bounds> parts) {
  if (parts.size() == 1 && k != value_bounds::kind::none_of) {
    return std::move(parts.front());
  }
  value_bounds b;
  b.k = k;
  b.parts = std::move(parts);
  return b;
}

value_bounds point(const value& v) {
  return range_of({json_type_rank(&v), v, true, v, true});
}

std::optional<path_bounds> ops_bounds(const std::vector<op>& ops);

// The type classes a $type admits, each whole (json_type_rank's classes). A value that is not an
// array matches exactly when its class is admitted, except where a class holds more than the
// types asked for: "int" or "double" alone among numbers, and null, whose run the index shares
// with missing values ($type never matches a missing value). "array" alone bounds nothing: it
// admits no value but arrays, which an index reads apart (and on a field of arrays, the only
// place it is asked, they are every record); so for $size and $elemMatch.
std::optional<path_bounds> type_bounds(std::uint32_t bits) {
  std::vector<value_bounds> classes;
  bool exact = true;
  auto whole = [&](int rank) {
    value_range r;
    r.type_rank = rank;
    classes.push_back(range_of(std::move(r)));
  };
  if ((bits & type_null) != 0) {
    classes.push_back(point(value(nullptr)));
    exact = false;
  }
  if ((bits & (type_int | type_double)) != 0) {
    whole(1);
    exact = exact && (bits & type_int) != 0 && (bits & type_double) != 0;
  }
  if ((bits & type_string) != 0) {
    whole(2);
  }
  if ((bits & type_object) != 0) {
    whole(3);
  }
  if ((bits & type_bool) != 0) {
    whole(5);
  }
  if (classes.empty()) {
    return std::nullopt;
  }
  return path_bounds{parts_of(value_bounds::kind::any_of, std::move(classes)), exact};
}

// The values one operator admits at its path, as in filter::bounds_on.
std::optional<path_bounds> op_bounds(const op& o) {
  using kind = value_bounds::kind;
  switch (o.kind) {
    case op_kind::eq:
    case op_kind::ne:
      if (!bounded_scalar(o.operand)) {
        return std::nullopt;
      }
      // Missing reads as null, and both sit in the index's null run: {f: null} admits both.
      if (o.kind == op_kind::eq) {
        return path_bounds{point(o.operand), true};
      }
      return path_bounds{parts_of(kind::none_of, {point(o.operand)}), true};
    case op_kind::gt:
    case op_kind::gte:
    case op_kind::lt:
    case op_kind::lte: {
      // Compared only within the operand's type class (match_compare); missing as null.
      if (!bounded_scalar(o.operand)) {
        return std::nullopt;
      }
      value_range r;
      r.type_rank = json_type_rank(&o.operand);
      if (o.kind == op_kind::gt || o.kind == op_kind::gte) {
        r.lower = o.operand;
        r.lower_inclusive = o.kind == op_kind::gte;
      } else {
        r.upper = o.operand;
        r.upper_inclusive = o.kind == op_kind::lte;
      }
      return path_bounds{range_of(std::move(r)), true};
    }
    case op_kind::in:
    case op_kind::nin: {
      std::vector<value_bounds> points;
      for (const auto& v : o.operand.get_array()) {
        if (!bounded_scalar(v)) {
          return std::nullopt;
        }
        points.push_back(point(v));
      }
      // An empty $in admits nothing (only records holding an array are read, and none match);
      // an empty $nin admits everything.
      return path_bounds{
          parts_of(o.kind == op_kind::in ? kind::any_of : kind::none_of, std::move(points)), true};
    }
    case op_kind::regex: {
      if (!o.regex_prefix) {
        return std::nullopt;
      }
      value_range r;
      r.type_rank = 2;
      r.lower = value(*o.regex_prefix);
      if (auto next = prefix_successor(*o.regex_prefix)) {
        r.upper = value(std::move(*next));
        r.upper_inclusive = false;
      }
      return path_bounds{range_of(std::move(r)), true};
    }
    case op_kind::exists:
      // $exists: false holds only where the value is missing, which the index reads as null;
      // an explicit null sits in the same run and does not match. $exists: true admits every
      // value, null too: it bounds nothing.
      if (o.number != 0) {
        return std::nullopt;
      }
      return path_bounds{point(value(nullptr)), false};
    case op_kind::type:
      return type_bounds(static_cast<std::uint32_t>(o.number));
    case op_kind::all: {
      // Every value must be contained: on a value that is not an array, every value must equal
      // it (missing equals null). An empty $all matches nothing.
      std::vector<value_bounds> points;
      for (const auto& v : o.operand.get_array()) {
        if (!bounded_scalar(v)) {
          return std::nullopt;
        }
        points.push_back(point(v));
      }
      if (points.empty()) {
        return path_bounds{parts_of(kind::any_of, {}), true};
      }
      return path_bounds{parts_of(kind::all_of, std::move(points)), true};
    }
    case op_kind::not_: {
      // Without an array there, $not holds exactly where its operators do not: their bounds
      // must be exact for the complement to hold every match.
      auto inner = ops_bounds(o.inner);
      if (!inner || !inner->exact) {
        return std::nullopt;
      }
      return path_bounds{parts_of(kind::none_of, {std::move(inner->admitted)}), true};
    }
    default:
      return std::nullopt;
  }
}

// The values a conjunction admits: the parts that bound the path, intersected. Exact when every
// part does, exactly.
template <class Part, class Bounds>
std::optional<path_bounds> all_of_bounds(const std::vector<Part>& parts, Bounds&& bounds) {
  std::vector<value_bounds> found;
  bool exact = true;
  for (const auto& p : parts) {
    if (auto b = bounds(p)) {
      exact = exact && b->exact;
      found.push_back(std::move(b->admitted));
    } else {
      exact = false;
    }
  }
  if (found.empty()) {
    return std::nullopt;
  }
  return path_bounds{parts_of(value_bounds::kind::all_of, std::move(found)), exact};
}

std::optional<path_bounds> ops_bounds(const std::vector<op>& ops) {
  return all_of_bounds(ops, [](const op& o) { return op_bounds(o); });
}

std::optional<path_bounds> node_bounds(const filter_node& n, const json_path& path) {
  using kind = value_bounds::kind;
  switch (n.k) {
    case filter_node::kind::field:
      if (!(n.path == path)) {
        return std::nullopt;
      }
      return ops_bounds(n.ops);
    case filter_node::kind::all_of:
      return all_of_bounds(n.children, [&](const filter_node& c) { return node_bounds(c, path); });
    case filter_node::kind::any_of:
    case filter_node::kind::none_of: {
      // A branch that leaves the path unbounded can match anywhere; $nor holds exactly outside
      // its branches only where each branch's bounds are exact.
      std::vector<value_bounds> found;
      bool exact = true;
      for (const auto& c : n.children) {
        auto b = node_bounds(c, path);
        if (!b || (n.k == filter_node::kind::none_of && !b->exact)) {
          return std::nullopt;
        }
        exact = exact && b->exact;
        found.push_back(std::move(b->admitted));
      }
      return path_bounds{parts_of(n.k == filter_node::kind::any_of ? kind::any_of : kind::none_of,
                                  std::move(found)),
                         exact};
    }
  }
  return std::nullopt;
}

bool node_exact_on(const filter_node& n, const json_path& a, const json_path& b) {
  switch (n.k) {
    case filter_node::kind::field: {
      if (!(n.path == a) && !(n.path == b)) {
        return false;
      }
      auto x = ops_bounds(n.ops);
      return x && x->exact;
    }
    case filter_node::kind::all_of:
      return std::all_of(n.children.begin(), n.children.end(),
                         [&](const filter_node& c) { return node_exact_on(c, a, b); });
    default:
      for (const auto* p : {&a, &b}) {
        if (auto x = node_bounds(n, *p); x && x->exact) {
          return true;
        }
      }
      return false;
  }
}

}  // namespace

bool filter::exact_on(const json_path& a, const json_path& b) const {
  return !root_->children.empty() && node_exact_on(*root_, a, b);
}

namespace {

// The intervals of a bounds tree, counted up to `cap` + 1.
std::size_t count_ranges(const value_bounds& b, std::size_t cap) {
  if (b.k == value_bounds::kind::range) {
    return 1;
  }
  std::size_t n = 0;
  for (const auto& p : b.parts) {
    n += count_ranges(p, cap - std::min(n, cap));
    if (n > cap) {
      break;
    }
  }
  return n;
}

}  // namespace

std::optional<path_bounds> filter::bounds_on(const json_path& path) const {
  if (root_->children.empty()) {
    return std::nullopt;
  }
  auto found = node_bounds(*root_, path);
  if (found && count_ranges(found->admitted, max_bound_ranges) > max_bound_ranges) {
    // An index reads bounds as runs, looked up again on every walk of a window: O(k log N) for
    // k intervals. Beyond the bound the filter is evaluated on each record instead (an $in in
    // O(log k)), as for a filter that bounds nothing.
    return std::nullopt;
  }
  return found;
}

}  // namespace weir::core

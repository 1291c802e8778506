// Evaluation of Mongo-style filters (see filter.hpp for grammar and semantics), and the
// intervals they bound a field to (filter::range_on). The parser is filter_parse.cpp.
#include "core/filter.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <boost/json/serialize.hpp>
#include <boost/regex.hpp>

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

bool match_in(const value* v, const array& candidates, bool contains) {
  for (const auto& c : candidates) {
    if (match_eq(v, c, contains)) {
      return true;
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

// One unanchored search. Boost.Regex throws when a match exceeds its complexity bound
// (catastrophic backtracking, e.g. "(x+x+)+y"); that counts as no match, so one hostile pattern
// cannot fail the evaluation of every change.
bool regex_found(const boost::json::string& s, const boost::regex& re) {
  // The regex_search overload without match_results builds one, and allocates, on every call;
  // a per-thread scratch keeps its capacity. Nothing reads it after the call.
  thread_local boost::cmatch scratch;
  try {
    return boost::regex_search(s.data(), s.data() + s.size(), scratch, re, boost::match_any);
  } catch (const std::runtime_error&) {
    return false;
  }
}

// A "^literal" pattern (op::regex_prefix) is exactly a prefix test, which costs a comparison
// where a search costs its setup (a pass evaluates it on every record).
bool regex_found(const boost::json::string& s, const op& o) {
  if (o.regex_prefix) {
    return std::string_view{s}.starts_with(*o.regex_prefix);
  }
  return regex_found(s, o.regex);
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
      return match_in(v, o.operand.get_array(), contains);
    case op_kind::nin:
      return !match_in(v, o.operand.get_array(), contains);
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

filter::filter() : impl_(std::make_shared<const impl>()) {}

bool filter::matches(const object& doc) const {
  return match_node(impl_->root, doc);
}

bool filter::matches_all() const {
  return impl_->root.children.empty();
}

const std::vector<std::string>& filter::fields() const {
  return impl_->fields;
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

// Narrows `r` by one operator; false when the operator gives no interval (the clause then
// constrains the records in a way the interval does not say).
bool narrow(value_range& r, const op& o) {
  value lower, upper;
  bool lower_set = false, upper_set = false, lower_incl = true, upper_incl = true;
  int rank = 0;
  switch (o.kind) {
    case op_kind::eq:
    case op_kind::gt:
    case op_kind::gte:
    case op_kind::lt:
    case op_kind::lte:
      rank = json_type_rank(&o.operand);
      if (rank != 1 && rank != 2) {
        return false;
      }
      if (o.kind != op_kind::lt && o.kind != op_kind::lte) {
        lower = o.operand;
        lower_set = true;
        lower_incl = o.kind != op_kind::gt;
      }
      if (o.kind != op_kind::gt && o.kind != op_kind::gte) {
        upper = o.operand;
        upper_set = true;
        upper_incl = o.kind != op_kind::lt;
      }
      break;
    case op_kind::regex:
      if (!o.regex_prefix) {
        return false;
      }
      rank = 2;
      lower = value(*o.regex_prefix);
      lower_set = true;
      if (auto next = prefix_successor(*o.regex_prefix)) {
        upper = value(std::move(*next));
        upper_set = true;
        upper_incl = false;
      }
      break;
    default:
      return false;
  }
  if (r.type_rank == 0) {
    r.type_rank = rank;
  } else if (r.type_rank != rank) {
    r.none = true;
  }
  if (lower_set) {
    const int c = r.lower ? compare_json(&lower, &*r.lower) : 1;
    if (c > 0 || (c == 0 && !lower_incl)) {
      r.lower = std::move(lower);
      r.lower_inclusive = lower_incl;
    }
  }
  if (upper_set) {
    const int c = r.upper ? compare_json(&upper, &*r.upper) : -1;
    if (c < 0 || (c == 0 && !upper_incl)) {
      r.upper = std::move(upper);
      r.upper_inclusive = upper_incl;
    }
  }
  return true;
}

}  // namespace

std::optional<value_range> filter::range_on(const json_path& path) const {
  const auto& root = impl_->root;
  value_range r;
  bool found = false;
  bool whole = true;  // every clause and operator went into r
  for (const auto& c : root.children) {
    if (c.k != filter_node::kind::field || !(c.path == path)) {
      whole = false;
      continue;
    }
    for (const auto& o : c.ops) {
      if (narrow(r, o)) {
        found = true;
      } else {
        whole = false;
      }
    }
  }
  if (!found) {
    return std::nullopt;
  }
  r.exact = whole;
  return r;
}

}  // namespace weir::core

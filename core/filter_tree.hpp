// weir::core filter internals — the parsed form of a filter (filter::impl: a tree of field
// tests and their operators), shared by its parser (filter_parse.cpp) and its evaluation and
// ranges (filter.cpp). Private to those files.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <re2/re2.h>
#include <boost/json/value.hpp>

#include "core/filter.hpp"
#include "core/json_path.hpp"

namespace weir::core {

namespace filter_detail {

using boost::json::array;
using boost::json::object;
using boost::json::value;

enum class op_kind : std::uint8_t {
  eq,
  ne,
  gt,
  gte,
  lt,
  lte,
  in,
  nin,
  exists,
  all,
  size,
  type,
  regex,
  not_,
  elem_match
};

// $type bits.
enum type_bit : std::uint32_t {
  type_null = 1U << 0,
  type_int = 1U << 1,
  type_double = 1U << 2,
  type_string = 1U << 3,
  type_object = 1U << 4,
  type_array = 1U << 5,
  type_bool = 1U << 6,
};

struct filter_node;

struct op {
  op_kind kind = op_kind::eq;
  value operand;             // eq..lte: the operand; in/nin/all: an array
  std::uint64_t number = 0;  // $size: the size; $exists: 0/1; $type: the type bits
  // $not: the ops it negates; $elemMatch (operator form): the ops one element must satisfy.
  std::vector<op> inner;
  // $elemMatch (filter form): the filter one object element must satisfy. Null otherwise.
  std::unique_ptr<filter_node> element_filter;
  // $regex: compiled at parse (RE2: linear in the string, whatever the pattern), so matching
  // never re-reads the pattern. Null for other operators.
  std::unique_ptr<const re2::RE2> regex;
  // $regex "^literal" (options none or s): the literal, which every match starts with and every
  // string starting with it matches. Unset for any other pattern.
  std::optional<std::string> regex_prefix;
  // $in / $nin: positions in `operand` of its scalars (null, booleans, numbers, strings), sorted
  // by compare_json, which agrees with equality on scalars (1 == 1.0): a value is looked up in
  // O(log k), so a long list costs a record no more than a short one. Its arrays and objects
  // are compared one by one (and count as terms, see max_terms).
  std::vector<std::uint32_t> in_scalars;
  std::vector<std::uint32_t> in_compounds;
};

// Recursion bound for nested $and/$or/$nor/$not/$elemMatch, well above what real queries use.
constexpr int max_depth = 32;

// Bound on a filter's terms (filter.hpp, max_filter_terms).
constexpr std::size_t max_terms = max_filter_terms;

// $regex bounds (filter.hpp): pattern bytes, patterns per filter, and the memory RE2 may give
// one compiled pattern (its program and its DFA's cache; past the cache it runs the slower NFA,
// still linear).
constexpr std::size_t max_regex_bytes = max_filter_regex_bytes;
constexpr std::size_t max_regexes = max_filter_regexes;
constexpr std::int64_t regex_max_mem = 256 << 10;

struct filter_node {
  enum class kind : std::uint8_t { all_of, any_of, none_of, field };
  kind k = kind::all_of;
  std::vector<filter_node> children;  // all_of / any_of / none_of
  json_path path;                     // field
  std::vector<op> ops;                // field: all must hold
};

}  // namespace filter_detail

struct filter::impl {
  filter_detail::filter_node root;
  std::vector<std::string> fields;
  std::vector<std::string> paths;
};

}  // namespace weir::core

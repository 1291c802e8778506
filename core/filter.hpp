// weir::core::filter — the Mongo-style query filter of named queries and windowed subscribes
// (windowed-subscribe.md §2). Parsed once into a tree with pre-split paths and compiled regexes;
// matches() runs on every change for every subscription, so it neither allocates (a $regex search
// reuses per-thread state) nor re-reads the spec.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/json_path.hpp"
#include "core/result.hpp"

namespace weir::core {

/// What a filter's top-level clauses on one path ask of a scalar there (filter::range_on): a
/// value interval within one type class. Every matching record whose value at the path is a
/// number or a string lies in it; records with an array there can match without (an element
/// does), and nothing else there can match. `lower`/`upper` unset: the class's own end.
struct value_range {
  int type_rank = 0;  ///< json_type_rank of the admitted values: 1 numbers, 2 strings
  std::optional<boost::json::value> lower;
  bool lower_inclusive = true;
  std::optional<boost::json::value> upper;
  bool upper_inclusive = true;
  bool none = false;   ///< no scalar satisfies the clauses (they name two type classes)
  bool exact = false;  ///< the filter is these clauses alone: every scalar in range matches (with
                       ///< `none`, only records holding an array there can match)
};

/// A parsed filter. Grammar:
///   filter   := {} | null | { clause, … }            (clauses are ANDed)
///   clause   := "$and" | "$or" | "$nor" : [filter, …]   (non-empty array)
///             | "<dotted.path>" : value                 (implicit $eq; an object without $ keys
///                                                        is matched as a whole)
///             | "<dotted.path>" : { "$op": operand, … } (all ops must hold)
///   ops      := $eq $ne $gt $gte $lt $lte (any value) | $in $nin $all (array)
///             | $exists (bool) | $size (non-negative integer)
///             | $type (alias or number code, or an array of them: "double" 1, "string" 2,
///               "object" 3, "array" 4, "bool" 8, "null" 10, "int" 16, "long" 18, "number";
///               int and long both mean any JSON integer)
///             | $regex (pattern string), optionally with $options (a string of the letters
///               i m s x; only valid next to $regex)
///             | $not ({ "$op": operand, … })
///             | $elemMatch ({ "$op": operand, … } | filter)     (non-empty object)
/// Semantics (Mongo's, on JSON):
///   - paths resolve as json_path does (array indexes by number, no fan-out into arrays of
///   objects);
///   - a scalar against an array field matches when any element matches ("contains"); $eq with an
///     array operand also matches the whole array; $all needs every operand element contained;
///   - equality is deep, numbers compare numerically across int/uint/double (1 == 1.0), object
///     member order does not matter;
///   - $gt/$gte/$lt/$lte only match values of the operand's type class (numbers with numbers,
///     strings byte-wise with strings, …; see compare_json); mismatched types never match;
///   - null means "null or missing": {a: null} and {a: {$gte: null}} match a missing field;
///   - $ne and $nin are the negations of $eq and $in, so they match missing fields;
///   - $not negates its whole operator object (so it matches missing fields too);
///   - $regex is a Perl pattern (Boost.Regex), compiled at parse time and searched for anywhere in
///     a string field (anchor it with ^ or $), or in any string element of an array field; other
///     values never match. Options: i ignores case (ASCII letters only); m lets ^ and $ match at
///     line breaks too, otherwise they match only at the very start and end of the string (stricter
///     than PCRE, whose $ also matches before a final newline); s lets . match line breaks,
///     otherwise it does not; x ignores whitespace and #-comments in the pattern. Line breaks are
///     \n, \r and \f. Inline (?imsx) modifiers work too. Matching is byte-wise, not by UTF-8
///     character. A search that exceeds Boost's complexity bound (catastrophic backtracking)
///     counts as no match, so such a document satisfies {$not: {$regex: …}};
///   - $elemMatch matches an array field with at least one element that satisfies its spec. A spec
///     whose keys are all operators other than $and/$or/$nor tests each element as a whole value,
///     without "contains" ({$elemMatch: {$gte: 80, $lt: 85}} needs one element in range, and [[3]]
///     has no element {$eq: 3}); any other spec is a filter (paths relative to the element)
///     applied to the elements that are objects. A missing or non-array field never matches.
/// Any other operator is unknown.
class filter {
 public:
  /// The filter that matches everything.
  filter();

  /// Parses a filter spec. null and {} match everything. An unknown operator gives
  /// `filter.unknown_operator` with details {"operator", "path"} ("" at the top level); any other
  /// grammar error gives `filter.invalid` with a message naming the problem and details {"path"}
  /// (and {"operator"} where one is involved). Inside an $elemMatch filter, paths are reported as
  /// "<array path>.<inner path>" ("items.qty"); inside its operator form, as the array's path.
  static result<filter> parse(const boost::json::value& spec);

  /// Whether `doc` satisfies the filter.
  bool matches(const boost::json::object& doc) const;

  /// True when the filter has no clauses (null or {}), so callers can skip evaluation.
  bool matches_all() const;

  /// The distinct top-level field names the filter reads, in first-mention order. A change that
  /// touches none of them cannot change whether a record matches. An $elemMatch contributes its
  /// array's field; the fields inside its element filter are not top-level fields.
  const std::vector<std::string>& fields() const;

  /// The interval that the filter's top-level clauses on `path` put on a scalar value there
  /// ($eq with a number or string, $gt/$gte/$lt/$lte with one, $regex "^literal" without
  /// options other than s), intersected; nullopt when no clause on `path` gives one. Sort
  /// indexes use it to read only the ranks where matches can be (core/match_spans).
  std::optional<value_range> range_on(const json_path& path) const;

 private:
  struct impl;

  explicit filter(std::shared_ptr<const impl> impl) : impl_(std::move(impl)) {}

  // Immutable after parse, so copies share it.
  std::shared_ptr<const impl> impl_;
};

/// Deep equality as the filter uses it: numbers numerically (1 == 1.0), objects regardless of
/// member order, arrays element-wise.
bool json_equal(const boost::json::value& a, const boost::json::value& b);

}  // namespace weir::core

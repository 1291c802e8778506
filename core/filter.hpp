// weir::core::filter — the Mongo-style query filter of named queries and windowed subscribes
// (windowed-subscribe.md §2). Parsed once into a tree with pre-split paths and compiled regexes;
// matches() runs on every change for every subscription, so it neither allocates (a $regex search
// reuses per-thread state) nor re-reads the spec.
#pragma once

#include <cstddef>
#include <cstdint>
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

namespace filter_detail {
struct filter_node;
}

/// An interval of values within one type class (json_type_rank: 0 null, which a missing value
/// reads as; 1 numbers; 2 strings; 3 objects, only ever whole; 5 booleans), each end inclusive or
/// not. An end left unset is the class's own.
struct value_range {
  int type_rank = 0;
  std::optional<boost::json::value> lower;
  bool lower_inclusive = true;
  std::optional<boost::json::value> upper;
  bool upper_inclusive = true;
};

/// Which values at one path a filter admits, as an index on that path can tell them apart
/// (filter::bounds_on): a value that is not an array (or a missing one) is admitted by a `range`
/// when it lies in it, by `all_of` / `any_of` when every / some part admits it, by `none_of`
/// when no part does. Records holding an array at the path are outside all of this: an element
/// can match whatever the bounds say, so they are read.
struct value_bounds {
  enum class kind : std::uint8_t { range, all_of, any_of, none_of };
  kind k = kind::range;
  value_range range;                ///< kind::range
  std::vector<value_bounds> parts;  ///< the other kinds
};

/// What filter::bounds_on found: every record that matches and holds no array at the path has an
/// admitted value there; when `exact`, every such record with an admitted value matches (the
/// filter says nothing else about it).
struct path_bounds {
  value_bounds admitted;
  bool exact = false;
};

/// Bound on a filter's terms: field tests and operators, each branch of an $and, $or or $nor,
/// each $all value, each array or object in an $in or $nin. Evaluating a record costs about the
/// number of terms (a few tens of nanoseconds each) times the length of the arrays they read,
/// and a pass evaluates every record: an $or of 9,000 branches cost 0.24 ms a record, four
/// minutes for a pass over a million (a 64 KiB hub frame holds about 6,000). 256 is far above
/// what hand-written queries use (Firestore allows 30 disjunctions). The scalars of an $in,
/// looked up in O(log k), do not count. Over it: `filter.invalid`.
inline constexpr std::size_t max_filter_terms = 256;

/// Bounds on a filter's `$regex` operators: each pattern at most this many bytes, at most
/// max_filter_regexes of them in one filter. Patterns run on RE2 (linear time in the string,
/// whatever the pattern: no backtracking to blow up), each with up to 256 KiB for its compiled
/// programs and its matcher's caches (RE2 gives two thirds to the forward matcher, one third to
/// the reversed one); a pattern whose program does not fit is refused, and past a full cache
/// RE2 runs its slower matcher, still linear. A repetition count is at most 1,000, nested
/// repetitions' product too (RE2's bound).
inline constexpr std::size_t max_filter_regex_bytes = 1024;
inline constexpr std::size_t max_filter_regexes = 8;

/// The most intervals filter::bounds_on gives (an $in of that many values, say), and the most a
/// span_plan looks up on two keys (the first key's values times the second key's intervals);
/// more are not read from an index, whose runs are found again on each walk of a window at
/// O(log N) apiece.
inline constexpr std::size_t max_bound_ranges = 1024;

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
///   - $regex is an RE2 pattern (Perl's syntax without backreferences, lookaround, possessive or
///     atomic groups: those are refused), compiled at parse time and searched for anywhere in a
///     string field (anchor it with ^ or $), or in any string element of an array field; other
///     values never match. Matching takes time linear in the string whatever the pattern, and is
///     by UTF-8 character (. is one character). Options: i ignores case (Unicode simple case
///     folding); m lets ^ and $ match at line breaks too, otherwise they match only at the very
///     start and end of the string (stricter than PCRE, whose $ also matches before a final
///     newline); s lets . match a line break, otherwise it does not; x ignores whitespace and
///     #-comments outside character classes (an escaped space or # stays; what was dropped
///     still ends a token, as in PCRE before 10.43, though "(? i)" and the like, which PCRE
///     refuses, are taken). A line break is \n.
///     Inline (?i), (?m), (?s) work too, (?x) does not. At most max_filter_regexes patterns of
///     max_filter_regex_bytes each;
///   - $elemMatch matches an array field with at least one element that satisfies its spec. A spec
///     whose keys are all operators other than $and/$or/$nor tests each element as a whole value,
///     without "contains" ({$elemMatch: {$gte: 80, $lt: 85}} needs one element in range, and [[3]]
///     has no element {$eq: 3}); any other spec is a filter (paths relative to the element)
///     applied to the elements that are objects. A missing or non-array field never matches.
/// Any other operator is unknown. A filter has at most max_filter_terms terms.
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

  /// The distinct paths the filter's field tests name ("owner", "meta.tag"), outside $elemMatch
  /// element filters, in first-mention order: those bounds_on may bound, so those a sort index
  /// may lead with to answer it. A disjunct's are its filter's.
  const std::vector<std::string>& paths() const;

  /// The values at `path` that records matching the filter can hold (arrays apart), from the
  /// clauses on `path` at any depth of $and/$or/$nor: $eq, $gt, $gte, $lt, $lte and $ne with a
  /// null, number, string or boolean; $in, $nin and $all with such values only; $regex
  /// "^literal" without options other than s; $type (whole type classes; "array" alone bounds
  /// nothing); $exists: false (the null run, not exactly); $not of these.
  /// nullopt when no such clause bounds `path`
  /// (or an $or branch leaves it unbounded, or the bounds hold more than max_bound_ranges
  /// intervals: a long $in). Sort indexes use it to read only the ranks where matches can be,
  /// and to count exact bounds from ranks alone (core/match_spans).
  std::optional<path_bounds> bounds_on(const json_path& path) const;

  /// Whether the filter is nothing but clauses, ANDed, that bounds_on gives exactly on `a` or on
  /// `b` (each $or / $nor all on one of them): a record holding no array at either path then
  /// matches exactly when both its values are admitted.
  bool exact_on(const json_path& a, const json_path& b) const;

  /// The branches of the filter's top-level $or (directly or within top-level $ands; the first
  /// such $or when there are several), each as a filter: every record that matches this filter
  /// matches one of them, so the records each branch's bounds admit (bounds_on, an index's runs)
  /// hold every match between them. Empty when there is no such $or. A branch shares this
  /// filter's parsed tree; its fields() and paths() are this filter's, supersets of its own.
  std::vector<filter> disjuncts() const;

 private:
  struct impl;

  explicit filter(std::shared_ptr<const impl> impl);
  filter(std::shared_ptr<const impl> impl, const filter_detail::filter_node* root)
      : impl_(std::move(impl)), root_(root) {}

  // Immutable after parse, so copies share it.
  std::shared_ptr<const impl> impl_;
  // What is evaluated: impl_'s root, or a node within it (a disjunct).
  const filter_detail::filter_node* root_ = nullptr;
};

/// Deep equality as the filter uses it: numbers numerically (1 == 1.0), objects regardless of
/// member order, arrays element-wise.
bool json_equal(const boost::json::value& a, const boost::json::value& b);

}  // namespace weir::core

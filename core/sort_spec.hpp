// weir::core::sort_spec — the order of a query's results, and the total order over JSON values
// it is built on. Windows are kept in this order and compared on every change, so compare()
// resolves pre-split paths and never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/json_path.hpp"
#include "core/result.hpp"

namespace weir::core {

/// One sort key: a dotted path, ascending unless `descending`.
struct sort_key {
  std::string path;
  bool descending = false;

  friend bool operator==(const sort_key&, const sort_key&) = default;
};

/// A record's place in a sort, read out of its document once so that comparing two places needs
/// no document: the value of each sort key (null where missing: missing and null sort alike),
/// the record's id (the final tie-break), and `prefix`, a 64-bit summary of the first key's
/// value whose unsigned order never contradicts the full order (prefix(a) < prefix(b) implies
/// a < b; equal prefixes decide nothing). Indexes compare prefixes first and read documents
/// only on a tie.
struct sort_position {
  std::uint64_t prefix = 0;
  std::vector<boost::json::value> values;
  std::string id;
};

/// The most keys a sort may have (MongoDB's bound). Two records that tie on a key are compared
/// on the next, each read from the record's text, so a sort's keys multiply what every
/// comparison of an index build and of a window costs.
inline constexpr std::size_t max_sort_keys = 32;

/// A list of sort keys applied left to right, with the record's "id" as the final ascending
/// tie-break so the order is total over distinct records.
class sort_spec {
 public:
  sort_spec() = default;

  /// Each key is a dotted path, "-" prefixed for descending ("-a.b"). "" or "-" or a malformed
  /// path ("a..b"), or more than max_sort_keys keys, gives `request.invalid_field` with details
  /// {"field": "sort"}.
  static result<sort_spec> parse(const std::vector<std::string>& keys);

  /// Same, from the JSON request field: an array of strings. Anything else (including null) gives
  /// `request.invalid_field` with details {"field": "sort"}.
  static result<sort_spec> parse(const boost::json::value& v);

  /// Makes `key` the leading key (a hub client's sortBy/sortDirection override); an existing key
  /// on the same path is removed. A malformed path sorts every record as missing.
  void prepend(sort_key key);

  /// <0, 0 or >0 as `a` sorts before, with, or after `b`. 0 only when every key and the "id"
  /// compare equal.
  int compare(const boost::json::object& a, const boost::json::object& b) const;

  /// The place of `doc` (a record with a string "id") in this order.
  sort_position position_of(const boost::json::object& doc) const;

  /// Only the prefix of position_of(doc) (cheaper: reads the first key alone).
  std::uint64_t prefix_of(const boost::json::object& doc) const;

  /// The same prefix read straight from a record's JSON text (core/json_scan), or nullopt when
  /// the text needs a full parse for it (an escaped string, an array index in the path…).
  std::optional<std::uint64_t> prefix_of_text(std::string_view json) const;

  /// The summary of one key's value (`k` == keys().size(): the id, the final tie-break), and
  /// whether it is exact: two records whose exact summaries of key k are equal have equal
  /// values there, so their order is decided by the keys after k. Index builds use it to order
  /// runs of equal prefixes without reading whole positions.
  struct key_prefix {
    std::uint64_t prefix = 0;
    bool exact = false;
  };
  key_prefix key_prefix_of(const boost::json::object& doc, std::size_t k) const;
  std::optional<key_prefix> key_prefix_of_text(std::string_view json, std::size_t k) const;
  /// Key k's value (`k` == keys().size(): the id) read straight from a record's JSON text when
  /// it is a string without escapes: its bytes, which order as the string does (compare_json
  /// compares strings byte-wise). nullopt for any other value, a missing one, or text that
  /// needs a full parse. Index builds order runs of long strings that tie on their prefix by
  /// these, in place.
  std::optional<std::string_view> plain_string_of_text(std::string_view json, std::size_t k) const;

  /// The prefix a record whose first key has value `v` gets (prefix_of), for searches of an
  /// index by the first key's value alone (order_index::key_bound).
  std::uint64_t prefix_of_first_key(const boost::json::value& v) const;

  /// The first key's value in `doc` (its "id" when the sort has no keys), or nullptr.
  const boost::json::value* first_key(const boost::json::object& doc) const {
    return paths_.empty() ? doc.if_contains("id") : paths_[0].find(doc);
  }

  /// compare_json of two first-key values, in the sort's direction on that key.
  int compare_first_key(const boost::json::value* a, const boost::json::value* b) const {
    return compare_key(0, a, b);
  }

  /// Key k's value in `doc` (its "id" when the sort has no keys and k is 0), or nullptr.
  const boost::json::value* key_value(const boost::json::object& doc, std::size_t k) const {
    return paths_.empty() ? doc.if_contains("id") : paths_[k].find(doc);
  }

  /// compare_json of two values of key k, in the sort's direction on that key.
  int compare_key(std::size_t k, const boost::json::value* a, const boost::json::value* b) const;

  /// The path of the first key: its "id" when the sort has no keys.
  json_path first_key_path() const;

  /// compare() on positions taken from documents.
  int compare(const sort_position& a, const sort_position& b) const;

  /// compare() of a position with a document.
  int compare(const sort_position& a, const boost::json::object& b) const;
  /// compare() of a position with a record given by its JSON text and id, read in place: for
  /// keys whose values are strings without escapes, null or missing, booleans, or of different
  /// types. nullopt when a key needs the document (numbers, objects, arrays, escapes, an index
  /// in a path). Indexes use it where prefixes tie, instead of reading the record's document.
  std::optional<int> compare_text(const sort_position& a, std::string_view json,
                                  std::string_view id) const;

  /// Strict-weak-order adaptor for std algorithms.
  bool less(const boost::json::object& a, const boost::json::object& b) const {
    return compare(a, b) < 0;
  }

  const std::vector<sort_key>& keys() const { return keys_; }

  /// The parsed path of each key, parallel to keys().
  const std::vector<json_path>& paths() const { return paths_; }

  bool empty() const { return keys_.empty(); }

 private:
  /// The raw text of key k's value in a record's JSON text: empty when it is missing (or the
  /// path is malformed), nullopt when the text needs a full parse for it.
  std::optional<std::string_view> key_text(std::string_view json, std::size_t k) const;

  std::vector<sort_key> keys_;
  std::vector<json_path> paths_;
};

/// Rank of a value's type class in the total order: missing (nullptr) and null 0, numbers 1,
/// strings 2, objects 3, arrays 4, booleans 5.
int json_type_rank(const boost::json::value* v);

/// Total order over JSON values, Mongo-like across types: missing == null < numbers < strings <
/// objects < arrays < booleans. Numbers compare numerically and exactly across int64, uint64 and
/// double (1 == 1.0; NaN sorts below every other number and equals NaN). Strings compare
/// byte-wise. Objects compare member by member in their stored order (key byte-wise, then value),
/// then by size; arrays element by element, then by size; false < true. Returns -1, 0 or 1.
int compare_json(const boost::json::value* a, const boost::json::value* b);

/// Numeric comparison of two values that are both numbers (int64, uint64 or double); -1, 0, 1.
int compare_numbers(const boost::json::value& a, const boost::json::value& b);

}  // namespace weir::core

// weir::core::sort_spec — the order of a query's results, and the total order over JSON values
// it is built on. Windows are kept in this order and compared on every change, so compare()
// resolves pre-split paths and never allocates.
#pragma once

#include <string>
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

/// A list of sort keys applied left to right, with the record's "id" as the final ascending
/// tie-break so the order is total over distinct records.
class sort_spec {
 public:
  sort_spec() = default;

  /// Each key is a dotted path, "-" prefixed for descending ("-a.b"). "" or "-" or a malformed
  /// path ("a..b") gives `request.invalid_field` with details {"field": "sort"}.
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

  /// Strict-weak-order adaptor for std algorithms.
  bool less(const boost::json::object& a, const boost::json::object& b) const {
    return compare(a, b) < 0;
  }

  const std::vector<sort_key>& keys() const { return keys_; }

  /// The parsed path of each key, parallel to keys().
  const std::vector<json_path>& paths() const { return paths_; }

  bool empty() const { return keys_.empty(); }

 private:
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

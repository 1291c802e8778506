// weir::core::json_path — a dotted field path ("a.b.c") parsed once and resolved against records.
// Filters, sorts, projections and update operators all address fields this way, so resolution is
// on the hot path: segments are split (and array indexes decoded) at parse time, and find()
// neither allocates nor re-scans the text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/result.hpp"

namespace weir::core {

/// A parsed dotted path. Resolution rules (the same everywhere a path is read):
///   - an object is entered by key (the segment verbatim; keys containing '.' are unreachable);
///   - an array is entered only by a canonical decimal index segment ("0", "12"; not "01", "-1",
///     "+1"), as in Mongo's "a.0"; there is no implicit fan-out over array elements;
///   - anything else (a scalar, a missing key, an index out of range) resolves to nothing.
/// A default-constructed path has no segments and resolves to nothing.
class json_path {
 public:
  /// Sentinel in indexes(): the segment is not a canonical array index.
  static constexpr std::size_t not_an_index = static_cast<std::size_t>(-1);

  json_path() = default;

  /// Splits `dotted` on '.'. An empty path or an empty segment ("a..b", ".a", "a.") gives
  /// error `request.invalid_field` with details {"field": dotted}.
  static result<json_path> parse(std::string_view dotted);

  /// The value at this path inside `doc`, or nullptr when missing or when the path crosses a
  /// non-container.
  const boost::json::value* find(const boost::json::object& doc) const;

  /// Same, starting from any value (the first segment must then enter `root`).
  const boost::json::value* find(const boost::json::value& root) const;

  const std::vector<std::string>& segments() const { return segments_; }

  /// For each segment, its value as an array index, or not_an_index.
  const std::vector<std::size_t>& indexes() const { return indexes_; }

  /// The dotted text as given to parse().
  const std::string& text() const { return text_; }

  bool empty() const { return segments_.empty(); }

  /// True when this path equals `other` or is an ancestor of it ("a" is a prefix of "a.b",
  /// "a" is not a prefix of "ab").
  bool is_prefix_of(const json_path& other) const;

  friend bool operator==(const json_path& a, const json_path& b) { return a.text_ == b.text_; }

 private:
  std::string text_;
  std::vector<std::string> segments_;
  std::vector<std::size_t> indexes_;
};

/// Decodes a canonical non-negative decimal array index, or json_path::not_an_index.
std::size_t parse_array_index(std::string_view segment);

/// Resolves a dotted path without parsing it into a json_path first (no allocation). Same rules
/// as json_path::find; a malformed path (empty segment) resolves to nothing.
const boost::json::value* find_path(const boost::json::object& doc, std::string_view dotted);

}  // namespace weir::core

// weir::core URL helpers — percent-decoding of path segments and query-string parsing, pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weir::core {

/// Decodes %XX escapes (and, when `plus_is_space`, '+' as a space). nullopt on a bad escape.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space = false);

/// Splits a request target into its path and (possibly empty) query string.
std::pair<std::string_view, std::string_view> split_target(std::string_view target);

/// Splits a path into its segments ("/a/b/" → {"a","b",""}); the leading '/' is dropped.
std::vector<std::string_view> split_path(std::string_view path);

/// Parses `a=1&b=x%20y` into decoded pairs, in order. nullopt on a bad escape.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view q);

}  // namespace weir::core

// weir::core http text — the small pieces of HTTP field-value syntax that core parses itself
// (Authorization, Cookie, X-Forwarded-For): optional whitespace (RFC 9110 §5.6.3).
#pragma once

#include <string_view>

namespace weir::core {

/// `s` without leading and trailing spaces and tabs.
inline std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace weir::core

// Scanning JSON text for single values (see json_scan.hpp).
#include "core/json_scan.hpp"

#include <cstring>
#include <string>

namespace weir::core {
namespace json_scan_detail {

const char* skip_ws(const char* p, const char* end) {
  while (p != end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
    ++p;
  }
  return p;
}

const char* skip_string(const char* p, const char* end, bool& escaped) {
  ++p;  // the opening quote
  // Most strings in records are short (ids, names, versions), where calling memchr cost more
  // than the bytes (24 % of read_only's samples in one perf profile of a 1M-record loop): a byte
  // loop first, memchr past 32 bytes.
  const char* stop = end - p > 32 ? p + 32 : end;
  for (; p < stop; ++p) {
    if (*p == '"') {
      return p + 1;
    }
    if (*p == '\\') {
      escaped = true;
      if (++p == end) {  // past the escaped character (which may lie at `stop`)
        return nullptr;
      }
    }
  }
  while (p != end) {
    const char* q =
        static_cast<const char*>(std::memchr(p, '"', static_cast<std::size_t>(end - p)));
    if (!q) {
      return nullptr;
    }
    // The quote closes the string unless an odd number of backslashes precede it.
    std::size_t slashes = 0;
    for (const char* b = q; b != p && b[-1] == '\\'; --b) {
      ++slashes;
    }
    if (!escaped &&
        (slashes != 0 || std::memchr(p, '\\', static_cast<std::size_t>(q - p)) != nullptr)) {
      escaped = true;
    }
    if (slashes % 2 == 0) {
      return q + 1;
    }
    p = q + 1;
  }
  return nullptr;
}

const char* skip_string(const char* p, const char* end) {
  bool escaped = true;  // not asked: spares the search for a backslash in long strings
  return skip_string(p, end, escaped);
}

const char* skip_value(const char* p, const char* end) {
  if (p == end) {
    return nullptr;
  }
  switch (*p) {
    case '"':
      return skip_string(p, end);
    case '{':
    case '[': {
      int depth = 0;
      while (p != end) {
        char c = *p;
        if (c == '"') {
          p = skip_string(p, end);
          if (!p) {
            return nullptr;
          }
          continue;
        }
        if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (--depth == 0) {
            return p + 1;
          }
        }
        ++p;
      }
      return nullptr;
    }
    default: {
      // A number or a literal: up to the next delimiter.
      const char* start = p;
      while (p != end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' &&
             *p != '\r' && *p != '\t') {
        ++p;
      }
      return p == start ? nullptr : p;
    }
  }
}

}  // namespace json_scan_detail

std::optional<std::string_view> scan_path(std::string_view json,
                                          const std::vector<std::string>& path) {
  using namespace json_scan_detail;
  const char* p = json.data();
  const char* end = json.data() + json.size();
  std::string_view value;
  for (std::size_t level = 0; level < path.size(); ++level) {
    p = skip_ws(p, end);
    if (p == end) {
      return std::nullopt;
    }
    if (*p != '{') {
      // Below the top: a scalar on the way means the path is missing; an array may be entered
      // by an index segment, which the full parse handles.
      if (level > 0 && *p != '[') {
        return std::string_view{};
      }
      return std::nullopt;
    }
    p = skip_ws(p + 1, end);
    const char* found = nullptr;
    const char* found_end = nullptr;
    if (p != end && *p == '}') {
      return std::nullopt;
    }
    // The whole object is walked: a key that appears twice is left to the full parse.
    for (;;) {
      if (p == end || *p != '"') {
        return std::nullopt;
      }
      const char* k = skip_string(p, end);
      if (!k) {
        return std::nullopt;
      }
      std::string_view key{p + 1, static_cast<std::size_t>(k - p - 2)};
      if (key.find('\\') != std::string_view::npos) {
        return std::nullopt;
      }
      p = skip_ws(k, end);
      if (p == end || *p != ':') {
        return std::nullopt;
      }
      p = skip_ws(p + 1, end);
      const char* v = skip_value(p, end);
      if (!v) {
        return std::nullopt;
      }
      if (key == path[level]) {
        if (found) {
          return std::nullopt;
        }
        found = p;
        found_end = v;
      }
      p = skip_ws(v, end);
      if (p == end) {
        return std::nullopt;
      }
      if (*p == '}') {
        break;
      }
      if (*p != ',') {
        return std::nullopt;
      }
      p = skip_ws(p + 1, end);
    }
    if (!found) {
      return std::string_view{};  // missing: an empty view, which no value is
    }
    value = std::string_view{found, static_cast<std::size_t>(found_end - found)};
    p = found;
  }
  return value;
}

}  // namespace weir::core

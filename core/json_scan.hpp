// weir::core::json_scan — reads single fields out of a record's JSON text without building a
// document: the id and the identity of a record being loaded, the first sort key of every
// record an index is built from, and the members a pass's filter and sort read
// (doc_reader::read_only). A million records are read this way at each unit load and
// each new sort, and a DOM parse (168 ns for a 77-byte record, into a reused buffer) was most
// of that time; skipping over the text to one value costs a fraction of it (measured in
// tests/unit/core/json_scan_test.cpp's benchmark case). Anything unusual (a non-object, a
// string with escapes where a value is wanted) makes the callers fall back to a parse (of the
// document, or read_only's of that one value), so this only has to be exact on the common
// shapes, and never wrong. It trusts the text to be well-formed JSON: stored records are.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::core {

/// The raw text of the value at `path` (object keys only, from the top-level object), e.g.
/// `"abc"`, `12`, `{"id":"x"}`; an empty view when a key is missing (or crosses a non-object);
/// nullopt when the text is not well-formed, or a key on the way is escaped or repeated (the
/// caller then parses the document).
std::optional<std::string_view> scan_path(std::string_view json,
                                          const std::vector<std::string>& path);

/// Calls `visit(raw_key)` for each top-level key (as written, escapes kept); false when the
/// text is not a well-formed object.
template <class Visit>
bool scan_keys(std::string_view json, Visit&& visit);

namespace json_scan_detail {
const char* skip_ws(const char* p, const char* end);
/// Past the value starting at `p`, or nullptr when malformed.
const char* skip_value(const char* p, const char* end);
/// Past the string starting at `p` (which is '"'), or nullptr.
const char* skip_string(const char* p, const char* end);
/// The same, and sets `escaped` when the string holds a backslash (leaves it otherwise).
const char* skip_string(const char* p, const char* end, bool& escaped);
}  // namespace json_scan_detail

template <class Visit>
bool scan_keys(std::string_view json, Visit&& visit) {
  using namespace json_scan_detail;
  const char* p = skip_ws(json.data(), json.data() + json.size());
  const char* end = json.data() + json.size();
  if (p == end || *p != '{') {
    return false;
  }
  p = skip_ws(p + 1, end);
  if (p != end && *p == '}') {
    return true;
  }
  for (;;) {
    if (p == end || *p != '"') {
      return false;
    }
    const char* k = skip_string(p, end);
    if (!k) {
      return false;
    }
    visit(std::string_view{p + 1, static_cast<std::size_t>(k - p - 2)});
    p = skip_ws(k, end);
    if (p == end || *p != ':') {
      return false;
    }
    p = skip_value(skip_ws(p + 1, end), end);
    if (!p) {
      return false;
    }
    p = skip_ws(p, end);
    if (p == end) {
      return false;
    }
    if (*p == '}') {
      return true;
    }
    if (*p != ',') {
      return false;
    }
    p = skip_ws(p + 1, end);
  }
}

}  // namespace weir::core

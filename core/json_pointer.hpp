// weir::core::json_pointer — RFC 6901 JSON Pointers: parsing ("" is the whole document, "/"
// the member named ""), ~0/~1 escapes, and the array-index grammar (no leading zeros, no signs).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace weir::core {

class json_pointer {
 public:
  /// Parses `text`. Error: patch.invalid_pointer (not "" and not starting with '/', or a '~' not
  /// followed by '0' or '1').
  static result<json_pointer> parse(std::string_view text);

  /// The decoded reference tokens, in order; empty for the whole document.
  const std::vector<std::string>& tokens() const { return tokens_; }
  bool is_root() const { return tokens_.empty(); }

  /// The pointer's text (tokens escaped).
  std::string to_string() const;

  /// `this` is a proper prefix of `other` (a move into one's own child).
  bool is_proper_prefix_of(const json_pointer& other) const;

  /// Appends one (unescaped) token.
  json_pointer child(std::string_view token) const;

 private:
  std::vector<std::string> tokens_;
};

/// A token escaped for a pointer: '~' → "~0", '/' → "~1".
std::string escape_pointer_token(std::string_view token);

/// The array index a token names: "0" or [1-9][0-9]*; nullopt for anything else ("-", "01",
/// "+1", "1e0", …) and for values that do not fit.
std::optional<std::size_t> pointer_array_index(std::string_view token);

}  // namespace weir::core

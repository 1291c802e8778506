// weir::core::json_pointer — RFC 6901 parsing and encoding.
#include "core/json_pointer.hpp"

#include <charconv>

namespace weir::core {

result<json_pointer> json_pointer::parse(std::string_view text) {
  json_pointer p;
  if (text.empty()) {
    return p;
  }
  if (text.front() != '/') {
    return make_error("patch.invalid_pointer",
                      "JSON Pointer should start with a slash: '" + std::string{text} + "'",
                      {{"pointer", std::string{text}}});
  }
  std::size_t start = 1;
  while (true) {
    auto slash = text.find('/', start);
    auto raw = text.substr(start, slash == std::string_view::npos ? text.npos : slash - start);
    std::string token;
    token.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token.push_back(raw[i]);
        continue;
      }
      // Decoded in one pass: "~01" is '~' then '1', never '/'.
      if (i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token.push_back(raw[i + 1] == '0' ? '~' : '/');
        ++i;
      } else {
        return make_error(
            "patch.invalid_pointer",
            "JSON Pointer has a '~' not followed by 0 or 1: '" + std::string{text} + "'",
            {{"pointer", std::string{text}}});
      }
    }
    p.tokens_.push_back(std::move(token));
    if (slash == std::string_view::npos) {
      break;
    }
    start = slash + 1;
  }
  return p;
}

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string json_pointer::to_string() const {
  std::string out;
  for (const auto& t : tokens_) {
    out.push_back('/');
    out += escape_pointer_token(t);
  }
  return out;
}

bool json_pointer::is_proper_prefix_of(const json_pointer& other) const {
  if (tokens_.size() >= other.tokens_.size()) {
    return false;
  }
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i] != other.tokens_[i]) {
      return false;
    }
  }
  return true;
}

json_pointer json_pointer::child(std::string_view token) const {
  json_pointer p = *this;
  p.tokens_.emplace_back(token);
  return p;
}

std::optional<std::size_t> pointer_array_index(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token.front() == '0')) {
    return std::nullopt;
  }
  for (char c : token) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  std::size_t n = 0;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), n);
  if (ec != std::errc{} || ptr != token.data() + token.size()) {
    return std::nullopt;
  }
  return n;
}

}  // namespace weir::core

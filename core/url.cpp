// URL helpers for routing: decoding only, never re-encoding.
#include "core/url.hpp"

namespace weir::core {
namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) {
        return std::nullopt;
      }
      int h = hex(s[i + 1]);
      int l = hex(s[i + 2]);
      if (h < 0 || l < 0) {
        return std::nullopt;
      }
      out.push_back(static_cast<char>(h * 16 + l));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::pair<std::string_view, std::string_view> split_target(std::string_view target) {
  auto q = target.find('?');
  if (q == std::string_view::npos) {
    return {target, {}};
  }
  return {target.substr(0, q), target.substr(q + 1)};
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') {
    path.remove_prefix(1);
  }
  std::size_t start = 0;
  for (;;) {
    auto pos = path.find('/', start);
    if (pos == std::string_view::npos) {
      out.push_back(path.substr(start));
      break;
    }
    out.push_back(path.substr(start, pos - start));
    start = pos + 1;
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view q) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!q.empty()) {
    auto amp = q.find('&');
    auto part = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
    if (part.empty()) {
      continue;
    }
    auto eq = part.find('=');
    auto k = percent_decode(part.substr(0, eq), true);
    auto v = percent_decode(eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1),
                            true);
    if (!k || !v) {
      return std::nullopt;
    }
    out.emplace_back(std::move(*k), std::move(*v));
  }
  return out;
}

}  // namespace weir::core

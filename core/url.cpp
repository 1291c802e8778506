// URL helpers for routing: decoding only, never re-encoding. Escapes are checked and decoded by
// Boost.URL (header-only here: Debian's Boost 1.81 ships no compiled Boost.URL, so this file
// compiles its sources once, boost/url/src.hpp); the splitting on '/', '?', '&' and '=' is
// Weir's own routing rule (a query string is split leniently: empty parts are skipped, and bytes
// RFC 3986 would have escaped are taken as they come, as before).
#include "core/url.hpp"

#include <boost/url/src.hpp>

namespace weir::core {

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  // Boost.URL checks every escape (two hex digits after each '%') and decodes; '+' is a space
  // only where asked (query strings), never in a path.
  auto pct = boost::urls::make_pct_string_view(boost::urls::string_view{s.data(), s.size()});
  if (!pct) {
    return std::nullopt;
  }
  boost::urls::encoding_opts opts;
  opts.space_as_plus = plus_is_space;
  return pct->decode(opts);
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

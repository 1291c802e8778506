// Windowed route matching (see windowed_routes.hpp).
#include "gateway/windowed_routes.hpp"

#include <vector>

#include "core/url.hpp"

namespace weir::gateway {

std::optional<core::result<windowed_route>> match_windowed_route(std::string_view method,
                                                                 std::string_view path) {
  auto raw = core::split_path(path);
  if (raw.size() < 4 || raw.size() > 6 || raw[0] != "v1" || raw[1] != "spaces") {
    return std::nullopt;
  }
  std::vector<std::string> seg;
  for (auto s : raw) {
    auto d = core::percent_decode(s);
    if (!d) {
      return std::nullopt;  // the write API answers a bad escape
    }
    seg.push_back(std::move(*d));
  }
  windowed_route r;
  r.space = seg[2];
  std::size_t rest = 3;
  if (seg[3] == "objects" || seg[3] == "datasets") {
    r.scope = seg[3] == "objects" ? core::windowed_scope::objects : core::windowed_scope::datasets;
    rest = 4;
  }
  if (seg.size() <= rest || seg[rest] != "query") {
    return std::nullopt;
  }
  if (seg.size() == rest + 2) {
    if (seg[rest + 1] != "subscribe") {
      return std::nullopt;
    }
    r.subscribe = true;
  } else if (seg.size() != rest + 1) {
    return std::nullopt;
  }
  if (method != "POST") {
    if (r.scope == core::windowed_scope::objects && !r.subscribe) {
      return std::nullopt;  // /objects/query is also an object's path in the write API
    }
    return core::result<windowed_route>{
        core::make_error("method.not_allowed", "this path accepts only POST", {{"allow", "POST"}})};
  }
  return core::result<windowed_route>{std::move(r)};
}

}  // namespace weir::gateway

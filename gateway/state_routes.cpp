// State-stream route matching (see state_routes.hpp).
#include "gateway/state_routes.hpp"

#include <vector>

#include "core/url.hpp"

namespace weir::gateway {

std::optional<core::result<state_route>> match_state_route(std::string_view method,
                                                           std::string_view path) {
  auto raw = core::split_path(path);
  if (raw.size() != 6 || raw[0] != "v1" || raw[1] != "spaces" || raw[3] != "objects" ||
      raw[5] != "state") {
    return std::nullopt;
  }
  auto space = core::percent_decode(raw[2]);
  auto object = core::percent_decode(raw[4]);
  if (!space || !object) {
    return std::nullopt;  // the write API answers a bad escape
  }
  if (method != "GET" && method != "HEAD") {
    return core::result<state_route>{core::make_error(
        "method.not_allowed", "this path accepts GET and HEAD", {{"allow", "GET, HEAD"}})};
  }
  return core::result<state_route>{state_route{std::move(*space), std::move(*object)}};
}

bool accepts_event_stream(std::optional<std::string_view> accept) {
  if (!accept || accept->empty()) {
    return true;
  }
  for (auto what : {"text/event-stream", "text/*", "*/*"}) {
    if (accept->find(what) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace weir::gateway

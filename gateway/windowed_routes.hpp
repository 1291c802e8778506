// weir::gateway windowed routes — which `/v1/spaces/...` requests are windowed queries and
// subscribes (windowed-subscribe §1), before the body is read. Pure: the session does the I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "core/windowed_request.hpp"

namespace weir::gateway {

struct windowed_route {
  core::windowed_scope scope = core::windowed_scope::object;
  bool subscribe = false;
  std::string space;
};

/// nullopt: not a windowed path. Otherwise the route, or method.not_allowed (405, details.allow
/// "POST") for another method on a windowed path. `POST /v1/spaces/{s}/objects/query` is the
/// objects query; other methods on that path stay the write API's (an object named "query").
std::optional<core::result<windowed_route>> match_windowed_route(std::string_view method,
                                                                 std::string_view path);

}  // namespace weir::gateway

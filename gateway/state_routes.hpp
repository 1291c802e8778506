// weir::gateway state routes — which requests are AG-UI state streams
// (`GET /v1/spaces/{space}/objects/{objectId}/state`, docs/protocols.md "AG-UI state stream"),
// before anything is opened. Pure: the session does the I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace weir::gateway {

struct state_route {
  std::string space;
  std::string object;
};

/// nullopt: not a state-stream path. Otherwise the route (GET or HEAD), or method.not_allowed
/// (405, details.allow "GET, HEAD") for another method. Path segments are percent-decoded.
std::optional<core::result<state_route>> match_state_route(std::string_view method,
                                                           std::string_view path);

/// Whether an `Accept` header admits an event stream: absent, `text/event-stream`, `text/*` or
/// `*/*` (a client that asks only for something else gets 406).
bool accepts_event_stream(std::optional<std::string_view> accept);

}  // namespace weir::gateway

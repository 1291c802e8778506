// weir::gateway state routes — which requests are AG-UI state streams
// (`GET /v1/spaces/{space}/objects/{objectId}/state`, docs/protocols.md "AG-UI state stream")
// or AG-UI agent runs over the same stream (`POST …/agent` with a RunAgentInput, "AG-UI agent
// endpoint"), before anything is opened. Pure: the session does the I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "core/result.hpp"

namespace weir::gateway {

struct state_route {
  std::string space;
  std::string object;
  bool agent = false;  ///< `POST …/agent`: the stream is an AG-UI run (RUN_STARTED first)
};

/// What an agent run echoes of its RunAgentInput (AG-UI's RUN_STARTED and RUN_FINISHED carry
/// them).
/// The longest threadId, runId or parentRunId an agent run takes (they are echoed in its
/// events).
inline constexpr std::size_t max_run_id_bytes = 256;

struct agent_run {
  std::string thread_id;
  std::string run_id;
  std::optional<std::string> parent_run_id;
};

/// nullopt: not a state-stream or agent path. Otherwise the route (`…/state`: GET or HEAD;
/// `…/agent`: POST), or method.not_allowed (405, details.allow "GET, HEAD" or "POST") for
/// another method. Path segments are percent-decoded.
std::optional<core::result<state_route>> match_state_route(std::string_view method,
                                                           std::string_view path);

/// Reads an AG-UI RunAgentInput (the body `HttpAgent` POSTs): `threadId` and `runId` strings (at
/// most max_run_id_bytes) are required; `parentRunId` and `protocolVersion` must be strings,
/// `messages`, `tools`, `context` and `resume` arrays, when present; `state` and `forwardedProps`
/// may be anything (the state is not compared: the run's first STATE_SNAPSHOT replaces it); other
/// members are ignored. Errors (400): request.not_object, request.missing_field,
/// request.invalid_field (details.field names the member).
core::result<agent_run> parse_run_agent_input(const boost::json::value& body);

/// Whether an `Accept` header admits an event stream: absent, `text/event-stream`, `text/*` or
/// `*/*` (a client that asks only for something else gets 406).
bool accepts_event_stream(std::optional<std::string_view> accept);

}  // namespace weir::gateway

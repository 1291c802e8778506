// State-stream route matching (see state_routes.hpp).
#include "gateway/state_routes.hpp"

#include <vector>

#include "core/url.hpp"

namespace weir::gateway {

std::optional<core::result<state_route>> match_state_route(std::string_view method,
                                                           std::string_view path) {
  auto raw = core::split_path(path);
  if (raw.size() != 6 || raw[0] != "v1" || raw[1] != "spaces" || raw[3] != "objects" ||
      (raw[5] != "state" && raw[5] != "agent")) {
    return std::nullopt;
  }
  auto space = core::percent_decode(raw[2]);
  auto object = core::percent_decode(raw[4]);
  if (!space || !object) {
    return std::nullopt;  // the write API answers a bad escape
  }
  bool agent = raw[5] == "agent";
  if (agent && method != "POST") {
    return core::result<state_route>{core::make_error(
        "method.not_allowed",
        "this path accepts POST: an AG-UI RunAgentInput, as @ag-ui/client's HttpAgent sends it",
        {{"allow", "POST"}})};
  }
  if (!agent && method != "GET" && method != "HEAD") {
    return core::result<state_route>{core::make_error(
        "method.not_allowed", "this path accepts GET and HEAD", {{"allow", "GET, HEAD"}})};
  }
  return core::result<state_route>{state_route{std::move(*space), std::move(*object), agent}};
}

core::result<agent_run> parse_run_agent_input(const boost::json::value& body) {
  const auto* in = body.if_object();
  if (in == nullptr) {
    return core::make_error("request.not_object",
                            "the body must be an AG-UI RunAgentInput: a JSON object with "
                            "threadId and runId");
  }
  auto invalid = [](std::string_view field, std::string_view what) {
    return core::make_error(
        "request.invalid_field",
        "RunAgentInput's \"" + std::string{field} + "\" must be " + std::string{what},
        {{"field", field}});
  };
  agent_run run;
  for (auto [field, out] : {std::pair{"threadId", &run.thread_id}, {"runId", &run.run_id}}) {
    const auto* v = in->if_contains(field);
    if (v == nullptr) {
      return core::make_error("request.missing_field",
                              "RunAgentInput needs \"" + std::string{field} + "\" (a string)",
                              {{"field", field}});
    }
    if (!v->is_string()) {
      return invalid(field, "a string");
    }
    if (v->get_string().size() > max_run_id_bytes) {
      return invalid(field, "at most " + std::to_string(max_run_id_bytes) + " bytes long");
    }
    *out = std::string{v->get_string()};
  }
  for (auto field : {"parentRunId", "protocolVersion"}) {
    if (const auto* v = in->if_contains(field); v && !v->is_string()) {
      return invalid(field, "a string");
    }
  }
  if (const auto* v = in->if_contains("parentRunId");
      v && v->get_string().size() > max_run_id_bytes) {
    return invalid("parentRunId", "at most " + std::to_string(max_run_id_bytes) + " bytes long");
  }
  for (auto field : {"messages", "tools", "context", "resume"}) {
    if (const auto* v = in->if_contains(field); v && !v->is_array()) {
      return invalid(field, "an array");
    }
  }
  if (const auto* v = in->if_contains("parentRunId")) {
    run.parent_run_id = std::string{v->get_string()};
  }
  return run;
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

// The AG-UI routes: an object's state stream (`GET …/state`) and agent runs over the same
// stream (`POST …/agent`), handed to an sse_hub_session. http_session members; the route table
// is http_routes.cpp, the pure matching and RunAgentInput parsing state_routes.cpp.
#include "actors/runtime.hpp"
#include "core/document_check.hpp"
#include "core/record_rules.hpp"
#include "core/space_rules.hpp"
#include "gateway/http_errors.hpp"
#include "gateway/http_session.hpp"
#include "gateway/sse_hub_session.hpp"

namespace weir::gateway {

void http_session::serve_state(http::request<http::string_body>& req, route_match& m) {
  auto route = std::move(*m.state);
  std::optional<agent_run> run;
  if (route.agent) {
    // The input echoes the client's state, which is the document one level down: allowed
    // the document's depth from there. Its `state` is not used (the snapshot replaces it).
    auto body = core::parse_json(req.body(), 1);
    auto input = body ? parse_run_agent_input(body.value())
                      : core::result<agent_run>{std::move(body).error()};
    if (!input) {
      respond(400, error_body(input.error()));
      return;
    }
    run = std::move(input.value());
  }
  // An AG-UI state stream of one object's property document: the space must exist (404
  // space.not_found, as on the windowed API); the object need not (its state is `{}` until it
  // has a document). An agent run is the same stream between RUN_STARTED and RUN_FINISHED.
  if (refuse_if_draining()) {
    return;
  }
  if (!accepts_event_stream(header(req, http::field::accept))) {
    respond(406, error_body(core::make_error(
                     "request.not_acceptable",
                     "the state stream is an event stream: send Accept: text/event-stream",
                     {{"accepted", "text/event-stream"}})));
    return;
  }
  if (auto ok = core::validate_id(route.space, "space"); !ok) {
    respond(404, error_body(space_not_found(route.space)));
    return;
  }
  if (auto ok = core::validate_id(route.object, "objectId"); !ok) {
    respond(400, error_body(ok.error()));
    return;
  }
  state_target target{std::move(route.space), std::move(route.object), std::nullopt,
                      std::move(run)};
  if (const auto* rule = core::space_rule_for(ctx_.opts.spaces, target.space);
      rule && !rule->read.anonymous()) {
    target.expires_at = id_.who->expires_at;
  }
  auto self = shared_from_this();
  auto space = target.space;
  ctx_.rt.space_exists(space, [self, target = std::move(target)](bool exists) mutable {
    asio::post(self->stream_.get_executor(), [self, exists, target = std::move(target)]() mutable {
      if (!exists) {
        self->respond(404, error_body(space_not_found(target.space)));
        return;
      }
      if (self->head_) {
        self->respond_probe();  // the stream's headers; nothing is opened
        return;
      }
      direct_target d{nullptr, {}, std::nullopt, self->correlation_, std::nullopt, {}};
      d.request.caller = caller_of(self->id_);
      d.request.who = self->id_.who;
      d.state = std::move(target);
      self->handed_over<sse_hub_session>(std::move(self->stream_), self->ctx_, self->id_.client,
                                         self->version_, std::move(d))
          ->run();
    });
  });
}

}  // namespace weir::gateway

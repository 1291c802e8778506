// SSE control POSTs: local application and cluster forwarding (see the header).
#include "gateway/sse_control_router.hpp"

#include "actors/hub_connection.hpp"
#include "actors/runtime.hpp"
#include "core/sse_control.hpp"
#include "gateway/server_context.hpp"
#include "gateway/sse_hub_session.hpp"

namespace weir::gateway {

bool same_caller(const actors::connection_info& owner, const core::principal& who,
                 std::string_view client_address) {
  // Seed 001: the same tenant and the same authentication state; a signed-in connection answers
  // to its own subject, an anonymous one to the client address that opened it.
  const auto& opened_by = *owner.who;
  if (opened_by.tenant != who.tenant || opened_by.authenticated() != who.authenticated()) {
    return false;
  }
  return opened_by.authenticated() ? opened_by.subject == who.subject
                                   : owner.remote_address == client_address;
}

std::string_view holder_of(std::string_view connection_id) {
  auto at = connection_id.rfind('@');
  return at == std::string_view::npos ? std::string_view{} : connection_id.substr(at + 1);
}

void apply_sse_control(server_context& ctx, actors::control_request req,
                       std::function<void(unsigned)> done) {
  auto parsed = core::parse_sse_control(
      req.subscribe ? core::sse_control_kind::subscribe : core::sse_control_kind::unsubscribe,
      req.body);
  if (!parsed) {
    done(400);
    return;
  }
  auto& control = parsed->control;
  auto session = ctx.find_sse(control.connection_id);
  if (!req.who) {
    auto who = core::principal_from_json(req.principal);
    if (!who) {
      done(404);
      return;
    }
    req.who = std::make_shared<const core::principal>(std::move(*who));
  }
  // Unknown, closed, or not this caller's: the same 404, so a probe learns nothing (seed 001).
  if (!session || !session->connection() ||
      !same_caller(session->connection()->info(), *req.who, req.remote_address)) {
    done(404);
    return;
  }
  if (parsed->late_error_status) {
    done(*parsed->late_error_status);
    return;
  }
  core::client_frame frame;
  frame.type =
      req.subscribe ? core::client_frame_type::subscribe : core::client_frame_type::unsubscribe;
  frame.query_id = std::move(control.query_id);
  frame.revision = control.revision;
  frame.request = std::move(control.request);
  session->connection()->control(std::move(frame), std::move(req.who), std::move(done));
}

void route_sse_control(server_context& ctx, actors::control_request req,
                       std::string_view connection_id, std::function<void(unsigned)> done) {
  auto* link = ctx.rt.cluster();
  auto holder = holder_of(connection_id);
  if (link && !holder.empty() && holder != link->self_id()) {
    if (!link->is_member(std::string{holder})) {
      done(404);  // names no member: no such connection anywhere
      return;
    }
    link->forward_control(std::string{holder}, std::move(req), std::move(done));
    return;
  }
  apply_sse_control(ctx, std::move(req), std::move(done));
}

}  // namespace weir::gateway

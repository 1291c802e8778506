// The admin page's slowest consumers (see the header).
#include "gateway/slowest_consumers.hpp"

#include "actors/cluster_link.hpp"
#include "actors/runtime.hpp"
#include "gateway/server_context.hpp"

namespace weir::gateway {

std::vector<slow_consumer> slowest_consumers(server_context& ctx, std::size_t n) {
  std::string member;
  if (auto* link = ctx.rt.cluster()) {
    member = link->self_id();
  }
  std::vector<slow_consumer> out;
  for (auto& c : ctx.slowest(n)) {
    // The client address says who it is; the correlation id finds its log lines.
    auto connection = c.remote.empty()           ? c.correlation_id
                      : c.correlation_id.empty() ? c.remote
                                                 : c.remote + " (" + c.correlation_id + ")";
    out.push_back({member, std::move(connection),
                   std::string{transport_names[static_cast<std::size_t>(c.kind)]}, c.queued_bytes,
                   c.frames_sent});
  }
  return out;
}

}  // namespace weir::gateway

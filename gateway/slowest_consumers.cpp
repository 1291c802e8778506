// The admin page's slowest consumers (see the header).
#include "gateway/slowest_consumers.hpp"

#include "gateway/server_context.hpp"

namespace weir::gateway {

std::vector<slow_consumer> slowest_consumers(server_context&, std::size_t) {
  // Empty until the sessions register what each connection has queued and sent (a
  // per-connection registry in server_context); the page shows an empty table until then.
  return {};
}

}  // namespace weir::gateway

// weir::gateway slowest consumers — the client connections on this node that lag the most (the
// most bytes queued for their socket), for the admin page's table. Internal to gateway/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weir::gateway {

struct server_context;

/// One lagging connection as the admin page lists it.
struct slow_consumer {
  std::string member;      ///< the member holding it (this node's id; "" for a single node)
  std::string connection;  ///< what identifies it to an operator (its client address, an id)
  std::string transport;   ///< "websocket", "sse", "windowed"
  std::uint64_t queued_bytes = 0;
  std::uint64_t frames_sent = 0;
};

/// At most `n` connections held here, the most bytes queued first.
std::vector<slow_consumer> slowest_consumers(server_context& ctx, std::size_t n);

}  // namespace weir::gateway

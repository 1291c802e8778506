// The gRPC services one cluster member offers the others: Peer (heartbeat Status, forwarded
// writes, forwarded SSE control POSTs) and QueryOwner (the owner side of Watch streams).
// Internal to cluster/ (the factory returns gRPC services).
#pragma once

#include <functional>
#include <memory>
#include <vector>

namespace grpc {
class Service;
}
namespace weir::actors {
class runtime;
}

namespace weir::cluster {

class cluster_node;

struct peer_services {
  std::vector<std::unique_ptr<grpc::Service>> services;  ///< for grpc_server to register
  /// Ends every Watch stream other members hold here and refuses new ones (the node drains;
  /// gRPC's shutdown would otherwise wait for streams that never end on their own).
  std::function<void()> end_watch_streams;
};

/// Both services.
peer_services make_peer_services(cluster_node& node, actors::runtime& rt);

}  // namespace weir::cluster

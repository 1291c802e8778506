// The gRPC services one cluster member offers the others: Peer (heartbeat Status, forwarded
// writes, forwarded SSE control POSTs) and QueryOwner (the owner side of Watch streams).
// Internal to cluster/ (the factory returns gRPC services).
#pragma once

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

/// Both services, for grpc_server to register.
std::vector<std::unique_ptr<grpc::Service>> make_peer_services(cluster_node& node,
                                                               actors::runtime& rt);

}  // namespace weir::cluster

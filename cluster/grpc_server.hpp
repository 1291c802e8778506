// weir::cluster::grpc_server — the node's gRPC endpoint: the Data service (writes from
// backends) and, in a cluster, the Peer and QueryOwner services other members call.
// No gRPC headers here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/result.hpp"

namespace weir::actors {
class runtime;
}

namespace weir::cluster {

class cluster_node;

struct grpc_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 9090;  ///< 0 picks a free port
  std::size_t max_message_bytes = 1 << 20;
};

class grpc_server {
 public:
  grpc_server(grpc_options opts, actors::runtime& rt);
  ~grpc_server();
  grpc_server(const grpc_server&) = delete;
  grpc_server& operator=(const grpc_server&) = delete;

  /// Also serves the cluster's node-to-node services for `node` (call before start()).
  void serve_cluster(cluster_node& node);
  core::result<void> start();
  std::uint16_t port() const;
  /// Ends the Watch streams other members hold on this node and refuses new ones (drain).
  void end_watch_streams();
  /// Stops accepting calls and waits up to `timeout_ms` for those in flight.
  void stop(std::int64_t timeout_ms);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::cluster

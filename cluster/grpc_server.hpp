// weir::cluster::grpc_server — the node's gRPC endpoints: the Data service (writes from
// backends, with the same JWTs and space rules as HTTP) on node.grpc and, in a cluster, the Peer
// and QueryOwner services other members call on their own listener, node.peer, which admits
// members only (the cluster's token, mutual TLS, or both). No gRPC headers here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <vector>

#include "core/authenticator.hpp"
#include "core/result.hpp"
#include "core/space_rules.hpp"

namespace weir::actors {
class runtime;
}

namespace weir::cluster {

class cluster_node;

struct grpc_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 9090;  ///< 0 picks a free port
  std::size_t max_message_bytes = 1 << 20;
  /// The peer listener (served only with serve_cluster); 0 picks a free port.
  std::string peer_address = "127.0.0.1";
  std::uint16_t peer_port = 9091;
  /// Data callers' credentials (`authorization: Bearer` metadata); null: authentication off.
  std::shared_ptr<const core::authenticator> auth;
  std::vector<core::space_rule> spaces;  ///< write rules, as for the HTTP write API
  /// Data calls running at once, node-wide (each is a write on its way to its unit's mailbox);
  /// beyond it a call is refused at once with UNAVAILABLE server.overloaded.
  std::size_t max_data_calls = 4096;
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
  /// The bound peer port (0 when not clustered).
  std::uint16_t peer_port() const;
  /// Ends the Watch streams other members hold on this node and refuses new ones (drain).
  void end_watch_streams();
  /// Stops accepting calls and waits up to `timeout_ms` for those in flight.
  void stop(std::int64_t timeout_ms);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::cluster

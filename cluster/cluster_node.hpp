// weir::cluster::cluster_node — this node's membership in a Weir cluster: the configured member
// list or, with elastic membership, the lease record in PostgreSQL (leases.cpp), rendezvous
// ownership of units, heartbeats to every peer (each reply also carries the
// peer's figures and its own view of who is up), and the client side of node-to-node calls:
// writes forwarded to owners, SSE control POSTs forwarded to holders, and one multiplexed
// Watch stream per owner for this node's upstream subscriptions. Implements
// actors::cluster_link. No gRPC headers here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/cluster_link.hpp"
#include "core/result.hpp"

namespace weir::actors {
class runtime;
}
namespace weir::store {
class postgres_leases;
}

namespace weir::cluster {

struct member_address {
  std::string id;
  std::string peer;  ///< "host:port" of its peer listener
  std::string http;  ///< "host:port"
};

/// How members prove themselves to each other: a shared token (sent as metadata on every call),
/// mutual TLS (PEM texts), or both.
struct peer_auth {
  std::string token;
  std::string cert_pem, key_pem, ca_pem;
  bool tls() const { return !cert_pem.empty(); }
};

/// The metadata key carrying the peer token.
inline constexpr const char* peer_token_header = "x-weir-peer-token";

struct cluster_options {
  std::string self;
  /// Static membership: every member, this node included. Elastic membership (`leases` set):
  /// just this node, with the addresses other members reach it at.
  std::vector<member_address> members;
  /// Elastic membership: members register in PostgreSQL (lease rows) and own units by the
  /// membership record; null for a static list.
  std::shared_ptr<store::postgres_leases> leases;
  std::int64_t lease_ms = 3000;       ///< a lease not renewed for this long has expired
  std::int64_t lease_renew_ms = 500;  ///< how often this member renews its lease
  std::int64_t heartbeat_interval_ms = 250;
  std::int64_t suspect_after_ms = 1000;
  std::int64_t down_after_ms = 3000;
  std::int64_t forward_timeout_ms = 5000;
  std::size_t max_stream_queue_bytes = 8 << 20;
  std::size_t max_message_bytes = 256 << 20;  ///< largest snapshot a watch may carry
  std::string version;
  peer_auth auth;
};

/// A member's state as this node sees it.
struct member_view {
  std::string id;
  std::string state;  ///< "up", "suspect", "down"
};

/// The owners of units as this node knows them.
struct owners_view {
  std::uint64_t epoch = 0;  ///< 0 for a static list
  std::shared_ptr<const std::vector<std::string>> ids;
};

class cluster_node final : public actors::cluster_link {
 public:
  cluster_node(cluster_options opts, actors::runtime& rt);
  ~cluster_node() override;
  cluster_node(const cluster_node&) = delete;
  cluster_node& operator=(const cluster_node&) = delete;

  /// Starts heartbeats (call once gRPC serves, so peers can reach this node back).
  void start();
  /// Ends every stream and heartbeat and waits for their calls to finish. Idempotent.
  void stop();
  /// Reported to peers and in /cluster/health while the node drains. With elastic membership
  /// it also stops owning units: its lease says it drains, the owners on record drop it, and
  /// this waits (at most `wait_ms`) until that is recorded and other members had a renewal
  /// round to take its units over.
  void set_draining(std::int64_t wait_ms = 0);
  /// Elastic membership: registers this member (its first lease round). Errors:
  /// store.unavailable. A no-op for a static list.
  core::result<void> join();

  const cluster_options& options() const;
  owners_view owners() const;
  std::vector<member_view> view() const;
  bool draining() const;
  /// The gateway's handler for forwarded control POSTs (404 while none is set).
  void handle_control(actors::control_request req, std::function<void(unsigned)> done);
  /// This node's traffic totals as the gateway counts them (zeros while none is set).
  actors::traffic_totals local_totals() const;

  // actors::cluster_link
  const std::string& self_id() const override;
  bool is_member(const std::string& id) const override;
  std::vector<std::string> members() const override;
  bool member_up(const std::string& id) const override;
  void space_exists(const std::string& space, std::function<void(bool)> done) override;
  std::optional<std::string> remote_owner(const store::unit_key& unit) const override;
  void forward_write(const std::string& node, actors::write_command cmd,
                     actors::write_callback done) override;
  std::uint64_t open_watch(const std::string& node, const core::bound_query& query,
                           actors::watch_callback cb) override;
  void cancel_watch(const std::string& node, std::uint64_t watch_id) override;
  void forward_control(const std::string& node, actors::control_request req,
                       std::function<void(unsigned)> done) override;
  void set_local_control(actors::control_handler h) override;
  void set_local_totals(std::function<actors::traffic_totals()> f) override;
  std::vector<actors::member_status> member_statuses() const override;
  void remote_connections(const core::health_scope& scope,
                          std::function<void(std::vector<core::connection_health>)> done) override;
  bool ready() const override;
  bool elastic() const override;
  std::uint64_t owners_epoch() const override;
  std::pair<unsigned, std::string> health() const override;
  peer_stream_stats peer_stream(const std::string& id) const override;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::cluster

// weir::actors::cluster_link — what the actors and the gateway need from the cluster, as an
// interface the cluster layer implements (dependencies point apps → gateway, cluster → actors,
// so actors cannot name cluster types). A single node has no link: everything is local.
// Also the owner side of a watch: a replica_sink receives a query's rows (the window of a
// bounded query, every match of an unbounded one) and then each durable write's update to them,
// which is all a gateway needs to serve the query itself.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/view_update.hpp"
#include "actors/write_command.hpp"
#include "core/principal.hpp"
#include "core/query_health.hpp"
#include "core/record.hpp"
#include "core/result.hpp"

namespace weir::core {
struct bound_query;
}
namespace weir::store {
struct unit_key;
}

namespace weir::actors {

/// What a gateway hears about one watch on a remote owner, in order.
struct watch_event {
  enum class kind {
    snapshot,  ///< the query's rows as of `snapshot.seq`: (re)start from this
    update,    ///< a durable write changed them
    lost,      ///< the owner became unreachable; a snapshot follows once it is back
    failed,    ///< the owner refused the watch (`error` says why); nothing follows
  };
  kind what = kind::snapshot;
  std::uint64_t watch_id = 0;
  view_snapshot snapshot;
  view_update update;
  std::string error;
  std::string error_code;  ///< the owner's error code when it refused (e.g. object.deleted)
  /// Keeps the event's bytes counted against its stream's bound until dropped: whoever applies
  /// the event keeps it until then (null for events the link makes itself, such as `lost`).
  std::shared_ptr<const void> hold;
};

/// Called by the link from its own threads, one call at a time per watch.
using watch_callback = std::function<void(watch_event)>;

/// Where a query actor sends a query's raw rows and updates instead of encoded frames: a remote
/// gateway's watch (owner side), or a merge of several units' windows on this node. Called on
/// the query actor's thread; must not block (queue and return).
class replica_sink {
 public:
  virtual ~replica_sink() = default;
  /// The query's rows: sent first, and again when the replica must start over.
  virtual void snapshot(const view_snapshot& s) = 0;
  /// A durable write changed them.
  virtual void update(const view_update& u) = 0;
  /// The query cannot be served here (e.g. 410 object.deleted): nothing follows.
  virtual void refused(const core::error& e) = 0;
};

/// An SSE hub control POST (arc-hub §8) forwarded to the node holding its connection, with the
/// caller's identity, after the receiving node's own 415/413 checks.
struct control_request {
  bool subscribe = true;
  std::string body;            ///< the POST body, unchanged
  std::string remote_address;  ///< the caller's client address as the receiving node saw it
  /// The caller as the receiving node verified it (core::principal_to_json; "" anonymous with
  /// no tenant): what crosses to the member holding the connection.
  std::string principal;
  /// The same, decoded (null until the holder decodes `principal`).
  std::shared_ptr<const core::principal> who;
};
/// Answers a control request with its HTTP status.
using control_handler = std::function<void(control_request, std::function<void(unsigned)>)>;

/// Running totals of a node's traffic since it started: what it reports to the other members
/// (Peer.Status) for their admin pages, which turn them into rates.
struct traffic_totals {
  std::uint64_t writes = 0;  ///< writes answered
  std::uint64_t frames = 0;  ///< frames handed to client sockets
};

/// One member as this node sees it, for the admin page: its state and the figures of its last
/// heartbeat answer.
struct member_status {
  std::string id;
  std::string state;  ///< "up", "suspect" or "down" (this node: "up")
  bool self = false;
  bool draining = false;
  /// Elastic membership: whether it is an owner on record; unset for a static list.
  std::optional<bool> owner;
  /// The figures below are its last heartbeat answer. False when it never answered, and for
  /// this node, whose figures the caller reads from its own runtime.
  bool reported = false;
  std::uint64_t units = 0;  ///< units it owns with data loaded
  std::uint64_t query_keys = 0;
  std::uint64_t connections = 0;
  std::uint64_t subscriptions = 0;
  traffic_totals totals;
};

class cluster_link {
 public:
  virtual ~cluster_link() = default;

  /// This node's id.
  virtual const std::string& self_id() const = 0;
  /// True when `id` names a configured member (this one included).
  virtual bool is_member(const std::string& id) const = 0;
  /// Every member's id, this one included.
  virtual std::vector<std::string> members() const = 0;
  /// Whether member `id` answers heartbeats (`up`); this node always is.
  virtual bool member_up(const std::string& id) const = 0;
  /// The member owning `unit` when that is another node; nullopt when it is this one.
  virtual std::optional<std::string> remote_owner(const store::unit_key& unit) const = 0;

  /// Applies `cmd` on its owner `node`; `done` runs once the owner made it durable, or with
  /// cluster.owner_unavailable (503) when the owner cannot be reached.
  virtual void forward_write(const std::string& node, write_command cmd, write_callback done) = 0;

  /// Opens a watch of `query` on its owner `node` over the one stream to that node. Events go
  /// to `cb`; while the owner is unreachable the watch stays registered and restarts with a
  /// fresh snapshot when it is back. Returns the watch id (names it in events and cancel).
  virtual std::uint64_t open_watch(const std::string& node, const core::bound_query& query,
                                   watch_callback cb) = 0;
  virtual void cancel_watch(const std::string& node, std::uint64_t watch_id) = 0;

  /// Forwards an SSE control POST to the node holding the connection; `done` gets its status
  /// (404 when that node is down: its stream is gone with it; 503 when a call to a node that
  /// is up failed, worth a retry).
  virtual void forward_control(const std::string& node, control_request req,
                               std::function<void(unsigned)> done) = 0;
  /// The gateway's handler for control requests forwarded to this node.
  virtual void set_local_control(control_handler h) = 0;
  /// Where this node's traffic totals come from when a member asks (Peer.Status): the gateway
  /// counts them. Null (the default, and after the gateway stops): zeros.
  virtual void set_local_totals(std::function<traffic_totals()> f) = 0;
  /// Every member, this one included, with what its last heartbeat answer said (the admin page).
  virtual std::vector<member_status> member_statuses() const = 0;

  /// The connections `scope` may see on the other members that are up (their part of the
  /// caller's health feed). `done` runs once, on any thread, when all answered or timed out.
  virtual void remote_connections(
      const core::health_scope& scope,
      std::function<void(std::vector<core::connection_health>)> done) = 0;

  /// Whether any other member holds data of `space` (a Peer call to each member that is up);
  /// `done` runs once, on any thread.
  virtual void space_exists(const std::string& space, std::function<void(bool)> done) = 0;

  /// Ready for traffic: a majority of the members (this one included) is reachable (a static
  /// list), or this member's lease was renewed within its term (elastic membership).
  virtual bool ready() const = 0;
  /// Members register in PostgreSQL with leases instead of a configured list.
  virtual bool elastic() const { return false; }
  /// The epoch of the owners this node routes by (elastic membership; 0 for a static list).
  virtual std::uint64_t owners_epoch() const { return 0; }
  /// The whole cluster's health as JSON (see docs/operations.md), with 200 when every member
  /// is up and none is draining, 503 otherwise.
  virtual std::pair<unsigned, std::string> health() const = 0;

  /// This node's watch stream to one other member (/metrics).
  struct peer_stream_stats {
    bool open = false;           ///< a stream is running now
    std::size_t watches = 0;     ///< watches this node holds on that member
    std::uint64_t events = 0;    ///< snapshots and updates received over its streams
    std::uint64_t started = 0;   ///< streams started (the first, then one per restart)
    std::uint64_t errors = 0;    ///< streams that ended with an error status
    std::size_t held_bytes = 0;  ///< its events taken and not yet applied here
    std::uint64_t pauses = 0;    ///< times its stream stopped reading at that bound
  };
  virtual peer_stream_stats peer_stream(const std::string& id) const {
    (void)id;
    return {};
  }
};

}  // namespace weir::actors

// weir::config::node_config — everything one Weir node reads from its configuration file
// (weir.yaml), with the defaults a newcomer gets when a section or key is left out.
// Loading validates everything up front: a typo or an out-of-range value stops the node at start
// with a message naming the file, the key and (for queries) the query, never later or silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <memory>

#include "core/access_rule.hpp"
#include "core/authenticator.hpp"
#include "core/ip_network.hpp"
#include "core/query_definition.hpp"
#include "core/result.hpp"
#include "core/space_rules.hpp"

namespace weir::config {

/// Observable-query hub limits (arc-hub.md §9; YAML section `query`, names in comments).
struct hub_limits {
  std::int64_t keep_alive_interval_ms = 30000;  ///< keepAliveIntervalMs, ≤3600000; ≤0 disables (0)
  std::size_t max_hub_connections = 512;        ///< maxObservableHubConnections, 1..100000
  std::size_t max_hub_connections_per_caller = 512;   ///< …PerCaller, 1..100000
  std::size_t max_hub_connections_per_address = 512;  ///< …PerAddress, 1..100000
  std::size_t max_subscriptions_per_connection = 256;  ///< …HubSubscriptionsPerConnection, 1..10000
  std::size_t max_subscriptions = 4096;                ///< maxObservableSubscriptions, 1..100000
  std::size_t max_subscriptions_per_caller = 4096;     ///< …PerCaller, 1..100000
  std::size_t max_inbound_frames = 256;                ///< maxObservableInboundFrames, 1..10000
  std::size_t max_outbound_frames = 256;               ///< maxObservableOutboundFrames, 1..10000
  std::size_t max_inbound_frame_bytes = 65536;         ///< …InboundFrameBytes, 1..16 MiB
  std::size_t max_outbound_frame_bytes = 1 << 20;      ///< …OutboundFrameBytes, 1..16 MiB
  /// maxOutboundQueueBytes (Weir's own), max_outbound_frame_bytes..1 GiB: bytes queued per
  /// connection before it is closed with 1013 "Outbound queue full".
  std::size_t max_outbound_queue_bytes = 4 << 20;
  std::size_t max_tombstones = 1024;              ///< maxObservableTombstones, 1..100000
  std::size_t max_sort_indexes_per_dataset = 16;  ///< maxSortIndexesPerDataset, 1..1024
  std::int64_t tombstone_retention_ms = 120000;   ///< tombstoneRetentionMs, 1..86400000
  std::int64_t shutdown_timeout_ms = 10000;       ///< observableShutdownTimeoutMs, 0..600000
  /// healthIntervalMs (Weir's own), 10..60000: how often a health-feed subscription samples its
  /// caller's connections; it emits only when they changed.
  std::int64_t health_interval_ms = 1000;
  std::int64_t agent_run_max_ms = 3600000;  ///< agentRunMaxMs, 100..86400000
  /// allowedOrigins: browser origins trusted besides the request's own (arc-hub §8).
  std::vector<std::string> allowed_origins;
  bool allow_null_origin = false;  ///< allowNullOrigin: trust `Origin: null`
};

/// Windowed subscribe streams (windowed-subscribe §4, §7; YAML section `windowed`).
struct windowed_settings {
  /// keepAliveMs, 0..3600000: a `: keepalive` comment after this long without a frame; 0 off.
  std::int64_t keep_alive_ms = 25000;
  /// maxQueueBytes, 64 KiB..1 GiB: bytes of events a stream may hold unwritten (besides its
  /// mailboxCapacity in events) before it closes with `overflow`.
  std::size_t max_queue_bytes = 16 << 20;
  /// closeDeadlineMs, 100..600000: once a stream's `closed` frame is decided, how long the
  /// client has to take it before the connection is dropped without it.
  std::int64_t close_deadline_ms = 10000;
  /// maxObjectsPerSpaceWindow, 1..1000000: objects of a space one space-wide window (the
  /// `…/datasets/query` endpoint) merges on a node; past it the window is refused
  /// (query.too_many_objects).
  std::size_t max_objects_per_space_window = 10000;
};

/// What every record must hold to (YAML section `records`; core::document_limits). The nesting
/// depth is fixed (core::max_document_depth, 64) and not configurable.
struct record_settings {
  /// maxBytes, 1 KiB..64 MiB: serialized size of one record after a write.
  std::size_t max_bytes = 1 << 20;
  /// maxMembers, 16..10000000: members of one object, elements of one array.
  std::size_t max_members = 100000;
  /// maxKeyBytes, 16..65536: bytes of one member name.
  std::size_t max_key_bytes = 1024;
};

/// One member of a cluster, as configured (YAML `cluster.members[]`, or `--member`).
struct cluster_member {
  std::string id;    ///< stable node id (in Kubernetes: the StatefulSet pod name)
  std::string peer;  ///< "host:port" other members reach its peer listener (node.peer) on
  std::string http;  ///< "host:port" clients reach its HTTP on (reported by /cluster/health)
};

/// Cluster membership and failure-detection timing (YAML section `cluster`). No members means a
/// single node that owns every unit.
struct cluster_settings {
  std::string node_id;                  ///< nodeId: this node; one of `members` when listed
  std::vector<cluster_member> members;  ///< members: every node, this one included (1..64)
  /// advertise.peer / advertise.http, "host:port": where other members and clients reach this
  /// node. Set instead of `members`, it makes membership elastic: members register in
  /// PostgreSQL (store.backend: postgres) and come and go at run time.
  std::string advertise_peer;
  std::string advertise_http;
  std::int64_t lease_ms = 3000;       ///< leaseMs, 500..600000: a member's lease lasts this long
  std::int64_t lease_renew_ms = 500;  ///< leaseRenewMs, 50..leaseMs/2: how often it renews
  std::int64_t heartbeat_interval_ms = 250;  ///< heartbeatIntervalMs, 10..60000
  std::int64_t suspect_after_ms = 1000;      ///< suspectAfterMs, 10..600000
  std::int64_t down_after_ms = 3000;         ///< downAfterMs, > suspectAfterMs, ..600000
  /// ownerUnavailableErrorMs, 0..86400000: how long Arc subscribers whose owner is unreachable
  /// keep their subscription (to get a fresh baseline when it is back) before an Error frame.
  std::int64_t owner_unavailable_error_ms = 30000;
  std::int64_t forward_timeout_ms = 5000;  ///< forwardTimeoutMs, 10..600000
  /// maxStreamQueueBytes, 64 KiB..1 GiB: what an owner queues on one gateway's stream before it
  /// resyncs that gateway's watches with a snapshot instead of buffering more.
  std::size_t max_stream_queue_bytes = 8 << 20;
  /// token / tokenFile: the shared secret members present to each other (≥ 32 bytes).
  std::string token;
  /// tls: mutual TLS between members (PEM texts read from certFile, keyFile, caFile).
  struct tls_files {
    std::string cert_pem, key_pem, ca_pem;
    bool enabled() const { return !cert_pem.empty(); }
  } tls;

  /// Elastic membership: no member list, the advertised addresses instead.
  bool elastic() const { return members.empty() && !advertise_peer.empty(); }
  bool clustered() const { return !members.empty() || elastic(); }
};

/// Checks the member list (unique ids, valid endpoints) and that `node_id` is one of them, or,
/// with elastic membership, the node id and advertised addresses; and that members
/// authenticate each other (token or tls). The file may leave `nodeId` out (in
/// Kubernetes every pod shares one file and passes its own name as --node-id) and the token
/// (--peer-token-file): loading checks with `require_node_id` false, which skips both, and
/// `weir serve` again with true once the flags are applied.
core::result<void> validate_cluster(const cluster_settings& c, bool require_node_id = true);

/// Parses a `--member ID=PEER_HOST:PORT,HTTP_HOST:PORT` flag value.
core::result<cluster_member> parse_member_flag(std::string_view text);

/// Who callers are and what the hubs require of them (YAML section `auth`, and `spaces`).
struct auth_settings {
  /// auth.jwt: null when authentication is off (every caller anonymous, credentials unread).
  std::shared_ptr<const core::authenticator> authenticator;
  /// auth.hubs: who may open a hub connection (WebSocket upgrade, SSE stream); anonymous by
  /// default, as seed 001 wants: each subscription is still authorized on its own.
  core::access_rule hubs;
  /// auth.adminRole: the role the admin page's data (/ui/events) needs once auth.jwt is set.
  std::string admin_role = "admin";
  /// spaces: read/write rules for the windowed and write APIs, first match wins.
  std::vector<core::space_rule> spaces;
  /// http.trustedProxies: peers whose X-Forwarded-For and x-cratis-tenant-id are believed.
  std::vector<core::ip_network> trusted_proxies;
};

/// One node's configuration. Per-caller hub limits that are not given default to the configured
/// global limit, not to the built-in default (so lowering a global limit lowers both).
struct node_config {
  std::string http_address = "127.0.0.1";  ///< node.http "host:port" (IPv6 as "[::1]:8080")
  std::uint16_t http_port = 8080;          ///< 0 = pick a free one
  std::string grpc_address = "127.0.0.1";  ///< node.grpc "host:port": weir.v1.Data for backends
  std::uint16_t grpc_port = 9090;          ///< 0 = pick a free one
  /// node.peer "host:port": the member-to-member services (cluster only; never for clients).
  std::string peer_address = "127.0.0.1";
  std::uint16_t peer_port = 9091;
  std::string data_dir = "./weir-data";  ///< node.dataDir
  int io_threads = 0;                    ///< node.ioThreads, 1..256; 0 (unset): one per usable core
  int actor_threads = 2;                 ///< node.actorThreads, 1..256
  std::size_t max_body_bytes = 1 << 20;  ///< http.maxBodyBytes, 1..256 MiB: write API body cap
  /// http.maxConnections, 1..1000000: open TCP connections (any kind) before new ones get 503.
  std::size_t max_connections = 10000;
  /// http.maxConnectionsPerClient, 1..1000000: of them from one client address.
  std::size_t max_connections_per_client = 1000;
  /// http.sendStallTimeoutMs (1000..600000): a streaming connection whose kernel has taken no
  /// byte of pending output for this long is dropped, and its slots released.
  std::int64_t send_stall_timeout_ms = 10000;
  /// http.maxDataCallsInFlight, 1..1000000: gRPC Data calls this node is running at once, over
  /// all connections; beyond it a call is refused with UNAVAILABLE (server.overloaded).
  std::size_t max_data_calls_in_flight = 4096;
  /// store.backend: "embedded" (RocksDB under dataDir, the default) or "postgres" (PostgreSQL
  /// is the system of record; see docs/operations.md#postgresql).
  std::string store_backend = "embedded";
  /// store.postgres.url: a libpq connection string or URI. The environment variable
  /// WEIR_POSTGRES_URL overrides it (applied by `weir serve`), so a secret need not sit in a file.
  std::string postgres_url;
  /// store.postgres.changeCapture: read what other programs commit to weir_records from a
  /// logical replication slot, so it reaches subscribers (docs/operations.md#change-capture).
  bool postgres_change_capture = true;
  /// store.queueCapacity, 1..1000000: pending durable write batches before writes get 503.
  std::size_t store_queue_capacity = 4096;
  /// store.maxPendingWritesPerUnit, 1..1000000: writes of one unit applied but not yet durable;
  /// beyond it the unit's writes get 503 server.overloaded.
  std::size_t max_pending_writes_per_unit = 4096;
  /// store.unitIdleMs, 10..86400000: a unit with no subscription and no write for this long
  /// releases its memory (its actor stops; the next use reloads it from the store).
  std::int64_t unit_idle_ms = 60000;
  /// store.idempotencyKeyTtlMs, 1000..604800000: how long a unit remembers the Idempotency-Key
  /// of an acknowledged write (a retry within it is answered, not applied again).
  std::int64_t idempotency_key_ttl_ms = 86400000;
  /// store.maxIdempotencyKeysPerUnit, 1..10000000: keys a unit remembers at most; beyond it the
  /// ones closest to expiry are forgotten first.
  std::size_t max_idempotency_keys_per_unit = 100000;
  hub_limits hub;
  windowed_settings windowed;
  record_settings records;
  cluster_settings cluster;
  auth_settings auth;
  std::vector<core::query_definition> queries;
  /// log.level: the lowest level written (debug, info, warn, error, off).
  std::string log_level = "info";
  /// log.format: text (a line per event for a terminal) or json (an object per line).
  std::string log_format = "text";
};

/// Reads and validates the file at `path`. Errors: code "config.invalid", message starting with
/// the file name, e.g. "weir.yaml: query 'Demo.Tasks.ObserveByState': field 'filter': unknown
/// filter operator "$foo" at "state"", details {"file", "field"[, "query"]}.
core::result<node_config> load_config_file(const std::string& path);

/// Same as load_config_file, from text; `file_name` is used in messages.
core::result<node_config> load_config_text(std::string_view yaml_text, std::string_view file_name);

// boost::json::value yaml_to_json(const YAML::Node&) is defined in node_config.cpp and declared
// there, so yaml-cpp headers stay out of this header.

}  // namespace weir::config

// The declared keys of weir.yaml (config_schema.hpp). Ranges and derived defaults are here and
// nowhere else; the fields' initializers in node_config.hpp are the fixed defaults.
#include "apps/config/config_schema.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace weir::config {

namespace {

constexpr std::int64_t mib = std::int64_t{1} << 20;

// "host:port", an IPv6 host in brackets.
std::string endpoint_text(const std::string& host, std::uint16_t port) {
  auto h = host.find(':') == std::string::npos ? host : "[" + host + "]";
  return h + ":" + std::to_string(port);
}

// The set and get functions of one node_config field.
#define WEIR_FIELD(field)                                                              \
  [](node_config& c, std::int64_t v) { c.field = static_cast<decltype(c.field)>(v); }, \
      [](const node_config& c) { return static_cast<std::int64_t>(c.field); }

// clang-format off
const integer_key integer_table[] = {
  {"node", "ioThreads", 1, 256, WEIR_FIELD(io_threads)},
  {"node", "actorThreads", 1, 256, WEIR_FIELD(actor_threads)},

  {"http", "maxBodyBytes", 1, 256 * mib, WEIR_FIELD(max_body_bytes)},
  {"http", "maxConnections", 1, 1000000, WEIR_FIELD(max_connections)},
  // At most the node-wide bound as configured.
  {"http", "maxConnectionsPerClient", 1, 1000000, WEIR_FIELD(max_connections_per_client),
   [](node_config& c) {
     c.max_connections_per_client = std::min(c.max_connections_per_client, c.max_connections);
   }},
  {"http", "maxDataCallsInFlight", 1, 1000000, WEIR_FIELD(max_data_calls_in_flight)},
  {"http", "sendStallTimeoutMs", 1000, 600000, WEIR_FIELD(send_stall_timeout_ms)},

  {"store", "queueCapacity", 1, 1000000, WEIR_FIELD(store_queue_capacity)},
  {"store", "maxPendingWritesPerUnit", 1, 1000000, WEIR_FIELD(max_pending_writes_per_unit)},
  {"store", "unitIdleMs", 10, 86400000, WEIR_FIELD(unit_idle_ms)},
  {"store", "idempotencyKeyTtlMs", 1000, 604800000, WEIR_FIELD(idempotency_key_ttl_ms)},
  {"store", "maxIdempotencyKeysPerUnit", 1, 10000000, WEIR_FIELD(max_idempotency_keys_per_unit)},

  // Zero or negative disables keep-alive and is advertised as 0 (arc-hub §6, seed 003).
  {"query", "keepAliveIntervalMs", std::numeric_limits<std::int32_t>::min(), 3600000,
   [](node_config& c, std::int64_t v) { c.hub.keep_alive_interval_ms = std::max<std::int64_t>(0, v); },
   [](const node_config& c) { return c.hub.keep_alive_interval_ms; }},
  {"query", "maxObservableHubConnections", 1, 100000, WEIR_FIELD(hub.max_hub_connections)},
  // Per-caller budgets default to the global one as configured (seed 001).
  {"query", "maxObservableHubConnectionsPerCaller", 1, 100000,
   WEIR_FIELD(hub.max_hub_connections_per_caller),
   [](node_config& c) { c.hub.max_hub_connections_per_caller = c.hub.max_hub_connections; }},
  // Not in Arc: hub connections from one client address. Unless set, all of the node's, as Arc
  // lets one caller take the whole capacity by default (seed 001); set it on an internet-facing
  // host so that one host cannot hold every slot.
  {"query", "maxObservableHubConnectionsPerAddress", 1, 100000,
   WEIR_FIELD(hub.max_hub_connections_per_address),
   [](node_config& c) {
     c.hub.max_hub_connections_per_address = c.hub.max_hub_connections;
   }},
  {"query", "maxObservableHubSubscriptionsPerConnection", 1, 10000,
   WEIR_FIELD(hub.max_subscriptions_per_connection)},
  {"query", "maxObservableSubscriptions", 1, 100000, WEIR_FIELD(hub.max_subscriptions)},
  {"query", "maxObservableSubscriptionsPerCaller", 1, 100000,
   WEIR_FIELD(hub.max_subscriptions_per_caller),
   [](node_config& c) { c.hub.max_subscriptions_per_caller = c.hub.max_subscriptions; }},
  {"query", "maxObservableInboundFrames", 1, 10000, WEIR_FIELD(hub.max_inbound_frames)},
  {"query", "maxObservableOutboundFrames", 1, 10000, WEIR_FIELD(hub.max_outbound_frames)},
  {"query", "maxObservableInboundFrameBytes", 1, 16 * mib, WEIR_FIELD(hub.max_inbound_frame_bytes)},
  {"query", "maxObservableOutboundFrameBytes", 1, 16 * mib,
   WEIR_FIELD(hub.max_outbound_frame_bytes)},
  // At least maxObservableOutboundFrameBytes too (checked by the loader once both are read).
  {"query", "maxOutboundQueueBytes", 1, 1024 * mib, WEIR_FIELD(hub.max_outbound_queue_bytes)},
  {"query", "maxObservableTombstones", 1, 100000, WEIR_FIELD(hub.max_tombstones)},
  // Not in Arc: each distinct sort of a dataset's windows holds an index over every record.
  {"query", "maxSortIndexesPerDataset", 1, 1024, WEIR_FIELD(hub.max_sort_indexes_per_dataset)},
  {"query", "tombstoneRetentionMs", 1, 86400000, WEIR_FIELD(hub.tombstone_retention_ms)},
  {"query", "observableShutdownTimeoutMs", 0, 600000, WEIR_FIELD(hub.shutdown_timeout_ms)},
  {"query", "healthIntervalMs", 10, 60000, WEIR_FIELD(hub.health_interval_ms)},
  // Not in Arc: an AG-UI agent run over a state stream ends with RUN_FINISHED after this long.
  {"query", "agentRunMaxMs", 100, 86400000, WEIR_FIELD(hub.agent_run_max_ms)},

  {"windowed", "keepAliveMs", 0, 3600000, WEIR_FIELD(windowed.keep_alive_ms)},
  {"windowed", "maxQueueBytes", 64 * 1024, 1024 * mib, WEIR_FIELD(windowed.max_queue_bytes)},
  {"windowed", "closeDeadlineMs", 100, 600000, WEIR_FIELD(windowed.close_deadline_ms)},
  // Not in the spec: each object a space-wide window merges has its unit loaded and held.
  {"windowed", "maxObjectsPerSpaceWindow", 1, 1000000,
   WEIR_FIELD(windowed.max_objects_per_space_window)},

  {"records", "maxBytes", 1024, 64 * mib, WEIR_FIELD(records.max_bytes)},
  {"records", "maxMembers", 16, 10000000, WEIR_FIELD(records.max_members)},
  {"records", "maxKeyBytes", 16, 65536, WEIR_FIELD(records.max_key_bytes)},

  {"cluster", "heartbeatIntervalMs", 10, 60000, WEIR_FIELD(cluster.heartbeat_interval_ms)},
  {"cluster", "suspectAfterMs", 10, 600000, WEIR_FIELD(cluster.suspect_after_ms)},
  // Greater than suspectAfterMs too (checked by the loader).
  {"cluster", "downAfterMs", 10, 600000, WEIR_FIELD(cluster.down_after_ms)},
  {"cluster", "ownerUnavailableErrorMs", 0, 86400000,
   WEIR_FIELD(cluster.owner_unavailable_error_ms)},
  {"cluster", "forwardTimeoutMs", 10, 600000, WEIR_FIELD(cluster.forward_timeout_ms)},
  {"cluster", "maxStreamQueueBytes", 65536, 1024 * mib, WEIR_FIELD(cluster.max_stream_queue_bytes)},
  {"cluster", "leaseMs", 500, 600000, WEIR_FIELD(cluster.lease_ms)},
  // At most half of leaseMs too (checked by the loader).
  {"cluster", "leaseRenewMs", 50, 300000, WEIR_FIELD(cluster.lease_renew_ms)},
};

#define WEIR_FLAG(field)                                    \
  [](node_config& c, bool v) { c.field = v; }, [](const node_config& c) { return c.field; }
#define WEIR_CHOICE(field)                                                        \
  [](node_config& c, std::string_view v) { c.field = std::string{v}; },           \
      [](const node_config& c) { return c.field; }

const flag_key flag_table[] = {
  {"store.postgres", "changeCapture", WEIR_FLAG(postgres_change_capture)},
  {"query", "allowNullOrigin", WEIR_FLAG(hub.allow_null_origin)},
};

constexpr std::string_view backends[] = {"embedded", "postgres"};
constexpr std::string_view log_levels[] = {"debug", "info", "warn", "error", "off"};
constexpr std::string_view log_formats[] = {"text", "json"};

const choice_key choice_table[] = {
  {"store", "backend", backends, WEIR_CHOICE(store_backend)},
  {"log", "level", log_levels, WEIR_CHOICE(log_level)},
  {"log", "format", log_formats, WEIR_CHOICE(log_format)},
};

#define WEIR_TEXT(field)                                                      \
  [](node_config& c, std::string v) { c.field = std::move(v); },              \
      [](const node_config& c) { return c.field; }
#define WEIR_ENDPOINT(host, port)                                                        \
  [](node_config& c, std::string h, std::uint16_t p) {                                   \
    c.host = std::move(h);                                                               \
    c.port = p;                                                                          \
  },                                                                                     \
      [](const node_config& c) { return endpoint_text(c.host, c.port); }

const text_key text_table[] = {
  {"node", "dataDir", WEIR_TEXT(data_dir)},
  {"store.postgres", "url", WEIR_TEXT(postgres_url)},
  {"cluster", "nodeId", WEIR_TEXT(cluster.node_id)},
};

const endpoint_key endpoint_table[] = {
  {"node", "http", WEIR_ENDPOINT(http_address, http_port)},
  {"node", "grpc", WEIR_ENDPOINT(grpc_address, grpc_port)},
  {"node", "peer", WEIR_ENDPOINT(peer_address, peer_port)},
};

#undef WEIR_FLAG
#undef WEIR_CHOICE
#undef WEIR_TEXT
#undef WEIR_ENDPOINT

// The other keys of each section: lists, rules, nested sections, the cluster's peers and
// secrets and the token verifier's options, each read by the loader's own code for its shape.
constexpr std::pair<std::string_view, std::string_view> other_keys[] = {
  {"", "node"}, {"", "http"}, {"", "store"}, {"", "query"}, {"", "windowed"}, {"", "records"},
  {"", "cluster"}, {"", "auth"}, {"", "spaces"}, {"", "queries"}, {"", "log"},
  {"http", "trustedProxies"},
  {"store", "postgres"},
  {"query", "allowedOrigins"},
  {"auth", "jwt"}, {"auth", "hubs"}, {"auth", "adminRole"},
  {"auth.jwt", "secret"}, {"auth.jwt", "secretFile"}, {"auth.jwt", "publicKeyFiles"},
  {"auth.jwt", "jwksFile"}, {"auth.jwt", "issuer"}, {"auth.jwt", "audience"},
  {"auth.jwt", "cookie"}, {"auth.jwt", "subjectClaim"}, {"auth.jwt", "tenantClaim"},
  {"auth.jwt", "tenantsClaim"}, {"auth.jwt", "rolesClaim"}, {"auth.jwt", "clockSkewSeconds"},
  {"auth.jwt", "requireExpiry"}, {"auth.jwt", "queryParameter"},
  {"cluster", "members"}, {"cluster", "token"}, {"cluster", "tokenFile"},
  {"cluster", "tls"}, {"cluster", "advertise"},
  {"cluster.tls", "certFile"}, {"cluster.tls", "keyFile"}, {"cluster.tls", "caFile"},
  {"cluster.advertise", "peer"}, {"cluster.advertise", "http"},
  {"cluster.members[]", "id"}, {"cluster.members[]", "peer"}, {"cluster.members[]", "http"},
};

constexpr std::string_view section_names[] = {
    "",         "node", "http",     "store", "store.postgres", "query",           "windowed",
    "records",  "auth", "auth.jwt", "cluster", "cluster.tls",  "cluster.advertise",
    "cluster.members[]", "log"};
// clang-format on

#undef WEIR_FIELD

}  // namespace

std::span<const integer_key> integer_keys() {
  return integer_table;
}

std::span<const flag_key> flag_keys() {
  return flag_table;
}

std::span<const choice_key> choice_keys() {
  return choice_table;
}

std::span<const text_key> text_keys() {
  return text_table;
}

std::span<const endpoint_key> endpoint_keys() {
  return endpoint_table;
}

std::vector<std::string_view> keys_of(std::string_view section) {
  std::vector<std::string_view> keys;
  for (const auto& [s, k] : other_keys) {
    if (s == section) {
      keys.push_back(k);
    }
  }
  for (const auto& k : endpoint_table) {
    if (k.section == section) {
      keys.push_back(k.key);
    }
  }
  for (const auto& k : text_table) {
    if (k.section == section) {
      keys.push_back(k.key);
    }
  }
  for (const auto& k : integer_table) {
    if (k.section == section) {
      keys.push_back(k.key);
    }
  }
  for (const auto& k : flag_table) {
    if (k.section == section) {
      keys.push_back(k.key);
    }
  }
  for (const auto& k : choice_table) {
    if (k.section == section) {
      keys.push_back(k.key);
    }
  }
  return keys;
}

std::span<const std::string_view> sections() {
  return section_names;
}

}  // namespace weir::config

// weir::core query_health — the value of the health feed `QueryHealth.ObserveHealth`
// (arc-hub §11): the caller's hub connections, their subscriptions, and the same subscriptions
// grouped by query. Plain data in, JSON text out; who may see which connection is decided by
// the caller (actors/connection_directory), not here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::core {

/// The fully-qualified name under which the feed is subscribed through the hubs.
inline constexpr std::string_view query_health_name = "QueryHealth.ObserveHealth";
/// Its route for the direct transports and the HTTP snapshot.
inline constexpr std::string_view query_health_route = "/.cratis/queries/health";

/// Who is asking, and so which connections they see: a signed-in caller sees the connections its
/// own subject opened in its tenant; an anonymous one (only where authentication is off) those
/// opened anonymously from its own address, in its own tenant.
struct health_scope {
  std::string tenant;
  std::string remote_address;
  std::string subject;  ///< "" for an anonymous caller

  /// True when a connection opened by `conn_subject` from `conn_address` in `conn_tenant` is
  /// visible to this scope.
  bool sees(std::string_view conn_tenant, std::string_view conn_subject,
            std::string_view conn_address) const {
    if (conn_tenant != tenant || conn_subject != subject) {
      return false;
    }
    return !subject.empty() || conn_address == remote_address;
  }
};

struct client_info {
  std::string remote_ip_address;  ///< "" → null
  std::string user_agent;         ///< "" → null
  std::string user_id;            ///< "" → null (anonymous)
  std::string protocol;           ///< "WebSocket" or "SSE"
};

/// Times are milliseconds since the Unix epoch; nullopt is written as null.
struct subscription_health {
  std::string subscription_id;   ///< the client's queryId
  std::string query_identifier;  ///< the query's fully-qualified name
  std::string read_model_type;
  std::int64_t connected_at_ms = 0;
  std::optional<std::int64_t> last_ping_sent_at_ms;
  std::optional<std::int64_t> last_pong_received_at_ms;
  std::optional<std::int64_t> last_data_served_at_ms;
};

struct connection_health {
  std::string connection_id;
  std::string protocol;  ///< "WebSocket" or "SSE"
  std::int64_t established_at_ms = 0;
  client_info client;
  std::vector<subscription_health> subscriptions;
};

/// ISO-8601 UTC with milliseconds: "2026-11-30T06:04:05.123Z".
std::string iso8601_utc(std::int64_t unix_ms);

/// Encodes the §11 object:
///   {"connections":[{connectionId, protocol, establishedAt, subscriptions:[…]}],
///    "totalConnections", "totalSubscriptions",
///    "querySubscriptions":[{queryName, totalSubscriptions, subscribers:[…]}]}
/// Connections keep the given order; querySubscriptions are sorted by query name, subscribers
/// in connection order. Absent times are null (as the TypeScript server writes them).
std::string encode_query_health(const std::vector<connection_health>& connections);

}  // namespace weir::core

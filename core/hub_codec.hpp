// weir::core hub codec — parses the client frames of the Arc WebSocket hub (§2.2) and the
// SubscriptionRequest shared with the SSE hub (§2.3), and encodes the small server frames of §2.1.
// QueryResult frames, whose payload is shared between subscribers, are in core/query_result.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "core/result.hpp"
#include "core/transfer_mode.hpp"

namespace weir::core {

/// The error code of every client-frame or SubscriptionRequest rejection; the message is always
/// hub_error_text::malformed (the protocol never says more to the client).
inline constexpr std::string_view hub_malformed_code = "hub.malformed";

/// The Error-frame payload texts of §2.1, verbatim.
namespace hub_error_text {
inline constexpr std::string_view malformed = "Malformed query control";
inline constexpr std::string_view connection_limit = "Connection subscription limit reached";
inline constexpr std::string_view subscription_limit = "Subscription limit reached";
inline constexpr std::string_view unknown_query = "Unknown observable query";
inline constexpr std::string_view invalid_query = "Invalid observable query";
inline constexpr std::string_view query_failed = "Observable query failed";
}  // namespace hub_error_text

/// A validated SubscriptionRequest (§2.3).
struct subscription_request {
  std::string query_name;
  /// Arguments in input order; null-valued arguments are dropped.
  std::vector<std::pair<std::string, std::string>> arguments;
  std::optional<std::uint64_t> page;
  std::optional<std::uint64_t> page_size;
  std::optional<std::string> sort_by;
  std::optional<std::string> sort_direction;
  transfer_mode mode = transfer_mode::legacy;

  /// Only `desc` (ASCII case-insensitive) means descending; anything else, `descending` included,
  /// is ascending.
  bool descending() const;
};

enum class client_frame_type { subscribe, unsubscribe, ping, pong };

/// One parsed client frame of the WebSocket hub.
struct client_frame {
  client_frame_type type = client_frame_type::pong;
  std::string query_id;                   ///< subscribe/unsubscribe
  std::optional<std::uint64_t> revision;  ///< absent or null → nullopt (legacy)
  subscription_request request;           ///< subscribe only
  std::optional<std::int64_t> timestamp;  ///< ping: set only when a safe integer
};

/// Parses one WebSocket hub text frame. It must be a JSON object whose `type` is exactly
/// `"Subscribe"`, `"Unsubscribe"`, `"Ping"` or `"Pong"`:
/// - Subscribe: valid `queryId`, optional valid `revision`, and a `payload` that passes
///   parse_subscription_request;
/// - Unsubscribe: valid `queryId`, optional valid `revision`;
/// - Ping: `timestamp` is kept when it is a safe integer, else the frame is valid but carries no
///   timestamp (the hub then sends no Pong);
/// - Pong: accepted and meant to be ignored.
/// Members other than those named are ignored. Every failure is error{hub.malformed,
/// "Malformed query control"}.
result<client_frame> parse_client_frame(std::string_view text);

/// Validates a SubscriptionRequest strictly (the TS `parseHubRequest` rules of §2.3): only the
/// keys queryName, arguments, page, pageSize, sortBy, sortDirection and transferMode; queryName a
/// dotted name of <= 180 chars, each part ^[A-Za-z][A-Za-z0-9_]*$; arguments an object of <= 128
/// keys (<= 128 chars, same identifier pattern, not a reserved paging/sorting/waiting name in any
/// case) with string (<= 4096 chars) or null values; page/pageSize non-negative safe integers,
/// pageSize <= 1000; sortBy/sortDirection/transferMode strings of <= 256 chars. Optional members
/// given as null count as absent. Lengths are counted in UTF-16 code units, as JavaScript does.
result<subscription_request> parse_subscription_request(const boost::json::value& v);

/// The §4 wire rule for a revision: a JSON integer from 1 to 2^53-1. Strings, fractions, exponent
/// forms (Boost.JSON reads `1e0` and `1.0` as doubles, so every double is refused), 0, negatives
/// and overflow are refused with hub.malformed. A null is the caller's business (legacy).
result<std::uint64_t> parse_revision(const boost::json::value& v);

/// A client-chosen queryId: ^[A-Za-z0-9_-]+$, 1..256 characters.
bool valid_query_id(std::string_view query_id);

/// Appends `s` as a JSON string literal (quotes included, escaped as Boost.JSON does).
void append_json_string(std::string& out, std::string_view s);

// Server frames: compact JSON, absent members omitted (never null).

/// {"type":"Connected","payload":"<id>","keepAliveIntervalMs":N,"supportsSubscriptionRevisions":true}
std::string encode_connected(std::string_view connection_id, std::int64_t keep_alive_ms);
/// {"type":"Ping","timestamp":N}
std::string encode_ping(std::int64_t timestamp_ms);
/// {"type":"Pong","timestamp":N}
std::string encode_pong(std::int64_t timestamp_ms);
/// {"type":"Error","queryId":"q1","revision":3,"payload":"<text>"}; queryId and revision omitted
/// when not given.
std::string encode_error(std::optional<std::string_view> query_id,
                         std::optional<std::uint64_t> revision, std::string_view text);
/// {"type":"Unauthorized","queryId":"q1","revision":3}; revision omitted when not given; no
/// payload.
std::string encode_unauthorized(std::string_view query_id, std::optional<std::uint64_t> revision);

}  // namespace weir::core

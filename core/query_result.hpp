// weir::core query_result — encodes the QueryResult payload of Arc hub §3 in two parts: a body
// that is encoded once per emission and shared by every subscriber, and a per-subscriber prefix
// (hub envelope, queryId, revision, correlationId) spliced in front of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>

#include "core/change_set.hpp"

namespace weir::core {

/// The `paging` member. `totalPages` is derived: ceil(total_items / size), 0 when size is 0.
/// An unpaged query is all zeros.
struct paging_info {
  std::uint64_t page = 0;
  std::uint64_t size = 0;
  std::uint64_t total_items = 0;
};

/// ceil(total_items / size), or 0 when size is 0.
std::uint64_t total_pages(const paging_info& paging);

/// The status members of a QueryResult. The defaults are a ready, authorized, successful result,
/// which is all the hubs ever send (anything else becomes an Unauthorized or Error frame there);
/// the direct transports and HTTP snapshots also need the other shapes (not ready, unauthorized,
/// validation failures, exceptions). isValid, hasExceptions and isSuccess are derived.
struct query_result_status {
  bool is_ready = true;
  bool is_authorized = true;
  /// Validation result objects, written as given ({severity, message, members, ...}).
  boost::json::array validation_results;
  std::vector<std::string> exception_messages;
  std::string exception_stack_trace;
};

/// Encodes everything of the payload after the `correlationId` member, starting with `,` and
/// ending with the `}` that closes the payload object (the hub envelope's `}` is not included):
///   ,"data":[...],"changeSet":{...},"isReady":true,"isAuthorized":true,"isValid":true,
///   "hasExceptions":false,"isSuccess":true,"validationResults":[],"exceptionMessages":[],
///   "exceptionStackTrace":"","paging":{"page":0,"size":0,"totalItems":0,"totalPages":0}}
/// `data_json` is the pre-serialized JSON text of data (so its bytes can be reused); nullptr omits
/// `data`. `cs` nullptr omits `changeSet`.
std::string encode_query_result_body(const std::string* data_json, const change_set* cs,
                                     const paging_info& paging);

/// As above, with explicit status members.
std::string encode_query_result_body(const std::string* data_json, const change_set* cs,
                                     const paging_info& paging, const query_result_status& status);

/// The per-subscriber hub prefix:
///   {"type":"QueryResult","queryId":"q1","revision":3,"payload":{"correlationId":"<uuid>"
/// `revision` is omitted when nullopt (legacy subscriptions).
std::string encode_query_result_prefix(std::string_view query_id,
                                       std::optional<std::uint64_t> revision,
                                       std::string_view correlation_id);

/// Closes the hub envelope opened by the prefix. A full hub frame is prefix + body + suffix.
inline constexpr std::string_view query_result_suffix = "}";

/// The bare QueryResult payload of the direct transports: {"correlationId":"..." + body.
std::string encode_bare_query_result(std::string_view correlation_id, std::string_view body);

}  // namespace weir::core

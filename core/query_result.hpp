// weir::core query_result — Weir's one encoder of the QueryResult payload of Arc hub §3, in two
// parts: a body that is encoded once per emission and shared by every subscriber, and a
// per-subscriber prefix (hub envelope, queryId, revision, correlationId) spliced in front of it.
// Bodies are built member by member in one buffer (result_body_builder); the hot path writes
// `data` and `changeSet` from records' pre-serialized JSON (core::record) in place, so a large
// result is copied once per emission and never parsed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>

#include "core/change_set.hpp"
#include "core/record.hpp"

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

/// Builds a body (everything of the payload after the `correlationId` member, see below) in one
/// buffer: the members present, in §3's order (`data`, `changeSet`, then Weir's `patch`), each
/// opened by member() with its value appended by the caller, then finish() for the status and
/// paging members. A caller that knows the size of a large value reserves it up front, so the
/// value is written once and never copied again.
class result_body_builder {
 public:
  /// `expected_value_bytes`: the bytes the caller's member values will take (a hint).
  explicit result_body_builder(std::size_t expected_value_bytes = 0);

  /// Appends `,"<name>":` and returns the buffer, for the caller to append the member's value.
  std::string& member(std::string_view name);

  /// Appends the status and paging members and the closing `}`; returns the body.
  std::string finish(const paging_info& paging);
  std::string finish(const paging_info& paging, const query_result_status& status);

 private:
  std::string out_;
};

/// Appends `[json,json,…]` of the records.
void append_record_array(std::string& out, const std::vector<record_ptr>& rows);

/// Appends `{"added":[…],"replaced":[…],"removed":[…]}` (all three always present).
void append_change_set(std::string& out, const std::vector<record_ptr>& added,
                       const std::vector<record_ptr>& replaced,
                       const std::vector<record_ptr>& removed);

/// A body from already-encoded `data`, `changeSet` and `patch` (an RFC 6902 array: the `patch`
/// transfer mode's later emissions) JSON; nullopt omits the member. A ready, authorized,
/// successful result: all the hubs ever send (failures travel as Unauthorized / Error frames).
std::string encode_result_body(std::optional<std::string_view> data_json,
                               std::optional<std::string_view> change_set_json,
                               const paging_info& paging,
                               std::optional<std::string_view> patch_json = std::nullopt);

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

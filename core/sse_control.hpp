// weir::core SSE control — the pure part of the SSE hub's control POSTs
// (`POST /.cratis/queries/sse/subscribe` and `/unsubscribe`, arc-hub §8) and the SSE `data:`
// framing of §7. The checks are split so the handler can run them in the TS order of §8:
// content type (415), body size (413), body shape (400), connection lookup (404, the caller's),
// then queryId/revision (400).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/hub_codec.hpp"
#include "core/result.hpp"

namespace weir::core {

/// The error code of every body rejection by parse_sse_control; the handler answers 400 with an
/// empty body (the message is for logs only).
inline constexpr std::string_view sse_bad_request_code = "sse.bad_request";

enum class sse_control_kind { subscribe, unsubscribe };

/// One SSE control body, shape-checked.
struct sse_control {
  sse_control_kind kind = sse_control_kind::unsubscribe;
  /// Non-empty; used verbatim for the connection lookup.
  std::string connection_id;
  /// As sent. Meaningful only when sse_control_parse::late_error_status is empty (it may fail
  /// valid_query_id otherwise).
  std::string query_id;
  /// Absent or null → nullopt (legacy). Also nullopt when the sent revision was invalid (then
  /// late_error_status is set).
  std::optional<std::uint64_t> revision;
  /// Subscribe only: the validated `request` member. Default-constructed for unsubscribe.
  subscription_request request;
};

/// A parsed control plus the 400 that §8 step 5 reports only after the connection lookup.
struct sse_control_parse {
  sse_control control;
  /// 400 when `queryId` fails valid_query_id or a non-null `revision` fails parse_revision. The
  /// handler must first look the connection up (404 wins), then answer this status.
  std::optional<unsigned> late_error_status;
};

/// §8 step 1: true when `content_type` matches `^application/json(\s*;\s*charset=utf-8)?$`
/// ASCII case-insensitively (\s being ASCII whitespace). A missing header fails (→ 415). The value
/// is matched as given: `application/*+json`, other parameters and quoted charsets fail.
bool sse_control_content_type_ok(std::optional<std::string_view> content_type);

/// §8 step 2: the largest accepted control body, min(maxBodyBytes, maxObservableInboundFrameBytes).
/// The handler enforces it while reading and answers 413 beyond it.
std::size_t sse_control_body_limit(std::size_t max_body_bytes, std::size_t max_inbound_frame_bytes);

/// §8 step 3, plus the step-5 checks reported separately. Errors (all error{sse.bad_request},
/// the "early 400", returned before any connection lookup) are:
/// - the body is not valid JSON (UTF-8 included) or its root is not an object;
/// - `connectionId` is missing, not a string, or empty (an empty id names no connection; .NET
///   answers 400 for it, TS would fall through to 404 — either is a refusal);
/// - `queryId` is missing or not a string;
/// - subscribe only: `request` is missing, null, or fails parse_subscription_request (§2.3).
/// On success, late_error_status is 400 (the "late 400") when `queryId` fails valid_query_id (the
/// empty string included) or `revision` is present, not null, and fails parse_revision (a string,
/// a fraction, 0, a negative...). Top-level members other than connectionId, queryId, revision
/// and request are ignored, as the WS hub ignores them in frames (§8 does not say TS refuses
/// them; only the SubscriptionRequest itself is strict). Unsubscribe ignores `request`.
result<sse_control_parse> parse_sse_control(sse_control_kind kind, std::string_view body);

/// §7 framing of one SSE message: `data: <json>\n\n`. Precondition (asserted in debug builds):
/// `json` is single-line — no raw '\n' or '\r', which would end the SSE line early. Compact
/// JSON serialization escapes both inside strings, so encoded frames always qualify.
std::string encode_sse_data(std::string_view json);

}  // namespace weir::core

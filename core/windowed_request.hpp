// weir::core::windowed_request — the body of a windowed query or subscribe
// (windowed-subscribe §2, seed 002): the closed field set of each endpoint, the validation
// order that decides which error wins, and the canonical key two requests share a window by.
// Pure: the gateway checks the space first (step 1) and the object's state last (step 9).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "core/filter.hpp"
#include "core/projection.hpp"
#include "core/result.hpp"
#include "core/sort_spec.hpp"

namespace weir::core {

/// Which collection a request reads.
enum class windowed_scope {
  object,    ///< /v1/spaces/{space}/query: one object's dataset (objectId, dataset)
  objects,   ///< /v1/spaces/{space}/objects/query: one row per object (property documents)
  datasets,  ///< /v1/spaces/{space}/datasets/query: one dataset across every object
};

std::string_view to_string(windowed_scope s);

/// Defaults and floors of §2.
inline constexpr std::uint64_t default_mailbox_capacity = 256;
inline constexpr std::uint64_t min_mailbox_capacity = 16;
inline constexpr std::uint64_t default_drift_budget_percent = 30;

struct windowed_request {
  windowed_scope scope = windowed_scope::object;
  bool subscribe = false;
  std::string space;
  std::string object_id;  ///< object scope only
  std::string dataset;    ///< "objects" for the objects scope
  boost::json::value filter_json;  ///< as sent (null when absent)
  filter where;
  std::vector<std::string> sort_keys;
  sort_spec order;
  std::uint64_t offset = 0;
  std::uint64_t limit = 0;  ///< 0: unbounded
  bool include_total = false;
  std::uint64_t mailbox_capacity = default_mailbox_capacity;
  std::uint64_t drift_budget_percent = default_drift_budget_percent;
  boost::json::value projection_json;  ///< as sent (null when absent)
  projection proj;
  bool include_deleted = false;
  /// Canonical text of everything that decides the rows and their encoding (scope, ids, filter,
  /// sort, offset, limit, includeTotal, projection, includeDeleted): equal keys share one window.
  std::string key;

  /// The request as a JSON body that parse_windowed_request turns back into an equal request
  /// (another node rebuilds it from this).
  std::string canonical_body() const;
};

/// The fields an endpoint accepts, in the order error messages list them.
std::vector<std::string_view> accepted_fields(windowed_scope scope, bool subscribe);

/// Parses and validates `body` for `scope` (query when `subscribe` is false). Errors, in the
/// order they are checked (the first one wins):
///   2. request.bad_json: empty, not JSON, or not an object;
///   3. request.unknown_field {fields, accepted};
///   4. objectId, then dataset (where the scope takes them): missing or "" →
///      request.missing_field {field}; not a string or not a valid id → request.invalid_field
///      {field}; "null", "None" or "undefined" as objectId → object.id_required;
///   5. filter: not an object or null → request.invalid_field {field}; then
///      filter.unknown_operator / filter.invalid;
///   6. sort, limit, offset, includeTotal, mailboxCapacity, driftBudgetPercent of the wrong JSON
///      type (Decision 3: never silently defaulted) or a malformed sort path →
///      request.invalid_field {field}; on subscribe, limit > 0 without sort →
///      request.invalid_field {field: "limit"};
///   7. projection → request.invalid_field {field: "projection", path?};
///   8. includeDeleted not a bool → request.invalid_field; true on subscribe →
///      request.invalid_field {field: "includeDeleted"}.
/// Integers may be sent as integral numbers in any JSON form (5, 5.0); limit and offset ≤ 0 mean
/// 0; mailboxCapacity ≤ 0 means 256 and is raised to at least 16; driftBudgetPercent ≤ 0 means
/// 30. `null` is the same as leaving a field out.
result<windowed_request> parse_windowed_request(windowed_scope scope, bool subscribe,
                                                std::string space, std::string_view body);

/// Same, from an already-parsed body.
result<windowed_request> parse_windowed_request(windowed_scope scope, bool subscribe,
                                                std::string space, const boost::json::value& body);

}  // namespace weir::core

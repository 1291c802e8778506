// weir::core result bodies from pre-serialized parts — the hot-path form of the QueryResult
// payload: record JSON is serialized once per version (core::record), and a body is assembled
// from those bytes without building a JSON document.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/query_result.hpp"
#include "core/record.hpp"

namespace weir::core {

/// Appends `[json,json,…]` of the records.
void append_record_array(std::string& out, const std::vector<record_ptr>& rows);

/// Appends `{"added":[…],"replaced":[…],"removed":[…]}` (all three always present).
void append_change_set(std::string& out, const std::vector<record_ptr>& added,
                       const std::vector<record_ptr>& replaced,
                       const std::vector<record_ptr>& removed);

/// The QueryResult body (everything after `"correlationId":"…"`, see query_result.hpp) from
/// already-encoded `data`, `changeSet` and `patch` (an RFC 6902 array: the `patch` transfer
/// mode's later emissions) JSON; nullopt omits the member.
std::string encode_result_body(std::optional<std::string_view> data_json,
                               std::optional<std::string_view> change_set_json,
                               const paging_info& paging,
                               std::optional<std::string_view> patch_json = std::nullopt);

}  // namespace weir::core

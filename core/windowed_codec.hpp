// weir::core::windowed_codec — the JSON of windowed-subscribe frames (§4): the snapshot's
// `{records, total?, hasNext?}` and the events of a `changes` frame, with the subscription's
// projection applied to every doc and op (§9). Encoded once per window and shared by every
// subscriber of it; without a projection, docs are the records' stored bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/projection.hpp"
#include "core/record.hpp"
#include "core/window_delta.hpp"

namespace weir::core {

/// Appends one record's doc as seen through `proj`.
void append_windowed_doc(std::string& out, const record& r, const projection& proj);

/// `[doc,…]` of `rows`.
std::string encode_windowed_records(const std::vector<record_ptr>& rows, const projection& proj);

/// The snapshot frame's data: `{"records":[…]}`, plus `"total"` and `"hasNext"` (offset +
/// number of records < total) when `total` is given.
std::string encode_windowed_snapshot(std::string_view records_json,
                                     std::optional<std::uint64_t> total, std::uint64_t offset,
                                     std::size_t count);

/// One event of a `changes` frame: `{"versionId":…,"added":[…],"updated":[…],"removed":[…]}`,
/// empty lists and empty ops left out. Returns "" when the delta has no entries.
std::string encode_windowed_event(std::string_view version_id, const window_delta& d,
                                  const projection& proj);

}  // namespace weir::core

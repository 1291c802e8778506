// weir::core AG-UI state events — the two events of an AG-UI state stream (json-patch spec §4):
// STATE_SNAPSHOT replaces the consumer's state, STATE_DELTA patches it with RFC 6902 operations.
// Encoded as AG-UI's own encoder writes them (`JSON.stringify` of {type, snapshot|delta}), from
// already-serialized parts, so one event is built once per change and shared by every stream.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace weir::core {

/// `{"type":"STATE_SNAPSHOT","snapshot":<document>}`; a missing document is the empty state
/// `{}` (AG-UI: the state a run starts from when there is none).
std::string encode_state_snapshot(std::optional<std::string_view> document_json);

/// `{"type":"STATE_DELTA","delta":<patch>}`, `patch_json` being an RFC 6902 array.
std::string encode_state_delta(std::string_view patch_json);

}  // namespace weir::core

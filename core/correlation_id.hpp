// weir::core correlation id — which X-Correlation-ID a response carries (arc-hub §1): the
// inbound one when it is a UUID, else a freshly minted one. Minting is the caller's (randomness
// is injected), so this stays pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace weir::core {

/// True for the textual UUID form 8-4-4-4-12 of hex digits, either case, exactly 36 characters,
/// without braces, `urn:uuid:` prefix or surrounding whitespace. Version and variant nibbles are
/// not checked (the nil UUID qualifies).
bool is_uuid(std::string_view s);

/// The correlation id for a response: `inbound` unchanged (case kept) when it is a UUID, else
/// `minted` (the caller passes a fresh random UUID).
std::string correlation_id_for(std::optional<std::string_view> inbound, std::string minted);

}  // namespace weir::core

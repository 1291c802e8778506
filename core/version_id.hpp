// weir::core version ids: the `_ver.id` / `versionId` string a shard stamps on every write.
// Owns the encoding of a per-shard apply sequence into a string whose byte order is apply order,
// so `sort: ["-_ver.id"]` means newest first without the reader knowing the encoding.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::core {

/// The 64 digit characters, in ASCII order, so digit order is byte order. They are URL- and
/// JSON-safe (`-`, `0-9`, `A-Z`, `_`, `a-z`), so an id never needs escaping anywhere.
inline constexpr std::string_view version_id_alphabet =
    "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz";

/// Longest encoding: one length character plus 11 base-64 digits (64^11 > 2^64).
inline constexpr std::size_t max_version_id_size = 12;

/// Encodes `seq` as a length character (the alphabet's n-th character for n digits) followed by
/// n base-64 digits, most significant first, with no leading zero digits. A shorter number has a
/// smaller length character, so for any a < b, encode(a) < encode(b) byte-wise. At most 12 bytes
/// (fits the small-string buffer). Example: 0 → "0-", 63 → "0z", 64 → "10-".
std::string encode_version_id(std::uint64_t seq);

/// Inverse of encode_version_id. Accepts only canonical encodings (right length character, no
/// leading zero digit, value within uint64), so decode and encode are a bijection; anything else
/// (including the empty id reserved for synthetic removals) is std::nullopt.
std::optional<std::uint64_t> decode_version_id(std::string_view id);

}  // namespace weir::core

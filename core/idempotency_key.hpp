// weir::core::idempotency_key — what a write's Idempotency-Key is and what a unit remembers of
// it: the key (1–255 visible ASCII characters, as the header's field value allows without
// quoting), the versionId the write was acknowledged with, a fingerprint of the request (so a
// key reused for a different write is refused rather than answered with another write's
// outcome), and when it is forgotten.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace weir::core {

inline constexpr std::size_t max_idempotency_key_bytes = 255;

/// Errors: request.invalid_idempotency_key (empty, longer than 255 bytes, or a character
/// outside '!'..'~').
result<void> check_idempotency_key(std::string_view key);

/// The key a write of a cross-unit batch sent under `key` is remembered by in its unit: "batch-"
/// and 32 hex digits of SHA-256 over the key, the write's object and its dataset. It depends on
/// the write's target, not its place in the batch (a batch resent in another order, or a write
/// resent in another batch under the same key, is applied at most once), and it is a valid key
/// of fixed length whatever the caller's key (a forwarded write's key is checked again).
std::string batch_write_key(std::string_view key, std::string_view object,
                            std::string_view dataset);

/// A stable fingerprint of a write request: its kind, target and body text (the same on every
/// member and build, since a retry may reach another member after a failover).
std::uint64_t write_fingerprint(int kind, std::string_view object, std::string_view dataset,
                                std::string_view id, std::string_view body);

/// A key a unit remembers: the write it named was acknowledged with `version_id`.
struct idempotency_entry {
  std::string key;
  std::string version_id;
  std::uint64_t fingerprint = 0;
  std::int64_t expires_at_ms = 0;  ///< wall clock, milliseconds since the epoch
};

}  // namespace weir::core

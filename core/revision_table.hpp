// weir::core::revision_table — the per-connection revision and tombstone state of Arc hub §4,
// shared by the WebSocket and SSE hubs. It decides; the caller starts and disposes operations.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace weir::core {

/// Retention of tombstones (§4): how long one lives and how many one connection keeps.
struct revision_options {
  std::chrono::milliseconds tombstone_ttl{120000};
  std::size_t max_tombstones{1024};
};

/// What a Subscribe control means for the caller.
enum class subscribe_outcome {
  start,  ///< dispose any previous operation for this id, then start a fresh one (fresh baseline)
  ignore  ///< stale, duplicate, or a legacy control against a revision-aware id: send nothing
};

/// What an Unsubscribe control means for the caller.
enum class unsubscribe_outcome {
  cancel,  ///< dispose any active operation for this id (there may be none)
  ignore   ///< stale, idempotent repeat, legacy against aware, or unknown legacy id
};

/// Per-connection state machine keyed by queryId. Every entry is either live (an operation is
/// running: legacy, or revision-aware at `current`) or a tombstone (revision-aware, no operation,
/// remembering `current` so delayed older controls are ignored). Inactive legacy states are never
/// kept. Time is passed in; expiry and the cap are applied on every `on_*` call.
class revision_table {
 public:
  using clock = std::chrono::steady_clock;

  explicit revision_table(revision_options opts = {});

  /// Subscribe with `revision` (nullopt = legacy client).
  /// - revision r: ignored when the id is revision-aware and r <= current; otherwise the id becomes
  ///   aware at r, any tombstone is cleared, and the caller starts afresh;
  /// - no revision: ignored when the id is revision-aware (live or tombstoned); otherwise it
  ///   replaces the legacy operation.
  subscribe_outcome on_subscribe(std::string_view query_id, std::optional<std::uint64_t> revision,
                                 clock::time_point now);

  /// Unsubscribe with `revision` (the subscription's current revision, not a new one).
  /// - revision r: ignored when aware and r < current, or r == current and already tombstoned;
  ///   otherwise the id becomes an aware tombstone at r — even for an id never subscribed, or with
  ///   r > current — so a delayed Subscribe with r' <= r is ignored later;
  /// - no revision: ignored when aware or unknown; a legacy operation is cancelled and forgotten.
  unsubscribe_outcome on_unsubscribe(std::string_view query_id,
                                     std::optional<std::uint64_t> revision, clock::time_point now);

  /// Server-side termination (Unauthorized, Error, source completion): a live aware state becomes
  /// a tombstone at its current revision; a legacy state is forgotten; anything else is unchanged.
  void on_terminated(std::string_view query_id, clock::time_point now);

  /// True when the id has a live (non-tombstoned) operation.
  bool is_active(std::string_view query_id) const;

  /// True when the id is a tombstone.
  bool is_tombstoned(std::string_view query_id) const;

  /// True when a frame for (`query_id`, `revision`) may still be written: the id is live and its
  /// revision is exactly `revision` (nullopt matching a live legacy operation).
  bool is_current(std::string_view query_id, std::optional<std::uint64_t> revision) const;

  /// The revision of a revision-aware id (live or tombstoned); nullopt for legacy or unknown ids.
  std::optional<std::uint64_t> current_revision(std::string_view query_id) const;

  /// Number of live operations.
  std::size_t active_count() const;

  /// Number of tombstones held.
  std::size_t tombstone_count() const;

  /// Drops tombstones whose age is at least the TTL (`now - tombstoned_at >= ttl`). Cost is
  /// proportional to the number expired plus log n.
  void expire(clock::time_point now);

 private:
  struct entry {
    bool aware = false;
    bool tombstoned = false;
    std::uint64_t revision = 0;         // meaningful when aware
    clock::time_point tombstoned_at{};  // meaningful when tombstoned
  };
  using entry_map = std::map<std::string, entry, std::less<>>;
  // Tombstones ordered by (tombstoned_at, queryId ordinal): the eviction and expiry order.
  using tombstone_index = std::set<std::pair<clock::time_point, std::string>>;

  void tombstone(entry_map::iterator it, std::uint64_t revision, clock::time_point now);
  void untombstone(entry_map::iterator it);
  void erase(entry_map::iterator it);
  void enforce_cap();
  void cleanup(clock::time_point now);

  revision_options opts_;
  entry_map entries_;
  tombstone_index tombstones_;
};

}  // namespace weir::core

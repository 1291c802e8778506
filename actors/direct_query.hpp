// weir::actors::direct_query — a subscription outside the hubs: a named query's HTTP snapshot
// and direct per-query transports (arc-hub §10: full snapshots, or Weir's `patch` and `delta`
// transfer modes when asked), and the AG-UI state stream of one object's property document.
// Each emission is written to the sink as `head + body + tail`, so the caller decides the
// envelope (bare QueryResult, a {"type":"Data","data":…} frame, an SSE event). Counts against
// the subscription budget like a hub subscription ("live subscriptions, direct or on a hub",
// seed 001).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/frame_sink.hpp"
#include "core/principal.hpp"
#include "core/query_health.hpp"
#include "core/result.hpp"
#include "core/transfer_mode.hpp"

namespace weir::core {
struct query_definition;
}

namespace weir::actors {

class runtime;
class health_watch;

struct direct_request {
  std::vector<std::pair<std::string, std::string>> arguments;
  std::uint64_t page = 0;
  std::uint64_t page_size = 0;
  std::optional<std::string> sort_by;
  bool descending = false;
  /// `transferMode` (Weir's extension on the direct transports): full snapshots unless the
  /// client asks for `delta` or `patch`.
  core::transfer_mode mode = core::transfer_mode::full;
  std::string caller;  ///< budget key (see caller_key)
  /// Who asks: the query's `authorize` rule is checked against it and its claims are bound.
  std::shared_ptr<const core::principal> who = core::anonymous_principal();
};

class direct_query {
 public:
  /// Opens the subscription. Errors: auth.required / auth.forbidden (the caller may not run the
  /// query, or lacks a claim it binds), query.invalid_arguments (arguments that do not bind, as
  /// core::bind_query says), subscription.limit (over a subscription budget).
  static core::result<std::unique_ptr<direct_query>> open(runtime& rt,
                                                          const core::query_definition& def,
                                                          direct_request req,
                                                          std::weak_ptr<frame_sink> sink,
                                                          std::string head, std::string_view tail);
  /// Opens the AG-UI state stream of object `object`'s property document in `space`: a
  /// STATE_SNAPSHOT (`{}` while the object has none), then a STATE_DELTA per change. The caller
  /// checked the space and its read rule. Errors: access.rate_limited (over a subscription
  /// budget, as on the windowed API), server.draining.
  static core::result<std::unique_ptr<direct_query>> open_state(runtime& rt, std::string space,
                                                                std::string object,
                                                                const direct_request& req,
                                                                std::weak_ptr<frame_sink> sink);
  /// Opens a direct subscription on the health feed (arc-hub §11) for `scope`, with the same
  /// envelope and budget rules. Errors: auth.required (authentication is configured and the
  /// scope is anonymous: decision 7), subscription.limit, server.draining.
  static core::result<std::unique_ptr<direct_query>> open_health(
      runtime& rt, core::health_scope scope, const direct_request& req,
      std::weak_ptr<frame_sink> sink, std::string head, std::string_view tail);
  /// Cancels: nothing more is written (the liveness flag is cleared first), the query actor
  /// drops it, the budget unit comes back.
  ~direct_query();

  /// When the credential this subscription needed expires (seconds since the Unix epoch): the
  /// transport ends it then with its unauthorized answer. Unset when it needs no credential.
  std::optional<std::int64_t> expires_at() const { return expires_at_; }

  /// Asks for a fresh baseline frame (outbound_frame::baseline): the sink dropped frames while
  /// it lagged. Thread-safe; frames after the baseline continue from it.
  void request_baseline();

 private:
  std::optional<std::int64_t> expires_at_;
  direct_query() = default;
  runtime* rt_ = nullptr;
  std::string caller_;
  std::string space_, object_, key_;
  std::uint64_t token_ = 0;
  std::shared_ptr<std::atomic<bool>> live_;
  std::unique_ptr<health_watch> health_;  ///< set for the health feed (no shard)
};

}  // namespace weir::actors

// weir::actors::windowed_query — one windowed subscription (windowed-subscribe §1–§7), as the
// gateway holds it: opened on the unit that owns the rows (an object's dataset, or the space's
// property documents) or on the space's merge of every object's window (the space-wide dataset),
// it delivers the snapshot and then every event to a windowed_sink. Counts against the
// subscription budget like every live subscription. CAF-free.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "actors/windowed_sink.hpp"
#include "core/result.hpp"
#include "core/windowed_request.hpp"

namespace weir::actors {

class runtime;

class windowed_query {
 public:
  /// Opens the subscription; the sink then gets opened() (or refused(), e.g. 410
  /// object.deleted) and later events. Errors now: access.rate_limited (over a subscription
  /// budget, 429), server.draining.
  static core::result<std::unique_ptr<windowed_query>> open(
      runtime& rt, std::shared_ptr<const core::windowed_request> req,
      std::weak_ptr<windowed_sink> sink, std::string caller);
  /// Ends it: the query forgets it and the budget unit comes back.
  ~windowed_query();

 private:
  windowed_query() = default;
  runtime* rt_ = nullptr;
  std::string caller_;
  std::string space_, object_, key_;
  bool merged_ = false;  // the space-wide dataset: held by the space's merge, not a unit
  std::uint64_t token_ = 0;
  std::shared_ptr<const core::windowed_request> req_;
  /// Cleared when it ends, before its unsubscribe is sent: a subscribe that the unsubscribe
  /// overtakes (a unit handed to a new entry forwards the subscribes that waited on the old one)
  /// is then not registered by the query it reaches.
  std::shared_ptr<std::atomic<bool>> live_;
};

}  // namespace weir::actors

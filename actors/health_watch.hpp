// weir::actors::health_watch — one subscription on the health feed `QueryHealth.ObserveHealth`
// (arc-hub §11), through a hub or a direct transport. A small actor samples the caller's view of
// the connection directory every `hub_options::health_interval_ms` — in a cluster, of every
// member's directory, since the caller's connections may be held anywhere — and emits a full
// QueryResult (`head + body + tail`, like every other subscription) only when that view
// changed; the first emission is immediate. No CAF types here.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "actors/connection_directory.hpp"
#include "actors/frame_sink.hpp"
#include "actors/runtime.hpp"
#include "core/query_health.hpp"

namespace weir::actors {

class health_watch {
 public:
  /// Starts the watch. `live` gates every write (cleared by the owner on cancel); `served`,
  /// when set, is stamped with each emission's time.
  static std::unique_ptr<health_watch> open(runtime::impl& rt, core::health_scope scope,
                                            std::weak_ptr<frame_sink> sink,
                                            std::shared_ptr<const std::string> head,
                                            std::string_view tail,
                                            std::shared_ptr<const std::atomic<bool>> live,
                                            shared_time served);
  /// Stops the actor; nothing more is written.
  ~health_watch();

  /// The current value for `scope`, encoded (the HTTP snapshot's data); `done` runs once, on
  /// any thread (at once on a single node).
  static void current(runtime& rt, const core::health_scope& scope,
                      std::function<void(std::string)> done);

 private:
  health_watch() = default;
  runtime::impl* rt_ = nullptr;
  struct actor_handle;
  std::unique_ptr<actor_handle> actor_;
};

}  // namespace weir::actors

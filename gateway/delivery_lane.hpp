// weir::gateway::delivery_lane — the hand-off from the actors to one I/O thread's sessions, one
// per I/O thread. A query's emission reaches every subscriber's session; rather than each
// session posting its own handler (an allocation, a scheduler lock and a wake-up per
// subscriber per emission), a session with new frames is put on its thread's lane, and the lane
// posts one handler for all of them. That handler first takes every ready session's frames into
// its queue, then writes each session's queue in one gather write: whatever reached a
// connection since its last write goes out together, so the batching grows with the load by
// construction, not by queues building up behind writes in flight.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "gateway/beast.hpp"

namespace weir::gateway {

/// A session a lane serves (its I/O thread's).
class lane_member {
 public:
  virtual ~lane_member() = default;
  /// On the lane's thread: moves what the actors queued into the session's outbound queue,
  /// without writing yet.
  virtual void take_frames() = 0;
  /// On the lane's thread, after every ready session took its frames: writes what is queued.
  virtual void flush() = 0;
};

class delivery_lane {
 public:
  explicit delivery_lane(asio::io_context& ioc) : ioc_(ioc) {}
  delivery_lane(const delivery_lane&) = delete;
  delivery_lane& operator=(const delivery_lane&) = delete;

  /// Any thread: `m` has new frames. The caller makes sure a member is put here at most once
  /// until it took them (bounded_inbox's `schedule` answer).
  void ready(std::shared_ptr<lane_member> m) {
    std::lock_guard lock{mu_};
    ready_.push_back(std::move(m));
    if (!posted_) {
      posted_ = true;
      // Posted under the lock: a close another thread posts for a session right after putting
      // it here must not overtake the run that carries the frames sent before it.
      asio::post(ioc_, [this] { run(); });
    }
  }

  /// The lane of the I/O thread calling (null off the I/O threads).
  static delivery_lane* current() { return current_; }
  /// Called by each I/O thread before it runs its context.
  static void set_current(delivery_lane* lane) { current_ = lane; }

 private:
  void run() {
    {
      std::lock_guard lock{mu_};
      running_.swap(ready_);
      posted_ = false;
    }
    for (auto& m : running_) {
      m->take_frames();
    }
    for (auto& m : running_) {
      m->flush();
    }
    running_.clear();  // keeps its capacity: a steady fan-out allocates nothing here
  }

  asio::io_context& ioc_;
  std::mutex mu_;
  std::vector<std::shared_ptr<lane_member>> ready_;    // guarded by mu_
  std::vector<std::shared_ptr<lane_member>> running_;  // the lane's thread only
  bool posted_ = false;                                // guarded by mu_
  static inline thread_local delivery_lane* current_ = nullptr;
};

}  // namespace weir::gateway

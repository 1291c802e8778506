// weir::gateway::bounded_inbox — the cross-thread hand-off from actors to a session's I/O thread:
// producers push frames from any thread, that thread drains them in one go (one hand-off per
// burst, not per frame: the first push of a burst puts the session on its thread's
// delivery_lane). Bounded in frames and bytes like the session queue behind it: a connection
// whose I/O thread cannot drain it in time is as far behind as one whose socket is full. At the
// bound it closes (the hubs close the connection), or, for a stream that can start again from
// a baseline frame (an AG-UI state stream), it drops everything and takes nothing but the
// next baseline.
#pragma once

#include <mutex>
#include <vector>

#include "actors/frame_sink.hpp"
#include "actors/hub_options.hpp"

namespace weir::gateway {

class bounded_inbox {
 public:
  enum class push_result {
    queued,    ///< added; a drain is already scheduled
    schedule,  ///< added; the caller must schedule a drain on the session's thread
    overflow,  ///< over a bound: the inbox closed itself; the caller closes the connection
    closed,    ///< the inbox was closed before; the frame is dropped
    lagged,    ///< over a bound, resync mode: everything dropped; the caller asks for a baseline
    dropped,   ///< resync mode, waiting for a baseline: this frame is not one
  };

  /// Resync mode (before the first push): at the bound, drop and wait for a baseline frame
  /// instead of closing. A baseline frame always supersedes what is queued before it.
  void resync_on_overflow() { resync_ = true; }

  push_result push(actors::outbound_frame frame, const actors::hub_options& hub) {
    std::lock_guard lock{mu_};
    if (closed_) {
      return push_result::closed;
    }
    if (resync_ && frame.baseline) {
      frames_.clear();
      bytes_ = 0;
      lagging_ = false;
    } else if (lagging_) {
      return push_result::dropped;
    }
    auto size = frame.size();
    if (frames_.size() >= hub.max_outbound_frames || bytes_ + size > hub.max_outbound_queue_bytes) {
      if (!resync_ || frame.baseline) {
        close_locked();  // a baseline alone over the bounds can never be sent
        return push_result::overflow;
      }
      lag_locked();
      return push_result::lagged;
    }
    bytes_ += size;
    frames_.push_back(std::move(frame));
    if (drain_scheduled_) {
      return push_result::queued;
    }
    drain_scheduled_ = true;
    return push_result::schedule;
  }

  /// Takes everything queued (the session's thread).
  std::vector<actors::outbound_frame> drain() {
    std::vector<actors::outbound_frame> out;
    std::lock_guard lock{mu_};
    out.swap(frames_);
    bytes_ = 0;
    drain_scheduled_ = false;
    return out;
  }

  /// Resync mode, the session's thread: the session's own queue overflowed. Drops what is queued
  /// and takes nothing but the next baseline.
  void lag() {
    std::lock_guard lock{mu_};
    lag_locked();
  }

  /// Refuses and drops everything from now on.
  void close() {
    std::lock_guard lock{mu_};
    close_locked();
  }

 private:
  void lag_locked() {
    frames_.clear();
    bytes_ = 0;
    lagging_ = true;
  }

  void close_locked() {
    closed_ = true;
    frames_.clear();
    bytes_ = 0;
  }

  std::mutex mu_;
  std::vector<actors::outbound_frame> frames_;
  std::size_t bytes_ = 0;
  bool drain_scheduled_ = false;
  bool closed_ = false;
  bool resync_ = false;
  bool lagging_ = false;
};

}  // namespace weir::gateway

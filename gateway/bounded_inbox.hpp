// weir::gateway::bounded_inbox — the cross-thread hand-off from actors to a session's strand:
// producers push frames from any thread, the strand drains them in one go (one post per burst,
// not per frame). Bounded in frames and bytes like the session queue behind it: a connection
// whose I/O thread cannot drain it in time is as far behind as one whose socket is full.
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
    schedule,  ///< added; the caller must schedule a drain on the strand
    overflow,  ///< over a bound: the inbox closed itself; the caller closes the connection
    closed,    ///< the inbox was closed before; the frame is dropped
  };

  push_result push(actors::outbound_frame frame, const actors::hub_options& hub) {
    std::lock_guard lock{mu_};
    if (closed_) {
      return push_result::closed;
    }
    auto size = frame.size();
    if (frames_.size() >= hub.max_outbound_frames || bytes_ + size > hub.max_outbound_queue_bytes) {
      close_locked();
      return push_result::overflow;
    }
    bytes_ += size;
    frames_.push_back(std::move(frame));
    if (drain_scheduled_) {
      return push_result::queued;
    }
    drain_scheduled_ = true;
    return push_result::schedule;
  }

  /// Takes everything queued (strand side).
  std::vector<actors::outbound_frame> drain() {
    std::vector<actors::outbound_frame> out;
    std::lock_guard lock{mu_};
    out.swap(frames_);
    bytes_ = 0;
    drain_scheduled_ = false;
    return out;
  }

  /// Refuses and drops everything from now on.
  void close() {
    std::lock_guard lock{mu_};
    close_locked();
  }

 private:
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
};

}  // namespace weir::gateway

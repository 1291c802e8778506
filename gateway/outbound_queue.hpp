// weir::gateway::outbound_queue — a session's queue of frames waiting for its socket (on the
// session's I/O thread), bounded in frames and bytes (arc-hub §9) and written in batches: the
// frames of the batch in flight stay at the front until its write completes, so a close can drop
// everything not yet started without touching what the socket is writing. Shared by the WebSocket
// and SSE sessions, which differ only in how a frame is framed on the wire.
#pragma once

#include <atomic>
#include <cstddef>

#include <boost/container/devector.hpp>

#include "actors/frame_sink.hpp"
#include "actors/hub_options.hpp"

namespace weir::gateway {

class outbound_queue {
 public:
  enum class push_result {
    queued,
    stale,      ///< its subscription was replaced or cancelled meanwhile: dropped
    too_large,  ///< one frame over max_outbound_frame_bytes
    full,       ///< over max_outbound_frames or max_outbound_queue_bytes: the client lags
  };

  push_result push(actors::outbound_frame f, const actors::hub_options& hub) {
    return admit(std::move(f), hub, false);
  }

  /// A baseline that replaces everything not started yet (an AG-UI state stream's snapshot):
  /// what waits is dropped and the frame is admitted past the frame and byte bounds, so the
  /// queue then holds at most the batch in flight (within the bounds) and this one frame. Still
  /// refused when stale or over max_outbound_frame_bytes.
  push_result push_superseding(actors::outbound_frame f, const actors::hub_options& hub) {
    return admit(std::move(f), hub, true);
  }

  /// Starts a batch of up to `max` frames from the front and calls `visit(frame)` for each one
  /// still live (checked here, right before it is written: a subscription replaced or
  /// cancelled after its frame was queued gets nothing more on the wire). Returns how many were
  /// visited; the batch, stale frames included, stays queued until finish_batch().
  template <class Visit>
  std::size_t start_batch(std::size_t max, Visit&& visit) {
    batch_ = 0;
    std::size_t live = 0;
    for (auto& f : frames_) {
      if (batch_ == max) {
        break;
      }
      ++batch_;
      if (f.is_live()) {
        visit(f);
        ++live;
      }
    }
    return live;
  }

  /// The batch was written (or given up): its frames leave the queue.
  void finish_batch() {
    for (; batch_ > 0; --batch_) {
      sub_bytes(frames_.front().size());
      frames_.pop_front();
    }
    if (frames_.empty() && frames_.capacity() > keep_capacity) {
      decltype(frames_){}.swap(frames_);  // a burst's room is given back once the client caught up
    }
  }

  /// After a close is decided: drops every frame not in the batch in flight.
  void drop_unstarted() {
    while (frames_.size() > batch_) {
      sub_bytes(frames_.back().size());
      frames_.pop_back();
    }
  }

  /// Drops everything (the socket is gone and nothing is in flight).
  void clear() {
    frames_.clear();
    bytes_.store(0, std::memory_order_relaxed);
    batch_ = 0;
  }

  bool empty() const { return frames_.empty(); }

  /// Bytes queued, the batch in flight included; the one figure another thread may read (the
  /// admin page's slowest consumers).
  std::size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  push_result admit(actors::outbound_frame f, const actors::hub_options& hub, bool superseding) {
    if (!f.is_live()) {
      return push_result::stale;
    }
    auto size = f.size();
    if (size > hub.max_outbound_frame_bytes) {
      return push_result::too_large;
    }
    if (superseding) {
      drop_unstarted();
    } else if (frames_.size() >= hub.max_outbound_frames ||
               bytes() + size > hub.max_outbound_queue_bytes) {
      return push_result::full;
    }
    bytes_.store(bytes() + size, std::memory_order_relaxed);
    frames_.push_back(std::move(f));
    return push_result::queued;
  }

  // Written only on the session's I/O thread: plain loads and stores, atomic only so that a
  // reader elsewhere sees a whole value.
  void sub_bytes(std::size_t n) { bytes_.store(bytes() - n, std::memory_order_relaxed); }

  // A devector rather than std::deque: libstdc++'s deque allocates a 512-byte block and its map
  // even while empty, which an idle connection paid for (docs/performance.md, idle memory).
  boost::container::devector<actors::outbound_frame> frames_;
  static constexpr std::size_t keep_capacity = 8;
  std::atomic<std::size_t> bytes_{0};
  std::size_t batch_ = 0;  // frames at the front that belong to the write in flight
};

}  // namespace weir::gateway

// weir::actors::frame_sink — where a hub connection's frames go: implemented by the gateway's
// sessions (WebSocket, SSE). Also subscription_owner: what a query tells when it ends one. Frames
// are a small per-subscriber head, shared body bytes encoded once for every subscriber, and a
// constant tail, so nothing shared is copied per subscriber.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace weir::actors {

/// The steady clock in nanoseconds: outbound_frame::origin_ns and view_update::origin_ns.
inline std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct outbound_frame {
  std::shared_ptr<const std::string> head;  ///< per-subscription envelope (or the whole frame)
  std::shared_ptr<const std::string> body;  ///< shared payload bytes; may be null
  std::string_view tail;                    ///< static text closing the envelope
  /// The subscription's liveness: cleared the moment it is replaced, cancelled or terminated,
  /// so a frame still queued for it is dropped instead of written (arc-hub §4: nothing for a
  /// replaced owner, checked before each write). Null for connection-level frames.
  std::shared_ptr<const std::atomic<bool>> live;
  /// The body carries the whole value (a snapshot), not a change against an earlier frame: a
  /// stream that dropped frames while it lagged may start again from here (AG-UI state
  /// streams: a STATE_SNAPSHOT).
  bool baseline = false;
  /// When the write this frame carries reached this node (steady clock, ns; view_update::
  /// origin_ns), 0 for frames no write caused (snapshots, pings): the session observes the
  /// write→frame delivery time when it hands the frame to its socket.
  std::int64_t origin_ns = 0;

  bool is_live() const { return !live || live->load(std::memory_order_acquire); }

  std::size_t size() const {
    return (head ? head->size() : 0) + (body ? body->size() : 0) + tail.size();
  }

  /// A frame that is one piece of text (Connected, Ping, Error…).
  static outbound_frame text(std::string s) {
    return outbound_frame{std::make_shared<const std::string>(std::move(s)), nullptr, {}, nullptr};
  }
};

class frame_sink {
 public:
  virtual ~frame_sink() = default;
  /// Queues a frame for writing; thread-safe, never blocks. Over the outbound bounds the sink
  /// closes the connection itself (arc-hub §9: 1013 "Outbound queue full").
  virtual void send(outbound_frame frame) = 0;
  /// Closes the connection with a protocol close code and reason; thread-safe.
  virtual void close(std::uint16_t code, std::string reason) = 0;
};

/// Who keeps a hub subscription's protocol state (its hub_connection). The query's side tells it
/// when it ends one of its subscriptions (the owner node stayed unreachable, or refused the
/// query), so the client gets an Error frame and the query id is terminated (arc-hub §4).
class subscription_owner {
 public:
  virtual ~subscription_owner() = default;
  /// Thread-safe; called from the thread of the query actor, shard or remote shard that ended it.
  virtual void subscription_failed(std::uint64_t token) = 0;
};

}  // namespace weir::actors

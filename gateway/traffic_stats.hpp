// weir::gateway::traffic_stats — what the node's sessions count for /metrics and the admin
// page: connections open by transport, frames and bytes handed to sockets, the write→frame
// delivery time, and connections closed at each bound. Relaxed atomics: sessions on every I/O
// thread add to them, readers take a figure at a time (no snapshot across them is promised).
// A session adds once per write batch, not once per frame (delivery_batch).
// Internal to gateway/.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "core/latency_histogram.hpp"

namespace weir::gateway {

/// How a connection carries its frames.
enum class transport : std::uint8_t {
  websocket,  ///< Arc hub and direct queries over WebSocket
  sse,        ///< Arc hub, direct queries and AG-UI state streams over Server-Sent Events
  windowed,   ///< the windowed subscribe API's streams
};
inline constexpr std::size_t transport_count = 3;
inline constexpr std::array<std::string_view, transport_count> transport_names{"websocket", "sse",
                                                                               "windowed"};

/// A connection closed at one of its bounds (docs/operations.md#metrics).
enum class bound_close : std::uint8_t {
  outbound_queue_full,  ///< 1013 "Outbound queue full": the client did not keep up
  inbound_queue_full,   ///< 1013 "Inbound queue full": more frames at once than one wake-up takes
  hub_capacity,  ///< the connection budget: the 503 refusing a hub (labelled with Arc's 1013)
  inbound_frame_too_large,  ///< 1009 "Inbound frame too large"
  windowed_overflow,        ///< a windowed stream's `closed{overflow}`
};
inline constexpr std::size_t bound_close_count = 5;
struct bound_close_label {
  std::string_view code;
  std::string_view reason;
};
inline constexpr std::array<bound_close_label, bound_close_count> bound_close_labels{{
    {"1013", "outbound_queue_full"},
    {"1013", "inbound_queue_full"},
    {"1013", "hub_capacity"},
    {"1009", "inbound_frame_too_large"},
    {"overflow", "windowed_overflow"},
}};

struct traffic_stats {
  std::array<std::atomic<std::int64_t>, transport_count> open{};
  std::array<std::atomic<std::uint64_t>, transport_count> frames{};
  std::array<std::atomic<std::uint64_t>, transport_count> bytes{};
  std::array<std::atomic<std::uint64_t>, bound_close_count> closes{};
  /// From the moment a write reached this node to its frame being handed to a socket.
  core::latency_histogram delivery;

  void closed_at(bound_close why) {
    closes[static_cast<std::size_t>(why)].fetch_add(1, std::memory_order_relaxed);
  }
};

/// Holds one connection in traffic_stats::open for as long as it lives.
class open_connection {
 public:
  open_connection(traffic_stats& t, transport kind) : slot_(t.open[index(kind)]) {
    slot_.fetch_add(1, std::memory_order_relaxed);
  }
  ~open_connection() { slot_.fetch_sub(1, std::memory_order_relaxed); }
  open_connection(const open_connection&) = delete;
  open_connection& operator=(const open_connection&) = delete;

  static std::size_t index(transport kind) { return static_cast<std::size_t>(kind); }

 private:
  std::atomic<std::int64_t>& slot_;
};

/// One write batch's frames, added up and then counted at once: frames, bytes and delivery
/// times (consecutive frames of one write share one histogram observation).
class delivery_batch {
 public:
  explicit delivery_batch(std::int64_t now_ns) : now_ns_(now_ns) {}

  void add(std::size_t bytes, std::int64_t origin_ns) {
    ++frames_;
    bytes_ += bytes;
    if (origin_ns == 0) {
      return;
    }
    if (run_ > 0 && origin_ns != origin_) {
      pending_.push(origin_, run_);
      run_ = 0;
    }
    origin_ = origin_ns;
    ++run_;
  }

  /// Adds the batch to `t` (transport `kind`); returns the frames counted.
  std::uint64_t commit(traffic_stats& t, transport kind) {
    auto i = open_connection::index(kind);
    if (frames_ > 0) {
      t.frames[i].fetch_add(frames_, std::memory_order_relaxed);
      t.bytes[i].fetch_add(bytes_, std::memory_order_relaxed);
    }
    if (run_ > 0) {
      pending_.push(origin_, run_);
    }
    for (std::size_t k = 0; k < pending_.size; ++k) {
      auto d = now_ns_ - pending_.origins[k];
      t.delivery.observe(std::chrono::nanoseconds{d > 0 ? d : 0}, pending_.counts[k]);
    }
    return frames_;
  }

 private:
  // Runs of frames per write; a batch rarely spans more than a few writes, and past the last
  // slot runs merge into it (their times differ by the time between those writes).
  struct runs {
    static constexpr std::size_t cap = 8;
    std::array<std::int64_t, cap> origins{};
    std::array<std::uint64_t, cap> counts{};
    std::size_t size = 0;
    void push(std::int64_t origin, std::uint64_t n) {
      if (size == cap) {
        counts[cap - 1] += n;
        return;
      }
      origins[size] = origin;
      counts[size] = n;
      ++size;
    }
  };

  std::int64_t now_ns_;
  std::uint64_t frames_ = 0;
  std::uint64_t bytes_ = 0;
  std::int64_t origin_ = 0;
  std::uint64_t run_ = 0;
  runs pending_;
};

}  // namespace weir::gateway

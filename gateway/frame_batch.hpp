// weir::gateway::gather_batch — the hub sessions' one batched writer: up to 64 queued frames
// framed into one gather write, counted for the traffic figures, with a batch whose frames all
// went stale dropped and the next one tried; and send_or_keep, the write tried at once with
// the rest kept for watched_write. The WebSocket and SSE hub sessions differ only in what
// precedes the frames (pending pongs; a chunk-size line and a run's start) and in each frame's
// framing (a WebSocket header; `data: ` and the event's end), which they pass in.
// Internal to gateway/ (Beast's buffers).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "actors/frame_sink.hpp"
#include "gateway/beast.hpp"
#include "gateway/outbound_queue.hpp"
#include "gateway/traffic_stats.hpp"
#include "gateway/write_now.hpp"

namespace weir::gateway {

/// The most frames one gather write takes from a session's queue.
inline constexpr std::size_t max_frames_per_write = 64;

/// Fills `pieces` (cleared first) with the next batch of `queue`: `begin()` adds what precedes
/// the frames and returns whether that alone is worth a write; `frame(f)` adds one live frame's
/// pieces and returns its bytes on the wire. The frames are counted in `traffic` (transport
/// `kind`) and the session's `frames_sent`. When every frame of a batch went stale and nothing
/// precedes them, that batch is dropped and the next one tried. Returns false when there is
/// nothing to write (the queue is empty); the batch otherwise stays queued until the caller's
/// queue.finish_batch() once it is written.
template <class Begin, class Frame>
bool gather_batch(outbound_queue& queue, std::vector<asio::const_buffer>& pieces,
                  traffic_stats& traffic, transport kind, std::atomic<std::uint64_t>& frames_sent,
                  Begin&& begin, Frame&& frame) {
  for (;;) {
    pieces.clear();
    const bool worth = begin();
    delivery_batch counted{actors::steady_now_ns()};
    const auto live = queue.start_batch(max_frames_per_write, [&](const actors::outbound_frame& f) {
      counted.add(frame(f), f.origin_ns);
    });
    frames_sent.fetch_add(counted.commit(traffic, kind), std::memory_order_relaxed);
    if (worth || live > 0) {
      return true;
    }
    queue.finish_batch();
    if (queue.empty()) {
      return false;
    }
  }
}

/// Writes `pieces` now when the socket takes them all (true; or true with `ec` set on an
/// error). Otherwise keeps the rest in `unsent`, copying what lay in the caller's short-lived
/// `scratch` (frame headers, a chunk-size line), and returns false: the caller then hands
/// unsent.pieces to watched_write.
inline bool send_or_keep(tcp::socket& sock, std::vector<asio::const_buffer>& pieces,
                         unsent_batch& unsent, const void* scratch, std::size_t scratch_size,
                         beast::error_code& ec) {
  if (write_now(sock, pieces, ec) || ec) {
    return true;
  }
  unsent.keep(pieces, scratch, scratch_size);
  return false;
}

}  // namespace weir::gateway

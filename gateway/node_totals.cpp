// This node's running totals (see the header): read from counters others keep, never counted
// here, so the admin page adds no work to the paths it watches.
#include "gateway/node_totals.hpp"

#include "actors/runtime.hpp"
#include "core/latency_histogram.hpp"
#include "gateway/server_context.hpp"

namespace weir::gateway {

std::uint64_t writes_total(server_context& ctx) {
  // The write-latency histogram observes every write once, at its answer: its count is the
  // total, and /metrics' weir_write_duration_seconds_count is the same figure.
  const auto& h = ctx.rt.write_latency();
  std::uint64_t n = 0;
  for (std::size_t i = 0; i <= core::latency_histogram::bounds.size(); ++i) {
    n += h.bucket(i);
  }
  return n;
}

std::uint64_t frames_total(server_context& ctx) {
  // The sessions count what they hand to sockets per transport (traffic_stats), as /metrics'
  // weir_frames_sent_total shows them.
  std::uint64_t n = 0;
  for (const auto& f : ctx.traffic.frames) {
    n += f.load(std::memory_order_relaxed);
  }
  return n;
}

}  // namespace weir::gateway

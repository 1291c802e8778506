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

std::uint64_t frames_total(server_context&) {
  // Nothing counts frames handed to sockets yet: the sessions' traffic counters are being added
  // (one per transport). Until they land the page shows 0 frames and a flat frames/s chart;
  // then this returns their sum over the transports.
  return 0;
}

}  // namespace weir::gateway

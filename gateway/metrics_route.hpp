// weir::gateway metrics route — GET /metrics: this node's gauges, counters and histograms in the
// Prometheus text exposition format (version 0.0.4), for an operator's Prometheus.
// Internal to gateway/.
#pragma once

#include <string>

namespace weir::gateway {

struct server_context;

/// The Content-Type of the exposition format.
inline constexpr const char* prometheus_content_type = "text/plain; version=0.0.4; charset=utf-8";

/// The metrics as this node sees them now (docs/operations.md#metrics).
std::string prometheus_metrics(server_context& ctx);

}  // namespace weir::gateway

// GET /metrics: the runtime's figures, the cluster's members as this node sees them, and change
// capture, as Prometheus gauges. Written by hand: the format is a few lines of text per metric,
// and no Debian package offers a C++ client that would not pull in its own HTTP server.
#include "gateway/metrics_route.hpp"

#include <cstdint>
#include <cstdio>
#include <string_view>

#include "actors/cluster_link.hpp"
#include "actors/runtime.hpp"
#include "core/latency_histogram.hpp"
#include "gateway/server_context.hpp"
#include "store/durable_store.hpp"

namespace weir::gateway {
namespace {

/// A label value, escaped as the format wants (backslash, double quote, newline).
std::string label(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

struct writer {
  std::string out;
  /// # HELP and # TYPE, once per metric name.
  void head(std::string_view name, std::string_view type, std::string_view help) {
    out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  }
  void sample(std::string_view name, std::string_view labels, std::uint64_t value) {
    out.append(name);
    if (!labels.empty()) {
      out.append("{").append(labels).append("}");
    }
    out.append(" ").append(std::to_string(value)).append("\n");
  }
  void gauge(std::string_view name, std::string_view help, std::uint64_t value) {
    head(name, "gauge", help);
    sample(name, {}, value);
  }
};

}  // namespace

std::string prometheus_metrics(server_context& ctx) {
  writer w;
  auto s = ctx.rt.stats();
  w.gauge("weir_hub_connections", "Arc hub connections open on this node.", s.hub_connections);
  w.gauge("weir_subscriptions", "Subscriptions held on this node (hub, direct, windowed).",
          s.subscriptions);
  w.head("weir_units", "gauge",
         "Ownership units in memory: owned here, or served here from another member's watch.");
  auto remote = s.remote_units;
  w.sample("weir_units", R"(kind="owned")", s.units > remote ? s.units - remote : 0);
  w.sample("weir_units", R"(kind="remote")", remote);
  w.gauge("weir_query_keys", "Materialized query results (query actors) alive.", s.query_keys);
  w.gauge("weir_upstream_watches", "Watches this node holds on other members.", s.upstreams);
  w.gauge("weir_replica_watches", "Watches other members hold on this node.", s.replicas);
  w.gauge("weir_held_row_bytes", "JSON bytes of the rows this node's query actors hold.",
          s.held_row_bytes > 0 ? static_cast<std::uint64_t>(s.held_row_bytes) : 0);
  w.gauge("weir_writes_in_flight", "Writes submitted and not yet answered.",
          ctx.rt.in_flight_writes());
  {
    // Cumulative buckets, as the format wants; +Inf equals the count.
    const auto& h = ctx.rt.write_latency();
    constexpr std::string_view name = "weir_write_duration_seconds";
    w.head(name, "histogram",
           "Writes from their submission on this node to their answer (durable, or refused).");
    std::uint64_t total = 0;
    for (std::size_t i = 0; i <= core::latency_histogram::bounds.size(); ++i) {
      total += h.bucket(i);
      std::string le = "+Inf";
      if (i < core::latency_histogram::bounds.size()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", core::latency_histogram::bounds[i]);
        le = buf;
      }
      w.sample("weir_write_duration_seconds_bucket", "le=\"" + le + "\"", total);
    }
    char sum[48];
    std::snprintf(sum, sizeof sum, "%.6f", h.sum_seconds());
    w.out.append("weir_write_duration_seconds_sum ").append(sum).append("\n");
    w.sample("weir_write_duration_seconds_count", {}, total);
  }
  w.gauge("weir_draining", "1 while this node drains.", ctx.draining ? 1 : 0);
  auto cap = ctx.rt.store_capture();
  w.head("weir_store_info", "gauge", "The store backend (label backend).");
  w.sample("weir_store_info", "backend=\"" + label(ctx.rt.store_backend()) + "\"", 1);
  w.gauge("weir_change_capture_enabled", "1 when this store captures other programs' changes.",
          cap.enabled ? 1 : 0);
  w.gauge("weir_change_capture_reading", "1 while this member reads the replication stream.",
          cap.reading ? 1 : 0);
  w.gauge("weir_change_capture_lag_bytes",
          "WAL between the server's end and what was applied (on the reader; 0 elsewhere).",
          cap.lag_bytes);
  w.head("weir_change_capture_transactions_total", "counter",
         "Other programs' transactions this member handed on while reading.");
  w.sample("weir_change_capture_transactions_total", {}, cap.transactions);
  auto* link = ctx.rt.cluster();
  w.gauge("weir_ready", "1 when /readyz answers 200.",
          !ctx.draining && (!link || link->ready()) ? 1 : 0);
  if (link) {
    w.head("weir_member_up", "gauge",
           "Each member this node knows, 1 while it answers heartbeats (this node always).");
    for (const auto& id : link->members()) {
      w.sample("weir_member_up", "member=\"" + label(id) + "\"", link->member_up(id) ? 1 : 0);
    }
    w.gauge("weir_membership_epoch",
            "The epoch of the owners this node routes by (elastic membership; 0 for a list).",
            link->owners_epoch());
  }
  return std::move(w.out);
}

}  // namespace weir::gateway

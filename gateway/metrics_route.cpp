// GET /metrics: the runtime's figures, the sessions' traffic (connections, frames, bytes,
// delivery times, closes at the bounds), the store's group commits, the cluster's members and
// watch streams as this node sees them, and change capture, in the Prometheus text format. Written
// by hand: the format is a few lines of text per metric, and no Debian package offers a C++ client
// that would not pull in its own HTTP server.
#include "gateway/metrics_route.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

#include "actors/cluster_link.hpp"
#include "actors/runtime.hpp"
#include "core/count_histogram.hpp"
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
  /// A histogram's cumulative buckets, sum and count (+Inf equals the count).
  template <class Histogram, class Le, class Sum>
  void histogram(std::string_view name, std::string_view help, const Histogram& h, Le le_of,
                 Sum sum) {
    head(name, "histogram", help);
    std::uint64_t total = 0;
    std::string bucket = std::string{name} + "_bucket";
    for (std::size_t i = 0; i <= Histogram::bounds.size(); ++i) {
      total += h.bucket(i);
      auto le = i < Histogram::bounds.size() ? le_of(Histogram::bounds[i]) : std::string{"+Inf"};
      sample(bucket, "le=\"" + le + "\"", total);
    }
    out.append(name).append("_sum ").append(sum).append("\n");
    sample(std::string{name} + "_count", {}, total);
  }
};

std::string seconds_label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string seconds_sum(const core::latency_histogram& h) {
  char sum[48];
  std::snprintf(sum, sizeof sum, "%.6f", h.sum_seconds());
  return sum;
}

constexpr std::array<std::string_view, 6> encoding_labels{
    R"(protocol="arc",mode="legacy")",  R"(protocol="arc",mode="full")",
    R"(protocol="arc",mode="delta")",   R"(protocol="arc",mode="patch")",
    R"(protocol="ag-ui",mode="state")", R"(protocol="windowed",mode="windowed")"};

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
  w.histogram("weir_write_duration_seconds",
              "Writes from their submission on this node to their answer (durable, or refused).",
              ctx.rt.write_latency(), seconds_label, seconds_sum(ctx.rt.write_latency()));
  if (const auto* groups = ctx.rt.commit_group_sizes()) {
    w.histogram(
        "weir_commit_batch_writes",
        "Write batches made durable together by one group commit (one fsync or transaction).",
        *groups, [](std::uint64_t v) { return std::to_string(v); }, std::to_string(groups->sum()));
  }
  w.head("weir_dataset_passes_total", "counter",
         "Passes over a dataset's records made on a loader thread instead of the unit's: index "
         "builds for a new sort, and filter passes (a first count, or a window's rows).");
  w.sample("weir_dataset_passes_total", R"(kind="index")", s.dataset_passes[0]);
  w.sample("weir_dataset_passes_total", R"(kind="filter")", s.dataset_passes[1]);
  w.gauge("weir_dataset_passes_running",
          "Filter passes on loader threads now (one per dataset at most; the others wait).",
          s.filter_passes_running);
  w.gauge(
      "weir_dataset_index_builds_running",
      "Index builds on loader threads now (a new sort's, or a filtered field's after its pass).",
      s.index_builds_running);
  w.gauge("weir_store_queue_depth", "Write batches queued for the store or being committed.",
          s.store_queued);
  const auto& t = ctx.traffic;
  w.head("weir_connections", "gauge", "Streaming connections open, by transport.");
  for (std::size_t i = 0; i < transport_count; ++i) {
    auto n = t.open[i].load(std::memory_order_relaxed);
    w.sample("weir_connections", "transport=\"" + std::string{transport_names[i]} + "\"",
             n > 0 ? static_cast<std::uint64_t>(n) : 0);
  }
  w.head("weir_frames_sent_total", "counter",
         "Frames handed to client sockets, by transport (a windowed `changes` frame is one).");
  for (std::size_t i = 0; i < transport_count; ++i) {
    w.sample("weir_frames_sent_total", "transport=\"" + std::string{transport_names[i]} + "\"",
             t.frames[i].load(std::memory_order_relaxed));
  }
  w.head("weir_bytes_sent_total", "counter",
         "Frame bytes handed to client sockets, by transport (payload and SSE framing; not "
         "WebSocket headers, HTTP chunk lines or TLS).");
  for (std::size_t i = 0; i < transport_count; ++i) {
    w.sample("weir_bytes_sent_total", "transport=\"" + std::string{transport_names[i]} + "\"",
             t.bytes[i].load(std::memory_order_relaxed));
  }
  w.histogram("weir_delivery_duration_seconds",
              "Hub, direct and AG-UI frames from their write reaching this node (staged by the "
              "owner, or the owner's update arriving) to the frame's hand-off to the socket.",
              t.delivery, seconds_label, seconds_sum(t.delivery));
  w.head("weir_closes_total", "counter",
         "Connections closed at a bound: the close code (or windowed reason) and which bound.");
  for (std::size_t i = 0; i < bound_close_count; ++i) {
    const auto& l = bound_close_labels[i];
    w.sample("weir_closes_total",
             "code=\"" + std::string{l.code} + "\",reason=\"" + std::string{l.reason} + "\"",
             t.closes[i].load(std::memory_order_relaxed));
  }
  w.gauge("weir_outbound_queued_bytes",
          "Bytes queued for client sockets and not yet written, over every connection.",
          ctx.queued_total());
  w.head("weir_subscriptions_by_encoding", "gauge",
         "Client subscriptions in this node's query actors, by protocol and transfer mode.");
  for (std::size_t i = 0; i < encoding_labels.size(); ++i) {
    w.sample("weir_subscriptions_by_encoding", encoding_labels[i], s.subscriptions_by_encoding[i]);
  }
  w.head("weir_build_info", "gauge", "This build (label version); always 1.");
  w.sample("weir_build_info", "version=\"" + label(ctx.opts.version) + "\"", 1);
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
  w.head("weir_change_capture_whole_datasets_total", "counter",
         "Datasets of units this member had read again whole because one transaction changed "
         "more of their rows than the reader keeps the keys of.");
  w.sample("weir_change_capture_whole_datasets_total", {}, cap.whole_datasets);
  w.head("weir_change_capture_whole_nodes_total", "counter",
         "Transactions that changed so many datasets, or truncated weir_records, that every "
         "unit held on every member was read again whole.");
  w.sample("weir_change_capture_whole_nodes_total", {}, cap.whole_nodes);
  w.gauge("weir_change_capture_error",
          "1 while change capture is enabled and not running for a reason other than another "
          "member reading (the reason is changeCapture.error in /cluster/health).",
          cap.enabled && !cap.error.empty() ? 1 : 0);
  auto conns = ctx.rt.store_connections();
  w.head("weir_store_reconnects_total", "counter",
         "Broken database sessions the store replaced with fresh ones.");
  w.sample("weir_store_reconnects_total", {}, conns.reconnects);
  w.gauge("weir_store_unreachable",
          "1 while the last statement that needed the database could not reach it, even on a "
          "fresh connection (the reason is storeConnections.error in /cluster/health).",
          conns.error.empty() ? 0 : 1);
  w.head("weir_records_skipped_total", "counter",
         "Rows read from the store (unit loads, change capture) that are not records or are "
         "outside the record limits, skipped rather than served.");
  w.sample("weir_records_skipped_total", {}, s.skipped_records);
  auto* link = ctx.rt.cluster();
  w.gauge("weir_ready", "1 when /readyz answers 200.",
          !ctx.draining && (!link || link->ready()) ? 1 : 0);
  if (link) {
    w.head("weir_member_up", "gauge",
           "Each member this node knows, 1 while it answers heartbeats (this node always).");
    for (const auto& id : link->members()) {
      w.sample("weir_member_up", "member=\"" + label(id) + "\"", link->member_up(id) ? 1 : 0);
    }
    w.head("weir_peer_stream_open", "gauge",
           "1 while this node's watch stream to the member runs (it runs while it holds watches).");
    std::vector<std::pair<std::string, actors::cluster_link::peer_stream_stats>> streams;
    for (const auto& id : link->members()) {
      if (id != link->self_id()) {
        streams.emplace_back(id, link->peer_stream(id));
      }
    }
    for (const auto& [id, p] : streams) {
      w.sample("weir_peer_stream_open", "member=\"" + label(id) + "\"", p.open ? 1 : 0);
    }
    w.head("weir_peer_watches", "gauge", "Watches this node holds on each member.");
    for (const auto& [id, p] : streams) {
      w.sample("weir_peer_watches", "member=\"" + label(id) + "\"", p.watches);
    }
    w.head("weir_peer_stream_events_total", "counter",
           "Snapshots and updates received over the member's watch streams.");
    for (const auto& [id, p] : streams) {
      w.sample("weir_peer_stream_events_total", "member=\"" + label(id) + "\"", p.events);
    }
    w.head("weir_peer_streams_started_total", "counter",
           "Watch streams started to the member (restarts after a stream ended count too).");
    for (const auto& [id, p] : streams) {
      w.sample("weir_peer_streams_started_total", "member=\"" + label(id) + "\"", p.started);
    }
    w.head("weir_peer_stream_errors_total", "counter",
           "Watch streams to the member that ended with an error status.");
    for (const auto& [id, p] : streams) {
      w.sample("weir_peer_stream_errors_total", "member=\"" + label(id) + "\"", p.errors);
    }
    w.head("weir_peer_stream_held_bytes", "gauge",
           "Bytes of the member's watch events received and not yet applied here (bounded by "
           "cluster.maxStreamQueueBytes).");
    for (const auto& [id, p] : streams) {
      w.sample("weir_peer_stream_held_bytes", "member=\"" + label(id) + "\"", p.held_bytes);
    }
    w.head("weir_peer_stream_pauses_total", "counter",
           "Times this node stopped reading the member's watch stream because its events "
           "received and not yet applied reached cluster.maxStreamQueueBytes.");
    for (const auto& [id, p] : streams) {
      w.sample("weir_peer_stream_pauses_total", "member=\"" + label(id) + "\"", p.pauses);
    }
    w.gauge("weir_membership_epoch",
            "The epoch of the owners this node routes by (elastic membership; 0 for a list).",
            link->owners_epoch());
  }
  return std::move(w.out);
}

}  // namespace weir::gateway

// Node assembly. Start: store → actors → gRPC → HTTP. Stop is the reverse, with the drain in
// front so nothing acknowledged is lost and nothing in flight is cut off.
#include "apps/node.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "actors/runtime.hpp"
#include "cluster/cluster_node.hpp"
#include "cluster/grpc_server.hpp"
#include "gateway/http_server.hpp"
#include "log/log.hpp"
#include "store/postgres_leases.hpp"
#include "store/postgres_store.hpp"
#include "store/rocksdb_store.hpp"

namespace weir::app {

const char* const weir_version = "0.1.0";

struct node::impl {
  config::node_config cfg;
  std::unique_ptr<store::durable_store> store;
  // The cluster outlives the runtime on every path (remote shards call it as they stop).
  std::unique_ptr<cluster::cluster_node> cluster;
  std::unique_ptr<actors::runtime> rt;
  std::unique_ptr<cluster::grpc_server> grpc;
  std::unique_ptr<gateway::http_server> http;
  bool stopped = false;
};

namespace {

/// The cores this process may run on (its affinity mask), at most `cap`; 1 when unknown.
int usable_cores(int cap) {
  cpu_set_t set;
  CPU_ZERO(&set);
  int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  return std::clamp(n, 1, cap);
}

actors::runtime_options runtime_options_from(const config::node_config& c) {
  actors::runtime_options o;
  o.actor_threads = c.actor_threads;
  o.max_pending_writes_per_unit = c.max_pending_writes_per_unit;
  o.unit_idle_ms = c.unit_idle_ms;
  o.idempotency_key_ttl_ms = c.idempotency_key_ttl_ms;
  o.max_idempotency_keys_per_unit = c.max_idempotency_keys_per_unit;
  o.captured_refreshes_in_flight =
      std::clamp<std::size_t>(c.store_queue_capacity / 4, 1, std::size_t{64});
  o.owner_unavailable_error_ms = c.cluster.owner_unavailable_error_ms;
  o.records.max_bytes = c.records.max_bytes;
  o.records.max_members = c.records.max_members;
  o.records.max_key_bytes = c.records.max_key_bytes;
  auto& h = o.hub;
  const auto& l = c.hub;
  h.keep_alive_interval_ms = l.keep_alive_interval_ms;
  h.max_hub_connections = l.max_hub_connections;
  h.max_hub_connections_per_caller = l.max_hub_connections_per_caller;
  h.max_hub_connections_per_address = l.max_hub_connections_per_address;
  h.max_subscriptions_per_connection = l.max_subscriptions_per_connection;
  h.max_subscriptions = l.max_subscriptions;
  h.max_subscriptions_per_caller = l.max_subscriptions_per_caller;
  h.max_inbound_frames = l.max_inbound_frames;
  h.max_outbound_frames = l.max_outbound_frames;
  h.max_inbound_frame_bytes = l.max_inbound_frame_bytes;
  h.max_outbound_frame_bytes = l.max_outbound_frame_bytes;
  h.max_outbound_queue_bytes = l.max_outbound_queue_bytes;
  h.max_tombstones = l.max_tombstones;
  h.max_sort_indexes_per_dataset = l.max_sort_indexes_per_dataset;
  h.max_objects_per_space_window = c.windowed.max_objects_per_space_window;
  h.tombstone_retention_ms = l.tombstone_retention_ms;
  h.health_interval_ms = l.health_interval_ms;
  h.agent_run_max_ms = l.agent_run_max_ms;
  h.shutdown_timeout_ms = l.shutdown_timeout_ms;
  h.authentication = c.auth.authenticator != nullptr;
  return o;
}

}  // namespace

node::node(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

core::result<std::unique_ptr<node>> node::start(config::node_config cfg) {
  auto p = std::make_unique<impl>();
  p->cfg = std::move(cfg);
  if (p->cfg.store_backend == "postgres") {
    if (p->cfg.postgres_url.empty()) {
      return core::make_error("store.open_failed",
                              "store.backend is postgres: set store.postgres.url or the "
                              "environment variable WEIR_POSTGRES_URL");
    }
    auto store = store::postgres_store::open({p->cfg.postgres_url, p->cfg.store_queue_capacity,
                                              p->cfg.postgres_change_capture,
                                              p->cfg.cluster.node_id, p->cfg.cluster.elastic()});
    if (!store) {
      return std::move(store).error();
    }
    p->store = std::move(store.value());
  } else {
    if (p->cfg.cluster.elastic()) {
      return core::make_error("config.invalid",
                              "elastic membership (cluster.advertise without a member list) "
                              "needs store.backend: postgres, where the members register");
    }
    auto store = store::rocksdb_store::open({p->cfg.data_dir, p->cfg.store_queue_capacity, true});
    if (!store) {
      return std::move(store).error();
    }
    p->store = std::move(store.value());
  }
  p->rt =
      std::make_unique<actors::runtime>(runtime_options_from(p->cfg), p->cfg.queries, *p->store);
  p->grpc = std::make_unique<cluster::grpc_server>(
      cluster::grpc_options{p->cfg.grpc_address, p->cfg.grpc_port, p->cfg.max_body_bytes,
                            p->cfg.peer_address, p->cfg.peer_port, p->cfg.auth.authenticator,
                            p->cfg.auth.spaces, p->cfg.max_data_calls_in_flight},
      *p->rt);
  if (const auto& c = p->cfg.cluster; c.clustered()) {
    cluster::cluster_options co;
    co.self = c.node_id;
    for (const auto& m : c.members) {
      co.members.push_back({m.id, m.peer, m.http});
    }
    if (c.elastic()) {
      co.members.push_back({c.node_id, c.advertise_peer, c.advertise_http});
      co.leases = std::make_shared<store::postgres_leases>(store::postgres_leases::options{
          p->cfg.postgres_url, c.node_id, c.advertise_peer, c.advertise_http, c.lease_ms});
      co.lease_ms = c.lease_ms;
      co.lease_renew_ms = c.lease_renew_ms;
    }
    co.heartbeat_interval_ms = c.heartbeat_interval_ms;
    co.suspect_after_ms = c.suspect_after_ms;
    co.down_after_ms = c.down_after_ms;
    co.forward_timeout_ms = c.forward_timeout_ms;
    co.max_stream_queue_bytes = c.max_stream_queue_bytes;
    co.version = weir_version;
    co.auth = {c.token, c.tls.cert_pem, c.tls.key_pem, c.tls.ca_pem};
    p->cluster = std::make_unique<cluster::cluster_node>(std::move(co), *p->rt);
    p->grpc->serve_cluster(*p->cluster);
    p->rt->set_cluster(p->cluster.get());
  }
  gateway::http_options ho;
  ho.address = p->cfg.http_address;
  ho.port = p->cfg.http_port;
  // Unset: one I/O thread per core this process may run on (its affinity mask, so a node pinned
  // with taskset or a CPU set gets as many as it has), at most 16.
  ho.io_threads = p->cfg.io_threads > 0 ? p->cfg.io_threads : usable_cores(16);
  ho.max_body_bytes = p->cfg.max_body_bytes;
  ho.version = weir_version;
  ho.max_connections = p->cfg.max_connections;
  ho.max_connections_per_client = p->cfg.max_connections_per_client;
  ho.send_stall = std::chrono::milliseconds{p->cfg.send_stall_timeout_ms};
  ho.allowed_origins = p->cfg.hub.allowed_origins;
  ho.allow_null_origin = p->cfg.hub.allow_null_origin;
  ho.windowed_keep_alive_ms = p->cfg.windowed.keep_alive_ms;
  ho.windowed_close_deadline = std::chrono::milliseconds{p->cfg.windowed.close_deadline_ms};
  ho.windowed_max_queue_bytes = p->cfg.windowed.max_queue_bytes;
  ho.auth = p->cfg.auth.authenticator;
  ho.hubs = p->cfg.auth.hubs;
  ho.admin_role = p->cfg.auth.admin_role;
  ho.spaces = p->cfg.auth.spaces;
  ho.trusted_proxies = p->cfg.auth.trusted_proxies;
  p->http = std::make_unique<gateway::http_server>(ho, *p->rt);
  // Every port bound before this member registers: one that cannot serve never joins.
  if (auto r = p->http->listen(); !r) {
    return std::move(r).error();
  }
  if (auto r = p->grpc->start(); !r) {
    return std::move(r).error();
  }
  if (p->cluster) {
    // Elastic membership: registered, and routing by the owners on record, before any traffic.
    if (auto r = p->cluster->join(); !r) {
      return core::make_error("cluster.join_failed",
                              "cannot register this member in PostgreSQL: " + r.error().message);
    }
    p->cluster->start();
  }
  if (auto r = p->http->start(); !r) {
    return std::move(r).error();
  }
  // Last: what other programs commit reaches owners only once every route to them is up. A
  // single node names itself by its HTTP address.
  auto member = p->cfg.cluster.clustered()
                    ? p->cfg.cluster.node_id
                    : p->cfg.http_address + ":" + std::to_string(p->http->port());
  p->store->start_capture(
      member, [rt = p->rt.get()](store::captured_txn txn, std::function<void(bool)> applied) {
        rt->take_captured(std::move(txn), std::move(applied));
      });
  return std::unique_ptr<node>(new node(std::move(p)));
}

node::~node() {
  stop();
}

std::uint16_t node::http_port() const {
  return impl_->http ? impl_->http->port() : 0;
}
std::uint16_t node::peer_port() const {
  return impl_->grpc ? impl_->grpc->peer_port() : 0;
}

std::uint16_t node::grpc_port() const {
  return impl_->grpc ? impl_->grpc->port() : 0;
}
actors::runtime& node::runtime() {
  return *impl_->rt;
}
const config::node_config& node::config() const {
  return impl_->cfg;
}

void node::stop() {
  auto& p = *impl_;
  if (p.stopped) {
    return;
  }
  p.stopped = true;
  auto timeout = p.cfg.hub.shutdown_timeout_ms;
  auto started = std::chrono::steady_clock::now();
  auto deadline = started + std::chrono::milliseconds{timeout};
  auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return static_cast<long long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t)
            .count());
  };
  if (p.store) {
    // Capture ends first, while every route to the owners still works: what it handed on is
    // answered, and what it did not is read again by the member that reads next.
    p.store->stop_capture();
    if (p.rt) {
      p.rt->stop_captured_refreshes();  // what waits is read again, not run through the drain
    }
  }
  if (p.cluster) {
    // Peers and /cluster/health see it at once. With elastic membership this member stops
    // owning units first, and the others take them over, before its watch streams end.
    auto wait = std::min<std::int64_t>(timeout / 2, 2 * p.cfg.cluster.lease_renew_ms + 1000);
    p.cluster->set_draining(wait);
  }
  if (p.grpc) {
    // Gateways watching this node's units learn now, rather than when heartbeats fail.
    p.grpc->end_watch_streams();
  }
  if (p.http) {
    // What is left of the one deadline (set_draining may have used some of it).
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    p.http->drain(std::max<std::int64_t>(left, 0));
  }
  auto http_ms = ms_since(started);
  if (p.grpc) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    p.grpc->stop(std::max<std::int64_t>(0, left));
  }
  auto grpc_ms = ms_since(started);
  // Writes already accepted still become durable and get their answer.
  while (p.rt && p.rt->in_flight_writes() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  // Streams and heartbeats end before the actors do: a watch event must never reach an actor
  // whose system is gone. (Gateways watching this node see their streams end and wait for it.)
  if (p.cluster) {
    p.cluster->stop();
  }
  // Teardown, each step only once nothing after it can still call into it:
  // 1. I/O threads stop, but the io_context stays alive, so a completion an actor posts late
  //    is queued (and later destroyed) rather than touching freed memory;
  // 2. the store commits what is queued while the shards are alive to hear of it;
  // 3. every actor stops (health watches included: their sessions still exist) and the
  //    actor system goes; sessions notice and make no more actor calls;
  // 4. the gateway and gRPC objects go, then the runtime's data, then the store.
  if (p.http) {
    p.http->stop();
  }
  if (p.store) {
    p.store->stop();
  }
  if (p.rt) {
    p.rt->shutdown();
  }
  p.http.reset();
  p.grpc.reset();
  p.rt.reset();
  p.cluster.reset();
  p.store.reset();
  // For operators: where a slow stop spent its time (each figure is since the stop began).
  log::info("node stopped",
            {{"ms", ms_since(started)}, {"clientsDrainedMs", http_ms}, {"grpcStoppedMs", grpc_ms}});
}

}  // namespace weir::app

// cluster_node's /cluster/health: every member as this node sees it (state, figures from its
// last heartbeat answer, its own view), the store and its change capture, and whether the
// members' views agree.
#include <boost/json/serialize.hpp>

#include "actors/capture_health.hpp"
#include "cluster/cluster_node_impl.hpp"
#include "store/durable_store.hpp"

namespace weir::cluster {

std::pair<unsigned, std::string> cluster_node::health() const {
  namespace json = boost::json;
  auto views = view();
  json::array members;
  bool healthy = !impl_->draining;
  bool agree = true;
  auto now = clock_type::now();
  auto stats = impl_->rt.stats();
  for (auto& m : impl_->opts.members) {
    json::object o;
    o["id"] = m.id;
    o["peer"] = m.peer;
    o["http"] = m.http;
    json::object view;
    if (m.id == impl_->opts.self) {
      o["state"] = impl_->draining ? "draining" : "up";
      o["self"] = true;
      o["version"] = impl_->opts.version;
      o["units"] = stats.units > stats.remote_units ? stats.units - stats.remote_units : 0;
      o["connections"] = stats.hub_connections;
      o["subscriptions"] = stats.subscriptions;
      o["upstreams"] = stats.upstreams;
      o["replicas"] = stats.replicas;
      o["heldRowBytes"] = stats.held_row_bytes;
      o["lastSeenMs"] = 0;
      for (auto& v : views) {
        view[v.id] = v.state;
      }
    } else {
      auto& p = *impl_->peers.at(m.id);
      std::lock_guard lock{p.mu};
      auto state = impl_->state_of(p, now);
      bool reported = p.last_ok.has_value();
      o["state"] = state == "up" && p.last_status.draining() ? "draining" : state;
      o["self"] = false;
      healthy = healthy && state == "up" && !p.last_status.draining();
      if (reported) {
        // Figures are from its last heartbeat answer; lastSeenMs says how old that is.
        const auto& s = p.last_status;
        o["version"] = s.version();
        o["units"] = s.units();
        o["connections"] = s.connections();
        o["subscriptions"] = s.subscriptions();
        o["upstreams"] = s.upstreams();
        o["replicas"] = s.replicas();
        o["heldRowBytes"] = s.held_row_bytes();
        o["lastSeenMs"] =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - *p.last_ok).count();
        for (auto& v : s.view()) {
          view[v.id()] = v.state();
        }
      } else {
        for (auto* k : {"version", "units", "connections", "subscriptions", "upstreams", "replicas",
                        "heldRowBytes", "lastSeenMs"}) {
          o[k] = nullptr;
        }
      }
      if (state == "up") {
        for (auto& v : views) {
          auto* theirs = view.if_contains(v.id);
          agree = agree && theirs && theirs->is_string() && theirs->as_string() == v.state;
        }
      }
    }
    o["view"] = std::move(view);
    members.push_back(std::move(o));
  }
  json::object doc;
  doc["status"] = healthy ? "healthy" : "degraded";
  doc["self"] = impl_->opts.self;
  doc["store"] = impl_->rt.store_backend();
  doc["changeCapture"] = actors::capture_health(impl_->rt.store_capture());
  doc["viewsAgree"] = agree;
  doc["members"] = std::move(members);
  return {healthy ? 200u : 503u, json::serialize(doc)};
}

}  // namespace weir::cluster

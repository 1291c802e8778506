// cluster_node's /cluster/health: every member as this node sees it (state, figures from its
// last heartbeat answer, its own view), the store and its change capture, and whether the
// members' views agree.
#include <algorithm>

#include <boost/json/serialize.hpp>

#include "actors/store_health.hpp"
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
  auto owners = impl_->current_owners();
  std::vector<store::member_lease> leases;
  std::uint64_t epoch = 0;
  std::optional<clock_type::time_point> last_round;
  std::string lease_error;
  {
    std::lock_guard lock{impl_->owners_mu};
    leases = impl_->leases;
    epoch = impl_->epoch;
    last_round = impl_->last_round;
    lease_error = impl_->lease_error;
  }
  for (auto& m : impl_->current_members()) {
    json::object o;
    o["id"] = m.id;
    o["peer"] = m.peer;
    o["http"] = m.http;
    if (impl_->elastic()) {
      o["owner"] = owners && std::find(owners->begin(), owners->end(), m.id) != owners->end();
      auto l = std::find_if(leases.begin(), leases.end(),
                            [&](const store::member_lease& x) { return x.id == m.id; });
      if (l != leases.end()) {
        o["lease"] = {{"expiresInMs", l->expires_in_ms}, {"draining", l->draining}};
      } else {
        o["lease"] = nullptr;
      }
    }
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
      auto* pp = impl_->peer(m.id);
      if (!pp) {
        // An owner on record this node never reached (its lease row is gone).
        o["state"] = "down";
        o["self"] = false;
        healthy = false;
        o["view"] = std::move(view);
        members.push_back(std::move(o));
        continue;
      }
      auto& p = *pp;
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
  actors::add_store_health(doc, impl_->rt);
  doc["viewsAgree"] = agree;
  json::object membership;
  membership["mode"] = impl_->elastic() ? "leases" : "static";
  if (impl_->elastic()) {
    membership["epoch"] = epoch;
    json::array ids;
    if (owners) {
      for (const auto& id : *owners) {
        ids.emplace_back(id);
      }
    }
    membership["owners"] = std::move(ids);
    membership["leaseMs"] = impl_->opts.lease_ms;
    membership["lastRenewalMs"] =
        last_round
            ? json::value(
                  std::chrono::duration_cast<std::chrono::milliseconds>(now - *last_round).count())
            : json::value(nullptr);
    membership["error"] = lease_error.empty() ? json::value(nullptr) : json::value(lease_error);
    bool self_owner =
        owners && std::find(owners->begin(), owners->end(), impl_->opts.self) != owners->end();
    healthy = healthy && self_owner && last_round &&
              now - *last_round < std::chrono::milliseconds{impl_->opts.lease_ms};
    doc["status"] = healthy ? "healthy" : "degraded";
  }
  doc["membership"] = std::move(membership);
  doc["members"] = std::move(members);
  return {healthy ? 200u : 503u, json::serialize(doc)};
}

}  // namespace weir::cluster

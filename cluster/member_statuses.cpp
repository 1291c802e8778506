// cluster_node's side of the admin page (/ui): every member with the figures of its last
// heartbeat answer, and this node's traffic totals, which the gateway counts and Peer.Status
// reports to the others. The figures come from the heartbeats this node already sends, so the
// page costs the cluster no calls of its own.
#include <algorithm>

#include "cluster/cluster_node_impl.hpp"

namespace weir::cluster {

void cluster_node::set_local_totals(std::function<actors::traffic_totals()> f) {
  std::lock_guard lock{impl_->totals_mu};
  impl_->totals = std::move(f);
}

actors::traffic_totals cluster_node::local_totals() const {
  // Called under the lock: set_local_totals(nullptr) then returns only once no call still
  // reads the gateway's counters, which go with it. They are atomic loads, so holding it costs
  // nothing.
  std::lock_guard lock{impl_->totals_mu};
  return impl_->totals ? impl_->totals() : actors::traffic_totals{};
}

std::vector<actors::member_status> cluster_node::member_statuses() const {
  std::vector<actors::member_status> out;
  auto now = clock_type::now();
  auto owners = impl_->current_owners();
  for (auto& m : impl_->current_members()) {
    actors::member_status st;
    st.id = m.id;
    if (impl_->elastic()) {
      st.owner = owners && std::find(owners->begin(), owners->end(), m.id) != owners->end();
    }
    if (m.id == impl_->opts.self) {
      st.state = "up";
      st.self = true;
      st.draining = impl_->draining;
      out.push_back(std::move(st));
      continue;
    }
    auto* p = impl_->peer(m.id);
    if (!p) {
      st.state = "down";  // an owner on record this node never reached
      out.push_back(std::move(st));
      continue;
    }
    std::lock_guard lock{p->mu};
    st.state = impl_->state_of(*p, now);
    if (p->last_ok) {
      const auto& s = p->last_status;
      st.reported = true;
      st.draining = s.draining();
      st.units = s.units();
      st.query_keys = s.query_keys();
      st.connections = s.connections();
      st.subscriptions = s.subscriptions();
      st.totals = {s.writes_total(), s.frames_total()};
    }
    out.push_back(std::move(st));
  }
  return out;
}

}  // namespace weir::cluster

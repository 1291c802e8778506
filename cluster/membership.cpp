// cluster_node's membership: heartbeats to every other member (Peer.Status), the states they
// give (up / suspect / down), rendezvous ownership of units over the members, and readiness.
#include <algorithm>

#include "cluster/cluster_node_impl.hpp"
#include "core/rendezvous.hpp"
#include "store/durable_store.hpp"

namespace weir::cluster {

void cluster_node::impl::send_status(peer_state& p) {
  v1::StatusRequest req;
  req.set_from(opts.self);
  unary<v1::StatusRequest, v1::StatusReply>(
      std::move(req), std::max<std::int64_t>(100, opts.heartbeat_interval_ms),
      [&p](auto* ctx, auto* rq, auto* rp, auto cb) {
        p.peer_stub->async()->Status(ctx, rq, rp, std::move(cb));
      },
      [&p](const grpc::Status& st, v1::StatusReply& reply) {
        std::lock_guard lock{p.mu};
        p.status_in_flight = false;
        if (st.ok()) {
          p.last_ok = clock_type::now();
          p.last_status = std::move(reply);
        }
      },
      true);
}

void cluster_node::impl::heartbeat_loop() {
  std::unique_lock run_lock{run_mu};
  while (running) {
    run_lock.unlock();
    auto now = clock_type::now();
    for (auto* pp : member_peers()) {
      auto& p = *pp;
      watch_stream* to_cancel = nullptr;
      watch_stream* paused = nullptr;
      {
        std::lock_guard lock{p.mu};
        auto state = state_of(p, now);
        // The owner is back: re-open every watch. Not while it drains (it refuses new streams;
        // its watches re-open once it restarts).
        if (state == "up" && !p.stream && !p.watches.empty() && !p.last_status.draining()) {
          start_stream_locked(p);
        }
        if (state == "down" && p.stream && p.last_state != "down") {
          to_cancel = p.stream;  // a hung owner: let its watchers know
        }
        p.last_state = state;
        if (to_cancel) {
          paused = cancel_stream_locked(p);
        }
        if (!p.status_in_flight) {
          p.status_in_flight = true;
          send_status(p);
        }
      }
      end_paused_stream(paused);
    }
    run_lock.lock();
    run_cv.wait_for(run_lock, std::chrono::milliseconds{opts.heartbeat_interval_ms},
                    [this] { return !running; });
  }
}

std::vector<member_view> cluster_node::view() const {
  std::vector<member_view> out;
  auto now = clock_type::now();
  for (auto& m : impl_->current_members()) {
    if (m.id == impl_->opts.self) {
      out.push_back({m.id, "up"});
      continue;
    }
    auto* p = impl_->peer(m.id);
    if (!p) {
      out.push_back({m.id, "down"});
      continue;
    }
    std::lock_guard lock{p->mu};
    out.push_back({m.id, impl_->state_of(*p, now)});
  }
  return out;
}

std::vector<std::string> cluster_node::members() const {
  auto ids = impl_->current_owners();
  if (!ids || ids->empty()) {
    return {impl_->opts.self};
  }
  return *ids;
}

namespace {
/// True for this node; for another member, what `test` says of its entry under its lock.
template <class Test>
bool self_or_peer(const cluster_node::impl& in, const std::string& id, Test test) {
  if (id == in.opts.self) {
    return true;
  }
  auto* p = in.peer(id);
  if (!p) {
    return false;
  }
  std::lock_guard lock{p->mu};
  return test(*p);
}
}  // namespace

bool cluster_node::member_up(const std::string& id) const {
  return self_or_peer(*impl_, id, [this](const peer_state& p) {
    return impl_->state_of(p, clock_type::now()) == "up";
  });
}

actors::cluster_link::peer_stream_stats cluster_node::peer_stream(const std::string& id) const {
  peer_stream_stats out;
  self_or_peer(*impl_, id, [&out](const peer_state& p) {
    out.open = p.stream != nullptr;
    out.watches = p.watches.size();
    out.events = p.stream_events.load(std::memory_order_relaxed);
    out.started = p.streams_started.load(std::memory_order_relaxed);
    out.errors = p.stream_errors.load(std::memory_order_relaxed);
    out.held_bytes = p.credit ? p.credit->held_bytes() : 0;
    out.pauses = p.credit ? p.credit->pauses() : 0;
    return true;
  });
  return out;
}

bool cluster_node::is_member(const std::string& id) const {
  return self_or_peer(*impl_, id, [](const peer_state& p) { return p.member; });
}

std::optional<std::string> cluster_node::remote_owner(const store::unit_key& unit) const {
  auto ids = impl_->current_owners();
  if (!ids || ids->empty()) {
    return std::nullopt;  // elastic membership before its first round: join() runs first
  }
  const auto& owner =
      (*ids)[core::rendezvous_owner(*ids, core::unit_name(unit.space, unit.object))];
  if (owner == impl_->opts.self) {
    return std::nullopt;
  }
  return owner;
}

bool cluster_node::ready() const {
  if (impl_->elastic()) {
    // Ready while its lease is fresh: the owners it routes by are the record's.
    std::lock_guard lock{impl_->owners_mu};
    return impl_->last_round &&
           clock_type::now() - *impl_->last_round < std::chrono::milliseconds{impl_->opts.lease_ms};
  }
  std::size_t up = 0;
  for (auto& v : view()) {
    up += v.state == "up" ? 1 : 0;
  }
  return up * 2 > impl_->opts.members.size();
}

}  // namespace weir::cluster

// cluster_node's elastic membership: a thread renews this member's lease in PostgreSQL every
// leaseRenewMs (store::postgres_leases), opens channels to members it has not met, and moves
// units when the owners on record change (runtime::ownership_changed). Heartbeats still judge
// whether a member answers; the lease record decides who owns what, the same for every member.
#include <algorithm>
#include <cstdio>

#include "cluster/cluster_node_impl.hpp"
#include "log/log.hpp"

namespace weir::cluster {

void cluster_node::impl::lease_loop() {
  std::unique_lock run_lock{run_mu};
  while (running) {
    run_lock.unlock();
    // Back from rounds that failed for longer than a lease (the database was out of reach, for
    // every member perhaps): renew, but let the others renew too before judging whose lease
    // ran out, instead of recording owners from leases nobody could renew.
    bool settling = false;
    {
      std::lock_guard lock{owners_mu};
      settling = settle_until && clock_type::now() < *settle_until;
    }
    auto round = opts.leases->renew(draining.load(), !settling);
    if (!round) {
      std::lock_guard lock{owners_mu};
      auto now = clock_type::now();
      if (last_round && now - *last_round > std::chrono::milliseconds{opts.lease_ms}) {
        settle_until = now + std::chrono::milliseconds{opts.lease_ms};
      }
    }
    if (round) {
      apply_round(std::move(round.value()));
    } else {
      std::lock_guard lock{owners_mu};
      if (lease_error != round.error().message) {
        log::warn("cannot renew this member's lease",
                  {{"code", round.error().code}, {"error", round.error().message}});
      }
      lease_error = round.error().message;
    }
    {
      std::lock_guard lock{owners_mu};
      ++rounds;
    }
    rounds_cv.notify_all();
    run_lock.lock();
    run_cv.wait_for(run_lock, std::chrono::milliseconds{opts.lease_renew_ms},
                    [this] { return !running || lease_wake; });
    lease_wake = false;
  }
}

void cluster_node::impl::apply_round(store::membership_round round) {
  {
    std::unique_lock lock{peers_mu};
    for (const auto& l : round.leases) {
      if (l.id == opts.self) {
        continue;
      }
      bool owner = std::find(round.owners.begin(), round.owners.end(), l.id) != round.owners.end();
      bool member = l.live || owner;
      auto it = peers.find(l.id);
      if (it == peers.end()) {
        if (!member) {
          continue;
        }
        it = peers.emplace(l.id, make_peer({l.id, l.peer, l.http})).first;
      } else if (member && (it->second->addr.peer != l.peer || it->second->addr.http != l.http)) {
        // The member came back at another address (a rescheduled pod): a new channel. The old
        // entry stays alive for calls still holding it; its watches re-open on the new one.
        auto fresh = make_peer({l.id, l.peer, l.http});
        watch_stream* paused = nullptr;
        {
          std::lock_guard plock{it->second->mu};
          fresh->watches = std::move(it->second->watches);
          it->second->member = false;
          paused = cancel_stream_locked(*it->second);
        }
        end_paused_stream(paused);
        replaced.push_back(std::move(it->second));
        it->second = std::move(fresh);
      }
      std::lock_guard plock{it->second->mu};
      it->second->member = member;
      if (l.live && !it->second->last_ok) {
        // A member met through its lease renewed it within leaseMs: count it up until
        // heartbeats say otherwise, so the first writes to its units need not wait for one.
        it->second->last_ok = clock_type::now();
      }
    }
    // Members whose rows are gone (they left) and that own nothing stop being asked.
    for (auto& [id, p] : peers) {
      bool listed = std::any_of(round.leases.begin(), round.leases.end(),
                                [&](const store::member_lease& l) { return l.id == id; });
      bool owner = std::find(round.owners.begin(), round.owners.end(), id) != round.owners.end();
      if (!listed && !owner) {
        std::lock_guard plock{p->mu};
        p->member = false;
      }
    }
  }
  bool changed = false;
  bool reload = false;
  auto now = clock_type::now();
  {
    std::lock_guard lock{owners_mu};
    changed = round.epoch != epoch;
    // Owners this node never saw (the epoch skipped one, e.g. its lease lapsed and another
    // member took its units meanwhile), or a lapse of its own lease: the units it holds may
    // have had writes it did not see. It loads them again.
    reload = epoch != 0 &&
             (round.epoch > epoch + 1 ||
              (last_round && now - *last_round > std::chrono::milliseconds{opts.lease_ms}));
    if (changed) {
      epoch = round.epoch;
      owner_ids = std::make_shared<const std::vector<std::string>>(std::move(round.owners));
    }
    leases = std::move(round.leases);
    last_round = now;
    lease_error.clear();
  }
  if (changed || reload) {
    // reload: this member missed a change of owners, so the units it holds load again.
    log::info("cluster membership epoch", {{"epoch", round.epoch}, {"reload", reload}});
    rt.ownership_changed(reload);
  }
}

core::result<void> cluster_node::join() {
  if (!impl_->elastic()) {
    return {};
  }
  auto round = impl_->opts.leases->renew(false);
  if (!round) {
    return std::move(round).error();
  }
  impl_->apply_round(std::move(round.value()));
  return {};
}

bool cluster_node::elastic() const {
  return impl_->elastic();
}

std::uint64_t cluster_node::owners_epoch() const {
  std::lock_guard lock{impl_->owners_mu};
  return impl_->epoch;
}

owners_view cluster_node::owners() const {
  std::lock_guard lock{impl_->owners_mu};
  return {impl_->epoch, impl_->owner_ids};
}

std::vector<member_address> cluster_node::impl::current_members() const {
  if (!elastic()) {
    return opts.members;
  }
  std::vector<member_address> out;
  std::lock_guard lock{owners_mu};
  auto owned = [this](const std::string& id) {
    return owner_ids && std::find(owner_ids->begin(), owner_ids->end(), id) != owner_ids->end();
  };
  bool self_listed = false;
  for (const auto& l : leases) {
    if (l.live || owned(l.id)) {
      out.push_back({l.id, l.peer, l.http});
      self_listed = self_listed || l.id == opts.self;
    }
  }
  if (!self_listed && !opts.members.empty()) {
    out.push_back(opts.members.front());
  }
  if (owner_ids) {
    for (const auto& id : *owner_ids) {
      if (std::none_of(out.begin(), out.end(),
                       [&](const member_address& m) { return m.id == id; })) {
        out.push_back({id, "", ""});  // an owner whose lease row is gone
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const member_address& a, const member_address& b) { return a.id < b.id; });
  return out;
}

}  // namespace weir::cluster

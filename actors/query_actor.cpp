// The query actor: one per query key, on the unit's owner and on every gateway that serves the
// key through a watch. It holds the query's rows as the owner computed them (a bounded query's
// window, applied delta by delta; an unbounded query's matches, in an order index), turns each
// update into the protocol's frames once per transfer mode or projection in use, and hands every
// subscriber the same shared bytes. Remote gateways' watches (replicas) get the updates as they
// are.
#include "actors/query_state.hpp"

namespace weir::actors::query_impl {

bool is_windowed(const sub_entry& s) {
  return s.windowed_stream;
}

/// Removes subscription `token`; false when it was not here.
bool remove_sub(query_ptr self, std::uint64_t token) {
  auto& st = self->state;
  auto it = st.index.find(token);
  if (it == st.index.end()) {
    auto r = std::find_if(st.replicas.begin(), st.replicas.end(),
                          [token](const sub_entry& e) { return e.token == token; });
    if (r == st.replicas.end()) {
      return false;
    }
    st.replicas.erase(r);
    return true;
  }
  auto pos = it->second;
  st.index.erase(it);
  if (is_windowed(st.subs[pos])) {
    --st.windowed_subs;
    st.count_subscriptions(slot_count, -1);
  } else {
    --st.slot_subs[slot_of(st.subs[pos])];
    st.count_subscriptions(slot_of(st.subs[pos]), -1);
  }
  if (pos + 1 != st.subs.size()) {
    st.subs[pos] = std::move(st.subs.back());
    st.index[st.subs[pos].token] = pos;
  }
  st.subs.pop_back();
  return true;
}

/// Tells the shard that no subscription is left: when the last one just left, and after a reset
/// (a query actor handed to a unit's new owner may have lost them all on the way). A duplicate
/// is harmless: the shard retires the actor only if the sender is the key's current actor and
/// no subscribe is on its way to it (`seen`).
void went_idle(query_ptr self) {
  auto& st = self->state;
  if (st.subs.empty() && st.replicas.empty()) {
    self->send(st.shard, query_idle_msg{st.q->key, st.seen});
  }
}

/// Ends every windowed subscription with `closed{reason}`.
void close_windowed(query_ptr self, std::string_view reason) {
  auto& st = self->state;
  if (st.windowed_subs == 0) {
    return;
  }
  std::vector<std::uint64_t> gone;
  for (auto& s : st.subs) {
    if (is_windowed(s)) {
      if (auto w = s.windowed.lock()) {
        w->closed(reason);
      }
      gone.push_back(s.token);
    }
  }
  for (auto t : gone) {
    remove_sub(self, t);
  }
  went_idle(self);
}

/// `shard` runs this query now (its unit's owner changed). Windowed streams cannot carry on
/// across the move: they close with `server_shutdown` and their clients subscribe again.
void reparent(query_ptr self, const query_parent_actor& shard) {
  auto& st = self->state;
  if (!shard || shard == st.shard) {
    return;
  }
  self->demonitor(st.shard.address());
  st.shard = shard;
  self->monitor(shard);
  close_windowed(self, "server_shutdown");
}

/// The query ends under its raw consumers (a watch of another member, a space view's merge):
/// each learns it, so none keeps serving rows that no longer change.
void refuse_replicas(query_ptr self, const std::string& why) {
  auto& st = self->state;
  auto e = core::make_error("server.unavailable", why);
  for (auto& r : st.replicas) {
    r.replica->refused(e);
  }
  st.replicas.clear();
}

void on_update(query_ptr self, const view_update& u) {
  auto& st = self->state;
  if (u.seq <= st.seq) {
    return;  // already part of the rows this actor started from
  }
  for (auto& r : st.replicas) {
    r.replica->update(u);
  }
  st.seq = u.seq;
  st.snapshot_cache = {};
  st.windowed_snapshot = nullptr;
  st.origin_ns = u.origin_ns;  // stays until the next update: only emissions read it
  // Arc's identity-less fallback (§5.1 step 3), when some row lacks an identity and a hub
  // subscriber needs a change set: it needs the old versions of what the update changes.
  bool arc = st.subs.size() > st.windowed_subs && !st.single();
  bool fallback = st.no_identity > 0;
  if (arc && !fallback && u.delta) {
    for (const auto& x : u.delta->upserts) {
      fallback = fallback || !x.rec->has_identity;
    }
  }
  if (arc && !fallback && u.changes) {
    for (const auto& c : *u.changes) {
      fallback = fallback || (c.after && !c.after->has_identity);
    }
  }
  old_rows old;
  old_rows* want_old = arc && fallback ? &old : nullptr;
  // A single document's previous version, for the patches of patch-mode and AG-UI subscribers.
  record_ptr before_doc = st.wants_patches() ? st.document() : nullptr;
  core::window_delta d;
  if (u.object_deleted) {
    // Every row went with its object.
    for (auto& r : st.view()) {
      if (want_old) {
        old.removed.emplace_back(old.removed.size(), r);
      }
      d.removed.push_back(core::window_removal{r, core::removal_reason::deleted});
    }
    st.account(-st.held_bytes);
    st.no_identity = 0;
    st.window.clear();
    if (st.rows) {
      st.rows->assign_sorted({});
    }
    if (st.q->count) {
      st.total = 0;
    }
  } else if (st.bounded()) {
    if (!u.delta) {
      return;
    }
    d = apply_delta(st, *u.delta, want_old);
  } else {
    if (!u.changes) {
      return;
    }
    d = apply_changes(st, *u.changes, want_old);
    if (st.q->count) {
      d.total = st.total;
    }
  }
  // Arc hub and direct subscribers. The owner sends an update only when the rows or the total
  // changed, so a paged query with an empty delta is one whose total changed: it gets an empty
  // change set (and data, in the modes that carry it).
  if (st.subs.size() > st.windowed_subs) {
    if (st.single()) {
      std::optional<std::string> patch;
      if (auto after_doc = before_doc ? st.document() : nullptr) {
        patch = document_patch(before_doc, after_doc);
      }
      emit_arc(self, std::nullopt, std::move(patch));
    } else if (want_old) {
      auto cs = fallback_change_set(d, old);
      static const std::string empty_change_set = R"({"added":[],"replaced":[],"removed":[]})";
      if (cs != empty_change_set || st.arc_paged()) {
        emit_arc(self, std::move(cs));
      }
    } else if (!d.empty() || st.arc_paged()) {
      emit_arc(self, arc_change_set(d));
    }
  }
  // Windowed subscribers: one event, encoded once.
  if (st.windowed_subs > 0) {
    auto vid =
        u.synthetic || u.object_deleted ? std::string_view{} : std::string_view{u.version_id};
    auto text = core::encode_windowed_event(vid, d, st.proj());
    if (!text.empty()) {
      auto ev = std::make_shared<const std::string>(std::move(text));
      for (auto& s : st.subs) {
        if (auto w = s.windowed.lock()) {
          w->event(ev);
        }
      }
    }
    if (u.object_deleted && st.object_scope()) {
      close_windowed(self, "object_deleted");
    }
  }
}

query_actor::behavior_type query_behavior(query_ptr self, runtime::impl* rt,
                                          query_parent_actor shard,
                                          std::shared_ptr<const core::bound_query> q,
                                          view_snapshot snap) {
  auto& st = self->state;
  st.rt = rt;
  st.shard = shard;
  st.q = std::move(q);
  st.load(std::move(snap));
  rt->query_actors.fetch_add(1);
  self->attach_functor([rt] { rt->query_actors.fetch_sub(1); });
  self->monitor(shard);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source == st.shard.address()) {
      close_windowed(self, "server_shutdown");
      refuse_replicas(self, "the unit serving this query stopped");
      self->quit();
      return;
    }
  });
  return {
      [self](const update_msg& m) { on_update(self, m.update); },
      [self](subscribe_msg& m) {
        auto& st = self->state;
        ++st.seen;
        auto& sub = m.sub;
        if (sub.replica) {
          sub.replica->snapshot(st.current());
          st.replicas.push_back(std::move(sub));
          return;
        }
        if (sub.live && !sub.live->load(std::memory_order_acquire)) {
          // Ended before it got here: its unsubscribe may have overtaken it (a unit handed to a
          // new entry forwards the subscribes that waited on the old one after an unsubscribe
          // sent to the new one), and nothing else would ever remove it.
          went_idle(self);
          return;
        }
        if (is_windowed(sub)) {
          auto w = sub.windowed.lock();
          if (!w) {
            went_idle(self);  // it went away before it was registered
            return;
          }
          st.index[sub.token] = st.subs.size();
          ++st.windowed_subs;
          st.count_subscriptions(slot_count, 1);
          w->opened(st.windowed_snapshot_body());
          st.subs.push_back(std::move(sub));
          return;
        }
        st.index[sub.token] = st.subs.size();
        ++st.slot_subs[slot_of(sub)];
        st.count_subscriptions(slot_of(sub), 1);
        deliver(sub, st.snapshot_body(slot_of(sub)), unix_now_ms(), true);
        st.subs.push_back(std::move(sub));
      },
      [self](const unsubscribe_msg& m) {
        if (remove_sub(self, m.token)) {
          went_idle(self);
        }
      },
      [self](const unsubscribe_batch_msg& m) {
        bool removed = false;
        for (const auto& u : m.items) {
          removed = remove_sub(self, u.token) || removed;
        }
        if (removed) {
          went_idle(self);
        }
      },
      [self](const resync_msg& m) {
        auto& st = self->state;
        for (auto& r : st.replicas) {
          if (r.token == m.token) {
            r.replica->snapshot(st.current());
          }
        }
      },
      [self](const rebaseline_msg& m) {
        // A subscriber that dropped frames while it lagged starts again from the current value.
        auto& st = self->state;
        auto it = st.index.find(m.token);
        if (it == st.index.end()) {
          return;
        }
        auto& s = st.subs[it->second];
        if (!is_windowed(s) && s.live && s.live->load(std::memory_order_relaxed)) {
          deliver(s, st.snapshot_body(slot_of(s)), unix_now_ms(), true);
        }
      },
      [self](reset_msg& m) {
        // A replica starting over (gateway side), or a unit's new owner taking this query over:
        // a fresh full baseline for every hub subscriber, as after a reconnect (arc-hub: the
        // subscription stays, its state is replaced). A windowed stream has no way to start
        // over: it missed changes, so it ends and its client subscribes again.
        auto& st = self->state;
        // Only a parent sends a reset (a remote shard, or a successor shard).
        auto from = caf::actor_cast<query_parent_actor>(self->current_sender());
        if (from && from != st.shard) {
          // The successor's snapshot overtook the predecessor's reparent_msg.
          reparent(self, from);
        }
        close_windowed(self, "overflow");
        st.load(std::move(m.snapshot));
        auto now_ms = unix_now_ms();
        for (auto& s : st.subs) {
          if (s.live && s.live->load(std::memory_order_relaxed)) {
            deliver(s, st.snapshot_body(slot_of(s)), now_ms, true);
          }
        }
        for (auto& r : st.replicas) {
          r.replica->snapshot(st.current());
        }
        went_idle(self);
      },
      [self](reparent_msg& m) { reparent(self, m.shard); },
      [self](owner_lost_msg) { close_windowed(self, "server_shutdown"); },
      [self](const fail_msg& m) {
        // The owner stayed away (gateway side): each subscription ends with an Error from its
        // connection; a direct stream, which has no hub connection, is closed; a windowed
        // one gets `closed`.
        auto& st = self->state;
        bool deleted = m.code == "object.deleted";
        for (auto& s : st.subs) {
          if (auto w = s.windowed.lock(); w && deleted) {
            w->closed("object_deleted");
          } else {
            end_subscription(s, m.reason);
          }
        }
        st.subs.clear();
        st.index.clear();
        refuse_replicas(self, m.reason);
        self->quit();
      },
      [self](stop_atom) {
        close_windowed(self, "server_shutdown");
        refuse_replicas(self, "the unit serving this query stopped");
        self->quit();
      },
  };
}

}  // namespace weir::actors::query_impl

namespace weir::actors {

query_actor spawn_query(runtime::impl& rt, query_parent_actor shard,
                        std::shared_ptr<const core::bound_query> query, view_snapshot snapshot) {
  return rt.sys->spawn(query_impl::query_behavior, &rt, std::move(shard), std::move(query),
                       std::move(snapshot));
}

}  // namespace weir::actors

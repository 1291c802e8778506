// The shard actor: single writer of one ownership unit (space, objectId). It validates and
// applies writes, stamps versionIds from the unit's sequence, hands batches to the store for
// durable group commit, and only once a batch is durable publishes it: into the unit's records,
// into the ordered indexes that its windows share (one per dataset and sort in use), and as one
// update per query whose rows it changed, to the actor that encodes that query. Then it
// acknowledges the write.
//
// Queries are kept here, next to the data: a bounded query (a window: offset, limit) is a
// window_view over the index of its sort, maintained exactly in O(log N) per change plus what
// its backfill reads; an unbounded one is its filter, and its query actor keeps the rows.
// The unit is read from the store by a loader thread; until it arrives every message waits.
//
// This file: the actor's behaviours (loading, serving, handing over, taking over, a failed
// load), its idleness and its unit's hand-over between owners. The write path is in
// shard_write.cpp, publishing in shard_publish.cpp, views, indexes and counts in
// shard_views.cpp; shard_state.hpp is what they share.
#include "actors/shard_state.hpp"

namespace weir::actors::shard_impl {

void handle_idle(shard_ptr self, const query_idle_msg& m) {
  auto& st = self->state;
  auto it = st.views.find(m.key);
  // Only the key's current actor may retire it, and only if no subscribe is on its way to it.
  if (it != st.views.end() && it->second.forwarded == m.seen &&
      caf::actor_cast<caf::actor_addr>(self->current_sender()) == it->second.actor.address()) {
    self->send(it->second.actor, stop_atom::value);
    drop_view(st, it);
  }
}

void touch(shard_ptr self) {
  self->state.idle.touch(self, *self->state.rt);
}

void on_idle_check(shard_ptr self) {
  auto& st = self->state;
  // Indexes no window has read for unitIdleMs go (the next window of that sort rebuilds it).
  auto now = clock_type::now();
  auto keep = std::chrono::milliseconds{st.rt->opts.unit_idle_ms};
  for (auto& [name, ds] : st.data) {
    std::erase_if(ds.indexes, [&](const auto& kv) {
      return kv.second.views.empty() && !awaited_index(ds, kv.first) && !ds.pins(kv.first) &&
             now - kv.second.unused_since >= keep;
    });
    std::erase_if(ds.counts, [&](const auto& kv) { return now - kv.second.used >= keep; });
    keep_filter_indexes(self, name, ds);  // one that found no room, on a unit no longer written
  }
  st.idle.check(self, *st.rt, st.unit, [&st] {
    return st.views.empty() && st.pending.empty() && st.refreshing == 0 &&
           std::all_of(st.data.begin(), st.data.end(), [](const auto& kv) {
             return kv.second.building.empty() && kv.second.scanning.empty();
           });
  });
}

void finish_if_done(shard_ptr self) {
  auto& st = self->state;
  if (st.successor && st.pending.empty() && st.refreshing == 0 && st.in_store == 0) {
    self->send(st.successor, handover_done_msg{});
    self->quit();
  }
}

void hand_over(shard_ptr self, unit_actor successor) {
  auto& st = self->state;
  st.successor = successor;
  for (auto& [key, v] : st.views) {
    self->send(v.actor, reparent_msg{successor});
    self->send(successor, adopt_msg{v.q, v.actor, v.forwarded});
  }
  st.routes.clear();
  for (auto& [name, ds] : st.data) {
    for (auto& [k, ie] : ds.indexes) {
      ie.views.clear();
    }
    // Subscriptions waiting for an index or a pass go to the successor, which takes its own:
    // those of passes in the order the passes were asked for.
    for (auto& [key, b] : ds.building) {
      for (auto& w : b.waiting) {
        self->send(successor, std::move(w));
      }
    }
    std::vector<index_build*> passes;
    for (auto& [key, b] : ds.scanning) {
      passes.push_back(&b);
    }
    std::sort(passes.begin(), passes.end(),
              [](const index_build* a, const index_build* b) { return a->queued < b->queued; });
    for (auto* b : passes) {
      for (auto& w : b->waiting) {
        self->send(successor, std::move(w));
      }
    }
    ds.clear_jobs();
  }
  st.views.clear();
}

void adopt(shard_ptr self, adopt_msg& m) {
  auto& st = self->state;
  if (st.views.count(m.query->key)) {
    // Cannot happen while subscribes wait for the hand-over; stop the stray rather than lose
    // track of it.
    self->send(m.actor, stop_atom::value);
    return;
  }
  auto [it, snap] = open_view(st, m.query);
  it->second.actor = m.actor;
  it->second.forwarded = m.forwarded;
  self->send(m.actor, reparent_msg{handle_of(self)});
  self->send(m.actor, reset_msg{std::move(snap)});
}

shard_actor::behavior_type load_failed(shard_ptr self, const core::error& why) {
  auto e = core::make_error(
      "server.unavailable",
      "the unit (object '" + self->state.unit.object + "' of space '" + self->state.unit.space +
          "') could not be read from the store: " + why.message + "; nothing was applied: retry",
      {{"objectId", self->state.unit.object}});
  // Anything else is dropped: nothing waits for an answer to it.
  return dropping_state<shard_actor>(
      [e](write_msg& m) { m.done(e); }, [e](subscribe_msg& m) { refuse_subscription(m.sub, e); },
      [self, registered = std::make_shared<bool>(true)](stop_atom) {
        if (*registered) {
          // Sends to a shard happen under the registry's lock: once it no longer hands this
          // actor out, everything ever sent to it is ahead of a second stop.
          self->state.rt->forget_shard(self->state.unit, self->address());
          *registered = false;
          self->send(self, stop_atom::value);
          return;
        }
        self->quit(caf::sec::runtime_error);
      });
}

shard_actor::behavior_type taking_over(shard_ptr self) {
  return waiting_state<shard_actor>(
      [self](adopt_msg& m) { self->state.adopted.push_back(std::move(m)); },
      [self](handover_done_msg) {
        auto& st = self->state;
        st.predecessor = nullptr;
        st.rt->loader.load(st.unit, handle_of(self));
        self->become(loading(self));
      });
}

/// An unsubscribe whose query has no actor: its subscribe is still waiting for an index or a
/// count, and never opens.
void drop_waiting(shard_ptr self, const unsubscribe_msg& m) {
  for (auto& [name, ds] : self->state.data) {
    ds.for_each_job([&](index_build& b) {
      std::erase_if(b.waiting, [&](const subscribe_msg& w) {
        return w.sub.token == m.token && w.query->key == m.key;
      });
    });
  }
}

shard_actor::behavior_type handing_over(shard_ptr self) {
  // Delegated, so the successor sees the original sender (a query actor's idle message is
  // checked against it).
  auto pass = [self](auto& m) { self->delegate(self->state.successor, std::move(m)); };
  return {
      [self](const commit_msg& m) {
        handle_commit(self, m);
        finish_if_done(self);
      },
      [self](refreshed_msg& m) {
        handle_refreshed(self, m);
        finish_if_done(self);
      },
      [pass](write_msg& m) { pass(m); },
      [pass](subscribe_msg& m) { pass(m); },
      [pass](unsubscribe_msg& m) { pass(m); },
      [pass](unsubscribe_batch_msg& m) { pass(m); },
      [pass](resync_msg& m) { pass(m); },
      [pass](rebaseline_msg& m) { pass(m); },
      [pass](query_idle_msg& m) { pass(m); },
      [pass](adopt_msg& m) { pass(m); },  // cannot come (the runtime made the successor)
      [](idle_atom) {},
      [](const epoch_msg&) {},
      [](index_built_msg&) {},  // its waiting subscriptions went to the successor
      [](scan_done_msg&) {},    // the same
      [](hand_over_msg&) {},    // cannot come twice: the runtime's entry is the successor now
      [](handover_done_msg) {},
      [](loaded_msg&) {},  // cannot come: a shard hands over only once serving
      [](stop_atom) {},    // only after a failed load
  };
}

shard_actor::behavior_type serving(shard_ptr self) {
  return {
      [self](write_msg& m) {
        touch(self);
        handle_write(self, m);
      },
      [self](const commit_msg& m) { handle_commit(self, m); },
      [self](refreshed_msg& m) { handle_refreshed(self, m); },
      [self](subscribe_msg& m) {
        touch(self);
        handle_subscribe(self, m);
      },
      [self](unsubscribe_msg& m) {
        auto it = self->state.views.find(m.key);
        if (it != self->state.views.end()) {
          self->send(it->second.actor, std::move(m));
          return;
        }
        drop_waiting(self, m);
      },
      [self](unsubscribe_batch_msg& m) {
        // One message to each query actor for its share (a mass disconnect is mostly one key's).
        std::sort(m.items.begin(), m.items.end(),
                  [](const auto& a, const auto& b) { return a.key < b.key; });
        for (auto first = m.items.begin(); first != m.items.end();) {
          auto last = std::find_if(first, m.items.end(),
                                   [&](const auto& u) { return u.key != first->key; });
          auto it = self->state.views.find(first->key);
          if (it == self->state.views.end()) {
            std::for_each(first, last, [&](const auto& u) { drop_waiting(self, u); });
          } else {
            self->send(it->second.actor, unsubscribe_batch_msg{{std::make_move_iterator(first),
                                                                std::make_move_iterator(last)}});
          }
          first = last;
        }
      },
      [self](resync_msg& m) {
        auto it = self->state.views.find(m.key);
        if (it != self->state.views.end()) {
          self->send(it->second.actor, std::move(m));
        }
      },
      [self](rebaseline_msg& m) {
        auto it = self->state.views.find(m.key);
        if (it != self->state.views.end()) {
          self->send(it->second.actor, std::move(m));
        }
      },
      [self](const query_idle_msg& m) {
        touch(self);
        handle_idle(self, m);
      },
      [self](idle_atom) { on_idle_check(self); },
      [self](index_built_msg& m) { on_index_built(self, m); },
      [self](scan_done_msg& m) { on_scan_done(self, m); },
      [](handover_done_msg) {},  // the predecessor's, after its down already let us serve
      // A predecessor hands over before its handover_done_msg, which this shard waited for;
      // should one come later all the same, its query actor is taken, not lost.
      [self](adopt_msg& m) { adopt(self, m); },
      [](loaded_msg&) {},  // cannot come: one load per shard
      [](stop_atom) {},    // only after a failed load
      [self](const epoch_msg& m) {
        self->state.valid_epoch = std::max(self->state.valid_epoch, m.epoch);
      },
      [self](hand_over_msg& m) {
        hand_over(self, std::move(m.successor));
        self->become(handing_over(self));
        finish_if_done(self);
      },
  };
}

shard_actor::behavior_type shard_behavior(shard_ptr self, runtime::impl* rt, store::unit_key unit,
                                          unit_actor predecessor) {
  self->state.rt = rt;
  self->state.unit = unit;
  self->state.origin = rt->next_origin();
  // Before the load: the state it loads is at least as new as these owners.
  self->state.valid_epoch = rt->link ? rt->link->owners_epoch() : 0;
  if (predecessor) {
    // Should the predecessor end without finishing its hand-over, serve without its queries.
    self->state.predecessor = predecessor;
    self->monitor(predecessor);
    self->set_down_handler([self](caf::down_msg& dm) {
      if (self->state.predecessor && dm.source == self->state.predecessor.address()) {
        self->send(self, handover_done_msg{});
      }
    });
  }
  // However this actor ends (retired, shut down, a failed load, or killed by an exception in a
  // handler), the registry must stop handing it out; the next use reloads the unit.
  self->attach_functor([rt, unit, addr = self->address()] { rt->forget_shard(unit, addr); });
  self->set_exit_handler([self](caf::exit_msg& msg) {
    for (auto& [k, v] : self->state.views) {
      self->send(v.actor, stop_atom::value);
    }
    self->state.routes.clear();
    self->state.views.clear();
    // Subscriptions still waiting for an index build end now, told why, rather than waiting
    // for a view that will never open.
    auto e = core::make_error(
        "server.unavailable",
        "the unit closed while its sort index was being built or its filter scanned; retry");
    for (auto& [name, ds] : self->state.data) {
      ds.for_each_job([&](index_build& b) {
        for (auto& w : b.waiting) {
          refuse_subscription(w.sub, e);
        }
      });
      ds.clear_jobs();
    }
    self->quit(msg.reason);
  });
  // Until the loader's answer arrives (and, for a successor, its predecessor's hand-over),
  // every other message waits in the mailbox (waiting_state).
  if (predecessor) {
    return taking_over(self);
  }
  rt->loader.load(unit, handle_of(self));
  return loading(self);
}

shard_actor::behavior_type loading(shard_ptr self) {
  return waiting_state<shard_actor>([self](loaded_msg& m) {
    auto& st = self->state;
    auto& u = *m.unit;
    if (u.error) {
      // The unit cannot be read (store stopped, or an I/O error): this actor serves nothing.
      // What waits for it is answered (load_failed), then it ends; the next use tries
      // again. Query actors it adopted end too, telling their subscribers.
      log::error("cannot load a unit", {{"space", st.unit.space},
                                        {"object", st.unit.object},
                                        {"code", u.error->code},
                                        {"error", u.error->message}});
      for (auto& a : st.adopted) {
        // Every subscription they hold ends with its protocol's error (fail_msg).
        self->send(a.actor, fail_msg{u.error->message, u.error->code});
      }
      st.adopted.clear();
      self->become(load_failed(self, *u.error));
      self->send(self, stop_atom::value);  // after what waited, which comes first
      return;
    }
    st.seq = u.seq;
    st.deleted = u.deleted;
    for (auto& k : u.keys) {
      st.keys.remember(std::move(k), st.rt->opts.max_idempotency_keys_per_unit);
    }
    st.last_modified_ms = u.last_modified_ms;
    for (auto& [name, records] : u.datasets) {
      st.data[name].records = std::move(records);
    }
    touch(self);
    for (auto& a : st.adopted) {
      adopt(self, a);
    }
    st.adopted.clear();
    // After the adopted windows, whose sorts may already be the indexes the filters want.
    for (auto& [name, ds] : st.data) {
      keep_filter_indexes(self, name, ds);
    }
    self->become(serving(self));
  });
}

}  // namespace weir::actors::shard_impl

namespace weir::actors {

unit_actor spawn_shard(runtime::impl& rt, store::unit_key unit, unit_actor predecessor) {
  return rt.sys->spawn(shard_impl::shard_behavior, &rt, std::move(unit), std::move(predecessor));
}

}  // namespace weir::actors

// The remote shard actor: on a gateway node, the stand-in for a unit that another member owns.
// It holds one watch on the owner per query key, whatever the number of local subscribers, and
// runs an ordinary query actor over the records the watch delivers, so local subscribers are
// served exactly as on the owner: each change is turned into a delta and encoded once here,
// then fanned out to every local subscriber's connection.
//
// When the owner becomes unreachable the subscriptions stay; the owner's fresh snapshot, when
// it is back, resets each query actor, which sends every subscriber a full baseline. If it
// stays away past ownerUnavailableErrorMs, every subscription ends with an Error instead.
#include <chrono>
#include <unordered_map>

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "actors/typed_states.hpp"
#include "actors/unit_idleness.hpp"

namespace weir::actors::remote_impl {

// Named here (not in an anonymous namespace) for their type IDs (messages.hpp).

/// The owner stayed away from watch `watch_id` (or, when 0, from query `key`) since its loss
/// number `epoch`.
struct owner_timeout_msg {
  std::uint64_t watch_id = 0;
  std::uint64_t epoch = 0;
  std::string key;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, owner_timeout_msg& x) {
  return f(caf::meta::type_name("owner_timeout_msg"), x.watch_id, x.epoch, x.key);
}

/// Open the watch of query `key` again (its owner refused it as not yet its own).
struct rewatch_msg {
  std::string key;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rewatch_msg& x) {
  return f(caf::meta::type_name("rewatch_msg"), x.key);
}

}  // namespace weir::actors::remote_impl

namespace weir::actors {
namespace {

using remote_impl::owner_timeout_msg;
using remote_impl::rewatch_msg;

struct remote_query {
  std::shared_ptr<const core::bound_query> q;
  std::uint64_t watch_id = 0;
  query_actor actor;                   // the replica query actor, once the first snapshot came
  std::vector<subscribe_msg> waiting;  // subscribes before the first snapshot
  std::uint64_t forwarded = 0;         // subscribes handed to `actor` (see query_idle_msg)
  bool up = false;
  std::uint64_t losses = 0;
  /// An adopted query actor before its first snapshot from this owner: new subscribes wait (a
  /// windowed one opened on the old rows would be closed by the reset).
  bool awaiting_snapshot = false;
};

struct remote_state {
  runtime::impl* rt = nullptr;
  store::unit_key unit;
  std::string owner;
  std::unordered_map<std::string, remote_query> queries;  // by query key
  std::unordered_map<std::uint64_t, std::string> by_watch;
  unit_idleness idle;
  /// Numbers every loss of every query (remote_query::losses): a timer of a query that was
  /// closed cannot match a later query of the same key.
  std::uint64_t losses = 0;
  static inline const char* name = "weir.remote_shard";
};

/// The remote shard: a unit's entry on a gateway, hearing also its watches' events and its own
/// timers.
using remote_actor =
    unit_actor::extend<caf::reacts_to<watch_msg>, caf::reacts_to<owner_timeout_msg>,
                       caf::reacts_to<rewatch_msg>>;

using remote_ptr = remote_actor::stateful_pointer<remote_state>;

void open_watch(remote_ptr self, const std::string& key, remote_query& e) {
  auto& st = self->state;
  auto me = remote_actor{self};
  e.watch_id = st.rt->link->open_watch(
      st.owner, *e.q, [me](watch_event ev) { caf::anon_send(me, watch_msg{std::move(ev)}); });
  st.by_watch[e.watch_id] = key;
  st.rt->upstreams.fetch_add(1);
}

/// Ends watch and query of `key` (no subscriber left, or failed).
void close_query(remote_ptr self, const std::string& key) {
  auto& st = self->state;
  auto it = st.queries.find(key);
  if (it == st.queries.end()) {
    return;
  }
  auto& e = it->second;
  if (e.watch_id != 0) {  // 0: between a refusal and the next try
    st.rt->link->cancel_watch(st.owner, e.watch_id);
    st.rt->upstreams.fetch_sub(1);
    st.by_watch.erase(e.watch_id);
  }
  if (e.actor) {
    self->send(e.actor, stop_atom::value);
  }
  st.queries.erase(it);
}

/// Refuses a windowed subscription that is still waiting for its first rows: it has sent no
/// frame yet, so it answers with the error envelope.
void refuse_waiting(const subscribe_msg& w, core::error e) {
  if (auto sink = w.sub.windowed.lock()) {
    sink->refused(std::move(e));
  }
}

/// Every subscription of `key` ends with an Error (through its connection) and the watch goes.
/// `code` is the owner's error code when it refused the watch ("" otherwise).
void fail_query(remote_ptr self, const std::string& key, const std::string& reason,
                const std::string& code = {}) {
  auto& st = self->state;
  auto it = st.queries.find(key);
  if (it == st.queries.end()) {
    return;
  }
  auto& e = it->second;
  for (auto& w : e.waiting) {
    if (w.sub.windowed_stream) {
      refuse_waiting(w,
                     core::make_error(code.empty() ? "cluster.owner_unavailable" : code, reason));
    } else {
      end_subscription(w.sub, reason);
    }
  }
  e.waiting.clear();
  if (e.actor) {
    self->send(e.actor, fail_msg{reason, code});
    e.actor = nullptr;
  }
  close_query(self, key);
}

void on_watch(remote_ptr self, watch_msg& m) {
  auto& st = self->state;
  auto& ev = m.event;
  auto k = st.by_watch.find(ev.watch_id);
  if (k == st.by_watch.end()) {
    return;  // a cancelled watch's last words
  }
  auto key = k->second;
  auto& e = st.queries.at(key);
  switch (ev.what) {
    case watch_event::kind::snapshot:
      e.up = true;
      if (!e.actor) {
        e.actor = spawn_query(*st.rt, remote_actor{self}, e.q, std::move(ev.snapshot));
        for (auto& w : e.waiting) {
          ++e.forwarded;
          self->send(e.actor, std::move(w));
        }
        e.waiting.clear();
      } else {
        self->send(e.actor, reset_msg{std::move(ev.snapshot), std::move(ev.hold)});
        if (e.awaiting_snapshot) {
          e.awaiting_snapshot = false;
          for (auto& w : e.waiting) {
            ++e.forwarded;
            self->send(e.actor, std::move(w));
          }
          e.waiting.clear();
        }
      }
      break;
    case watch_event::kind::update:
      if (e.actor) {
        ev.update.origin_ns = steady_now_ns();  // the owner's clock is not this one
        self->send(e.actor, update_msg{std::move(ev.update), std::move(ev.hold)});
      }
      break;
    case watch_event::kind::lost: {
      // Windowed streams cannot wait for the owner (Decision 5): they end now, and the ones
      // still waiting for their first rows are refused.
      if (e.actor) {
        self->send(e.actor, owner_lost_msg{});
      }
      std::erase_if(e.waiting, [](const subscribe_msg& w) {
        if (!w.sub.windowed_stream) {
          return false;
        }
        refuse_waiting(w, core::make_error("cluster.owner_unavailable",
                                           "the node that owns this data is unreachable; retry"));
        return true;
      });
      if (e.waiting.empty() && !e.actor) {
        close_query(self, key);
        break;
      }
      if (!e.up && e.losses > 0) {
        break;  // already counting down
      }
      e.up = false;
      auto epoch = e.losses = ++st.losses;
      auto wait = st.rt->opts.owner_unavailable_error_ms;
      self->delayed_send(self, std::chrono::milliseconds{wait}, owner_timeout_msg{0, epoch, key});
      break;
    }
    case watch_event::kind::failed:
      if (ev.error_code == "cluster.not_owner") {
        // The owner has not yet seen the membership change this node acts on (elastic
        // membership): ask again shortly, rather than fail subscribers over a moment's lag.
        // Should it never agree, the owner-unavailable timer ends the subscriptions.
        st.by_watch.erase(ev.watch_id);
        st.rt->link->cancel_watch(st.owner, ev.watch_id);
        st.rt->upstreams.fetch_sub(1);
        e.watch_id = 0;
        if (e.up || e.losses == 0) {
          e.up = false;
          auto epoch = e.losses = ++st.losses;
          self->delayed_send(self,
                             std::chrono::milliseconds{st.rt->opts.owner_unavailable_error_ms},
                             owner_timeout_msg{0, epoch, key});
        }
        self->delayed_send(self, std::chrono::milliseconds{200}, rewatch_msg{key});
        break;
      }
      fail_query(self, key, ev.error, ev.error_code);
      break;
  }
}

void touch(remote_ptr self) {
  self->state.idle.touch(self, *self->state.rt);
}

void on_idle_check(remote_ptr self) {
  auto& st = self->state;
  st.idle.check(self, *st.rt, st.unit, [&st] { return st.queries.empty(); });
}

/// The unit's owner changed: each query actor goes to `successor` (and each subscribe still
/// waiting for its watch), every watch on the old owner ends, and this actor stops.
void hand_over(remote_ptr self, const unit_actor& successor) {
  auto& st = self->state;
  for (auto& [key, e] : st.queries) {
    if (e.actor) {
      self->send(e.actor, reparent_msg{successor});
      self->send(successor, adopt_msg{e.q, e.actor, e.forwarded});
    }
  }
  for (auto& [key, e] : st.queries) {
    for (auto& w : e.waiting) {
      self->send(successor, std::move(w));
    }
    if (e.watch_id != 0) {
      st.rt->link->cancel_watch(st.owner, e.watch_id);
      st.rt->upstreams.fetch_sub(1);
    }
  }
  self->send(successor, handover_done_msg{});
  st.queries.clear();
  st.by_watch.clear();
  self->quit();
}

/// Takes a query actor over from the unit's previous entry: a watch on the owner, whose first
/// snapshot resets it (a fresh baseline for every subscriber).
void adopt(remote_ptr self, adopt_msg& m) {
  auto& st = self->state;
  auto key = m.query->key;
  if (st.queries.count(key)) {
    self->send(m.actor, stop_atom::value);
    return;
  }
  auto& e = st.queries[key];
  e.q = m.query;
  e.actor = m.actor;
  e.forwarded = m.forwarded;
  e.awaiting_snapshot = true;
  self->send(m.actor, reparent_msg{remote_actor{self}});
  open_watch(self, key, e);
}

/// Closes subscription `m.token`: still waiting for its watch, it never opens (and a query left
/// with nothing waiting and no actor closes); else its query actor is told.
void unsubscribe(remote_ptr self, unsubscribe_msg& m) {
  auto& st = self->state;
  auto it = st.queries.find(m.key);
  if (it == st.queries.end()) {
    return;
  }
  auto& e = it->second;
  auto waited =
      std::erase_if(e.waiting, [&m](const subscribe_msg& w) { return w.sub.token == m.token; });
  if (e.actor) {
    if (waited == 0) {
      self->send(e.actor, std::move(m));
    }
    return;
  }
  if (e.waiting.empty()) {
    close_query(self, m.key);
  }
}

remote_actor::behavior_type remote_serving(remote_ptr self);

remote_actor::behavior_type remote_behavior(remote_ptr self, runtime::impl* rt,
                                            store::unit_key unit, std::string owner,
                                            unit_actor predecessor) {
  auto& st = self->state;
  st.rt = rt;
  st.unit = unit;
  st.owner = std::move(owner);
  rt->remote_units.fetch_add(1);
  self->attach_functor([rt, unit, addr = self->address()] {
    rt->remote_units.fetch_sub(1);
    rt->forget_shard(unit, addr);
  });
  self->set_exit_handler([self](caf::exit_msg& msg) {
    auto& st = self->state;
    for (auto& [key, e] : st.queries) {
      if (e.watch_id != 0) {
        st.rt->link->cancel_watch(st.owner, e.watch_id);
        st.rt->upstreams.fetch_sub(1);
      }
      if (e.actor) {
        self->send(e.actor, stop_atom::value);
      }
    }
    st.queries.clear();
    st.by_watch.clear();
    self->quit(msg.reason);
  });
  touch(self);
  if (!predecessor) {
    return remote_serving(self);
  }
  // A successor: everything but the predecessor's hand-over waits in the mailbox until it is
  // complete (or the predecessor ended without completing it).
  self->monitor(predecessor);
  self->set_down_handler([self, addr = predecessor.address()](caf::down_msg& dm) {
    if (dm.source == addr) {
      self->send(self, handover_done_msg{});
    }
  });
  return waiting_state<remote_actor>(
      [self](adopt_msg& m) { adopt(self, m); },
      [self](handover_done_msg) { self->become(remote_serving(self)); });
}

remote_actor::behavior_type remote_serving(remote_ptr self) {
  return {
      [](handover_done_msg) {},
      // A predecessor hands over before its handover_done_msg, which this actor waited for;
      // should one come later all the same, its query actor is taken, not lost.
      [self](adopt_msg& m) { adopt(self, m); },
      // Owner side only: the watch it names was on this node while it owned the unit, and ended
      // when the unit moved (its gateway watches the new owner).
      [](const resync_msg&) {},
      [](const epoch_msg&) {},  // nothing here is stamped with the owners' epoch
      [self](hand_over_msg& m) { hand_over(self, m.successor); },
      [self](write_msg& m) {
        // Writes go to the owner straight from runtime::submit; one that reaches this actor
        // anyway (a race with a spawn) is forwarded all the same.
        auto& st = self->state;
        st.rt->link->forward_write(st.owner, std::move(m.cmd), std::move(m.done));
      },
      [self](subscribe_msg& m) {
        touch(self);
        auto& st = self->state;
        auto key = m.query->key;
        auto [it, fresh] = st.queries.try_emplace(key);
        auto& e = it->second;
        if (fresh) {
          e.q = m.query;
          open_watch(self, key, e);
        }
        if (e.actor && !e.awaiting_snapshot) {
          ++e.forwarded;
          self->send(e.actor, std::move(m));
        } else {
          e.waiting.push_back(std::move(m));
        }
      },
      [self](unsubscribe_msg& m) { unsubscribe(self, m); },
      [self](unsubscribe_batch_msg& m) {
        for (auto& u : m.items) {
          unsubscribe(self, u);
        }
      },
      [self](rebaseline_msg& m) {
        // A subscription still waiting for its watch gets a baseline when it opens anyway.
        auto& st = self->state;
        if (auto it = st.queries.find(m.key); it != st.queries.end() && it->second.actor) {
          self->send(it->second.actor, std::move(m));
        }
      },
      [self](const query_idle_msg& m) {
        touch(self);
        auto& st = self->state;
        auto it = st.queries.find(m.key);
        // Not while subscribes wait for an adopted actor's first snapshot: they go to it then.
        if (it != st.queries.end() && it->second.actor && it->second.waiting.empty() &&
            it->second.forwarded == m.seen &&
            caf::actor_cast<caf::actor_addr>(self->current_sender()) ==
                it->second.actor.address()) {
          close_query(self, m.key);
        }
      },
      [self](watch_msg& m) { on_watch(self, m); },
      [self](const owner_timeout_msg& m) {
        auto& st = self->state;
        std::string key = m.key;
        if (m.watch_id != 0) {
          auto k = st.by_watch.find(m.watch_id);
          if (k == st.by_watch.end()) {
            return;
          }
          key = k->second;
        }
        auto it = st.queries.find(key);
        if (it == st.queries.end()) {
          return;
        }
        auto& e = it->second;
        if (!e.up && e.losses == m.epoch) {
          fail_query(self, key, "owner node '" + st.owner + "' is unreachable");
        }
      },
      [self](const rewatch_msg& m) {
        auto& st = self->state;
        auto it = st.queries.find(m.key);
        if (it != st.queries.end() && it->second.watch_id == 0) {
          open_watch(self, m.key, it->second);
        }
      },
      [self](idle_atom) { on_idle_check(self); },
  };
}

}  // namespace

unit_actor spawn_remote_shard(runtime::impl& rt, store::unit_key unit, std::string owner,
                              unit_actor predecessor) {
  return rt.sys->spawn(remote_behavior, &rt, std::move(unit), std::move(owner),
                       std::move(predecessor));
}

}  // namespace weir::actors

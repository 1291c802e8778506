// The space view actor: the space-wide dataset endpoint (one dataset across every object of a
// space, record ids `<objectId>/<recordId>`). Each object's unit keeps an exact window of its
// first offset + limit matches; this actor merges them (core::window_merge) into the window the
// request asked for and feeds it, as a bounded query, to an ordinary query actor that encodes
// it for the subscribers. In a cluster, the objects of other members arrive as one source per
// member: that member's own space view over its units (a "member part"), watched like any
// query. New objects join as their first record of the dataset is written.
//
// Any source lost (a member unreachable) ends the view: its windowed streams close with
// `server_shutdown` and the clients subscribe again (Decision 5).
#include <algorithm>
#include <chrono>
#include <map>

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "core/version_id.hpp"
#include "core/window_merge.hpp"

namespace weir::actors::space_impl {

// Named here (not in an anonymous namespace) for their type IDs (messages.hpp).

/// A local unit's part of the merge reported its rows or an update.
struct source_msg {
  std::string object;
  std::optional<view_snapshot> snapshot;
  std::optional<view_update> update;
};

/// A member's part of the merge (its watch) reported.
struct member_msg {
  std::string member;
  watch_event event;
};

/// A loader thread listed the space's objects that hold the dataset here.
struct listed_msg {
  std::vector<std::string> objects;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, listed_msg& x) {
  return f(caf::meta::type_name("listed_msg"), x.objects);
}

/// A local unit's part of the merge ended (its unit stopped).
struct source_failed_msg {
  std::string object;
  std::string why;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, source_failed_msg& x) {
  return f(caf::meta::type_name("source_failed_msg"), x.object, x.why);
}

/// Try leaving the registry again (the last attempt found mail waiting).
struct retire_msg {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, retire_msg&) {
  return f(caf::meta::type_name("retire_msg"));
}

}  // namespace weir::actors::space_impl

// They carry a unit's rows and updates (shared record pointers): see messages.hpp.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::space_impl::source_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::space_impl::member_msg)

namespace weir::actors {
namespace {

using space_impl::listed_msg;
using space_impl::member_msg;
using space_impl::retire_msg;
using space_impl::source_failed_msg;
using space_impl::source_msg;

/// The space view: what the registry holds, and what its sources, its listing and its own
/// retry tell it.
using space_actor =
    space_view_actor::extend<caf::reacts_to<source_msg>, caf::reacts_to<member_msg>,
                             caf::reacts_to<listed_msg>, caf::reacts_to<source_failed_msg>,
                             caf::reacts_to<retire_msg>>;

/// Forwards a local unit's rows and updates to the space view (called on the unit's query
/// actor's thread).
class source_sink final : public replica_sink {
 public:
  source_sink(space_actor view, std::string object)
      : view_(std::move(view)), object_(std::move(object)) {}
  void snapshot(const view_snapshot& s) override {
    caf::anon_send(view_, source_msg{object_, s, std::nullopt});
  }
  void update(const view_update& u) override {
    caf::anon_send(view_, source_msg{object_, std::nullopt, u});
  }
  void refused(const core::error& e) override {
    caf::anon_send(view_, source_failed_msg{object_, e.message});
  }

 private:
  space_actor view_;
  std::string object_;
};

struct source_state {
  bool ready = false;
  bool initial = false;        // one of the sources the first snapshot waits for
  std::uint64_t token = 0;     // local unit: the subscription on its query actor
  std::uint64_t watch_id = 0;  // member: its watch
  std::string key;             // local unit: the part's query key
};

struct space_state {
  runtime::impl* rt = nullptr;
  std::shared_ptr<const core::windowed_request> req;
  bool member_part = false;  // serves another member's merge: this node's units only
  std::shared_ptr<const core::bound_query> q;
  std::unique_ptr<core::window_merge> merge;
  std::map<std::string, source_state> units;    // local objects by id
  std::map<std::string, source_state> members;  // other members by id
  // Sources the first merged snapshot waits for (the listing counts as one): sources that join
  // once the view serves are merged as they come and hold nothing up.
  std::size_t pending = 0;
  bool retiring = false;               // idle: leaving the registry once its mailbox is empty
  bool stopped = false;                // its sources are released
  std::string failed;                  // why the view failed; set: subscribes are refused
  std::string failed_code;             // the refusal's code
  std::vector<subscribe_msg> waiting;  // subscribes before the merged snapshot
  query_actor query;
  std::uint64_t forwarded = 0;
  std::uint64_t seq = 0;  // this view's own update sequence
  static inline const char* name = "weir.space_view";
};

using space_ptr = space_actor::stateful_pointer<space_state>;

std::string registry_key(const core::bound_query& q) {
  return q.space + '\0' + q.key;
}

/// The bound query this view serves.
std::shared_ptr<const core::bound_query> view_query(
    const std::shared_ptr<const core::windowed_request>& req, bool member_part) {
  return std::make_shared<const core::bound_query>(core::bind_windowed_merge(req, member_part));
}

void fail(space_ptr self, const std::string& why,
          const std::string& code = "cluster.owner_unavailable");

/// Each object's unit is loaded and held while the view lives: past the bound the view is
/// refused rather than take the node's memory (a dataset that grows past it later ends it).
bool within_object_bound(space_ptr self, std::size_t objects) {
  auto& st = self->state;
  auto bound = st.rt->opts.hub.max_objects_per_space_window;
  if (objects <= bound) {
    return true;
  }
  fail(self,
       "the dataset '" + st.req->dataset + "' is held by more than " + std::to_string(bound) +
           " objects of the space here; a space-wide window merges at most that many "
           "(windowed.maxObjectsPerSpaceWindow): query one object's dataset instead",
       "query.too_many_objects");
  return false;
}

void subscribe_unit(space_ptr self, const std::string& object) {
  auto& st = self->state;
  if (st.units.count(object) || !st.failed.empty() ||
      !within_object_bound(self, st.units.size() + 1)) {
    return;
  }
  auto& src = st.units[object];
  if (!st.query) {
    src.initial = true;
    ++st.pending;
  }
  auto part = std::make_shared<const core::bound_query>(core::bind_windowed(st.req, object));
  src.token = st.rt->next_token();
  src.key = part->key;
  subscriber sub;
  sub.token = src.token;
  sub.replica = std::make_shared<source_sink>(space_actor{self}, object);
  sub.live = std::make_shared<const std::atomic<bool>>(true);
  st.rt->send_to_shard({st.req->space, object}, subscribe_msg{std::move(part), std::move(sub)});
}

void stop_sources(space_ptr self);

/// Leaves the registry and stops, once nothing waits in the mailbox (a subscribe sent under the
/// registry lock must not be lost); else tries again shortly.
void try_retire(space_ptr self) {
  auto& st = self->state;
  st.retiring = true;
  if (st.rt->retire_space_view(registry_key(*st.q), space_view_actor{self},
                               [self] { return self->mailbox().empty(); })) {
    if (st.query) {
      self->send(st.query, stop_atom::value);
      st.query = nullptr;
    }
    stop_sources(self);
    self->quit();
    return;
  }
  self->delayed_send(self, std::chrono::milliseconds{50}, retire_msg{});
}

/// The merged window changed (or a source came): tell the query actor, or start it. Updates
/// carry the view's own sequence as their versionId (§10: one stream's versionIds grow), and ""
/// for the removal that follows an object delete.
void flush(space_ptr self, bool synthetic) {
  auto& st = self->state;
  if (!st.query) {
    st.merge->take_delta();  // not serving yet: the first snapshot carries everything
    if (st.pending > 0) {
      return;
    }
    if (st.waiting.empty()) {
      try_retire(self);  // whoever asked left before the first snapshot
      return;
    }
    view_snapshot snap{++st.seq, st.merge->visible(), st.merge->total()};
    st.query = spawn_query(*st.rt, space_actor{self}, st.q, std::move(snap));
    for (auto& w : st.waiting) {
      ++st.forwarded;
      self->send(st.query, std::move(w));
    }
    st.waiting.clear();
    return;
  }
  auto d = st.merge->take_delta();
  if (!d) {
    return;
  }
  view_update u;
  u.seq = ++st.seq;
  u.version_id = synthetic ? std::string{} : core::encode_version_id(u.seq);
  u.synthetic = synthetic;
  u.total = d->total;
  u.delta = std::make_shared<const core::window_delta>(std::move(*d));
  self->send(st.query, update_msg{std::move(u)});
}

/// A source's update as a delta of merged rows.
core::window_delta merged_delta(const view_update& u, const std::string& object, bool prefix) {
  auto fix = [&](const core::record_ptr& r) {
    return prefix ? core::with_object_prefix(*r, object) : r;
  };
  core::window_delta d;
  if (u.delta) {
    for (const auto& r : u.delta->removed) {
      d.removed.push_back(core::window_removal{fix(r.rec), r.reason});
    }
    for (const auto& x : u.delta->upserts) {
      d.upserts.push_back(core::window_upsert{x.index, fix(x.rec), x.added, x.ops});
    }
  } else if (u.changes) {
    for (const auto& c : *u.changes) {
      if (c.before && !c.after) {
        d.removed.push_back(
            core::window_removal{fix(c.before), c.after_exists ? core::removal_reason::filtered_out
                                                               : core::removal_reason::deleted});
      } else if (c.after) {
        d.upserts.push_back(core::window_upsert{0, fix(c.after), !c.before, c.ops});
      }
    }
  }
  d.total = u.total;
  return d;
}

void on_source(space_ptr self, source_msg& m) {
  auto& st = self->state;
  auto it = st.units.find(m.object);
  if (it == st.units.end()) {
    return;
  }
  auto& src = it->second;
  if (m.snapshot) {
    std::vector<core::record_ptr> rows;
    rows.reserve(m.snapshot->rows.size());
    for (const auto& r : m.snapshot->rows) {
      rows.push_back(core::with_object_prefix(*r, m.object));
    }
    st.merge->set_source(m.object, rows, m.snapshot->total);
    if (!src.ready) {
      src.ready = true;
      if (src.initial) {
        --st.pending;
      }
    }
    flush(self, false);  // an object that joined while the view serves: its rows come in
    return;
  }
  auto& u = *m.update;
  if (u.object_deleted) {
    st.merge->drop_source(m.object);
  } else {
    st.merge->apply_source(m.object, merged_delta(u, m.object, true));
  }
  flush(self, u.synthetic || u.object_deleted);
}

void stop_sources(space_ptr self) {
  auto& st = self->state;
  if (st.stopped) {
    return;
  }
  st.stopped = true;
  for (auto& [object, src] : st.units) {
    st.rt->send_to_live_shard({st.req->space, object}, unsubscribe_msg{src.key, src.token});
  }
  st.units.clear();
  if (st.rt->link) {
    for (auto& [member, src] : st.members) {
      st.rt->link->cancel_watch(member, src.watch_id);
      st.rt->upstreams.fetch_sub(1);
    }
  }
  st.members.clear();
  st.rt->unwatch_space(st.req->space, st.req->dataset, space_actor{self});
}

void refuse(const subscribe_msg& w, const std::string& why, const std::string& code) {
  auto e = core::make_error(code, why);
  if (auto sink = w.sub.windowed.lock()) {
    sink->refused(std::move(e));
  } else if (w.sub.replica) {
    w.sub.replica->refused(e);
  }
}

/// A part is gone (a member unreachable, a unit stopped), or the dataset spans more objects than
/// a view merges: the merge can no longer be exact. Every subscription ends
/// (`closed{server_shutdown}`), later subscribes are refused with 503 and `code`, and the view
/// leaves as soon as its mailbox is empty.
void fail(space_ptr self, const std::string& why, const std::string& code) {
  auto& st = self->state;
  st.failed = why;
  st.failed_code = code;
  for (auto& w : st.waiting) {
    refuse(w, why, code);
  }
  st.waiting.clear();
  if (st.query) {
    self->send(st.query, fail_msg{why, {}});
    st.query = nullptr;
  }
  stop_sources(self);
  try_retire(self);
}

void on_member(space_ptr self, member_msg& m) {
  auto& st = self->state;
  auto it = st.members.find(m.member);
  if (it == st.members.end() || it->second.watch_id != m.event.watch_id) {
    return;
  }
  auto& src = it->second;
  switch (m.event.what) {
    case watch_event::kind::snapshot:
      // A member part's snapshot: its first, or a fresh one after its watch fell behind. The
      // merge diffs it against what that member showed, so the streams go on either way.
      st.merge->set_source("@" + m.member, m.event.snapshot.rows, m.event.snapshot.total);
      if (!src.ready) {
        src.ready = true;
        if (src.initial) {
          --st.pending;
        }
      }
      flush(self, false);
      break;
    case watch_event::kind::update: {
      auto& u = m.event.update;
      st.merge->apply_source("@" + m.member, merged_delta(u, m.member, false));
      flush(self, u.synthetic || u.object_deleted);
      break;
    }
    case watch_event::kind::lost:
      fail(self, "member '" + m.member + "', which holds part of this dataset, is unreachable");
      break;
    case watch_event::kind::failed:
      // The member's own refusal, when it said why (its part over the object bound:
      // query.too_many_objects); else the part is unavailable.
      fail(self,
           "member '" + m.member + "' cannot serve its part of this dataset: " + m.event.error,
           m.event.error_code.empty() ? std::string{"cluster.owner_unavailable"}
                                      : m.event.error_code);
      break;
  }
}

space_actor::behavior_type space_behavior(space_ptr self, runtime::impl* rt,
                                          std::shared_ptr<const core::windowed_request> req,
                                          bool member_part) {
  auto& st = self->state;
  st.rt = rt;
  st.req = req;
  st.member_part = member_part;
  st.q = view_query(req, member_part);
  st.merge = std::make_unique<core::window_merge>(
      req->order, member_part ? 0 : req->offset,
      member_part ? (req->limit ? req->offset + req->limit : 0) : req->limit, req->include_total);
  auto key = registry_key(*st.q);
  self->attach_functor([rt, key, addr = self->address()] { rt->forget_space_view(key, addr); });
  self->set_exit_handler([self](caf::exit_msg& msg) {
    stop_sources(self);
    if (self->state.query) {
      self->send(self->state.query, stop_atom::value);
    }
    self->quit(msg.reason);
  });
  // In a cluster every other member holds part of the dataset: without one the merge cannot be
  // exact, so a member that is not up refuses the view at once (before any unit is loaded).
  if (rt->link && !member_part) {
    for (const auto& member : rt->link->members()) {
      if (member != rt->link->self_id() && !rt->link->member_up(member)) {
        st.failed = "member '" + member + "', which holds part of this dataset, is unreachable";
        st.failed_code = "cluster.owner_unavailable";
        break;
      }
    }
  }
  if (!st.failed.empty()) {
    try_retire(self);  // the subscribes already sent are refused as they are read
  } else {
    // Sources: new objects first (so none is missed between the listing and the registration),
    // then the objects this node holds (listed by a loader thread: a store read per object of
    // the space), then the other members' parts.
    rt->watch_space(req->space, req->dataset, space_actor{self});
    ++st.pending;  // the listing
    {
      auto me = space_actor{self};
      auto space = req->space;
      auto dataset = req->dataset;
      rt->loader.post([rt, me, space, dataset] {
        caf::anon_send(me, listed_msg{rt->store.objects_with_dataset(space, dataset)});
      });
    }
    if (rt->link && !member_part) {
      auto part = view_query(req, true);
      for (const auto& member : rt->link->members()) {
        if (member == rt->link->self_id()) {
          continue;
        }
        auto& src = st.members[member];
        src.initial = true;
        ++st.pending;
        auto me = space_actor{self};
        src.watch_id = rt->link->open_watch(member, *part, [me, member](watch_event ev) {
          caf::anon_send(me, member_msg{member, std::move(ev)});
        });
        rt->upstreams.fetch_add(1);
      }
    }
  }
  return {
      [self](subscribe_msg& m) {
        auto& st = self->state;
        if (!st.failed.empty()) {
          refuse(m, st.failed, st.failed_code);
          return;
        }
        st.retiring = false;
        if (!st.query) {
          st.waiting.push_back(std::move(m));
          if (st.pending == 0) {
            flush(self, false);  // every source is in: serve now
          }
          return;
        }
        ++st.forwarded;
        self->send(st.query, std::move(m));
      },
      [self](unsubscribe_msg& m) {
        auto& st = self->state;
        if (st.query) {
          self->send(st.query, std::move(m));
          return;
        }
        std::erase_if(st.waiting, [&m](const subscribe_msg& w) { return w.sub.token == m.token; });
        if (st.waiting.empty()) {
          try_retire(self);
        }
      },
      [self](retire_msg) {
        if (self->state.retiring) {
          try_retire(self);
        }
      },
      [self](listed_msg& m) {
        auto& st = self->state;
        if (!st.failed.empty()) {
          return;
        }
        std::erase_if(m.objects, [&](const std::string& object) {
          return st.rt->link && st.rt->link->remote_owner({st.req->space, object});
        });
        auto fresh = std::count_if(m.objects.begin(), m.objects.end(),
                                   [&](const std::string& o) { return !st.units.count(o); });
        if (!within_object_bound(self, st.units.size() + static_cast<std::size_t>(fresh))) {
          return;  // before any of them is loaded
        }
        for (auto& object : m.objects) {
          subscribe_unit(self, object);
        }
        --st.pending;
        flush(self, false);
      },
      [self](source_failed_msg& m) {
        fail(self, "the part of object '" + m.object + "' ended: " + m.why);
      },
      [self](resync_msg& m) {
        if (self->state.query) {
          self->send(self->state.query, std::move(m));
        }
      },
      [self](const query_idle_msg& m) {
        auto& st = self->state;
        if (st.query && st.forwarded == m.seen &&
            caf::actor_cast<caf::actor_addr>(self->current_sender()) == st.query.address()) {
          // Leave the registry first, so no subscribe reaches an actor that is going.
          try_retire(self);
        }
      },
      [self](source_msg& m) { on_source(self, m); },
      [self](member_msg& m) { on_member(self, m); },
      [self](const unit_appeared_msg& m) { subscribe_unit(self, m.object); },
      [self](const fail_msg& m) { fail(self, m.reason); },
  };
}

}  // namespace

space_view_actor spawn_space_view(runtime::impl& rt,
                                  std::shared_ptr<const core::windowed_request> req,
                                  bool member_part) {
  return rt.sys->spawn(space_behavior, &rt, std::move(req), member_part);
}

void notify_unit_appeared(const space_view_actor& view, std::string object) {
  caf::anon_send(view, unit_appeared_msg{std::move(object)});
}

void notify_membership_changed(const space_view_actor& view) {
  caf::anon_send(view, fail_msg{"the cluster's members changed", {}});
}

std::string space_view_key(const std::shared_ptr<const core::windowed_request>& req,
                           bool member_part) {
  return registry_key(*view_query(req, member_part));
}

}  // namespace weir::actors

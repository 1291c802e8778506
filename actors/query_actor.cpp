// The query actor: one per query key on the unit's owner. It keeps the query's result
// materialized and ordered, turns each durable write into a change in time proportional to what
// changed (binary-search the rows it touched; no re-run, no snapshot diff), encodes each emission
// once per transfer mode in use, and sends every subscriber the same shared bytes.
#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

#include <boost/json/serialize.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "core/change_set.hpp"
#include "core/query_result.hpp"
#include "core/result_body.hpp"

namespace weir::actors {
namespace {

using core::record_ptr;
using core::transfer_mode;
using body_ptr = std::shared_ptr<const std::string>;

using sub_entry = subscriber;

/// Writes one result to a subscriber's sink: its envelope head, the shared body, the tail.
/// `now_ms` stamps the subscription's data-served time for the health feed (one relaxed store).
void deliver(const sub_entry& s, const body_ptr& body, std::int64_t now_ms) {
  if (auto sink = s.sink.lock()) {
    sink->send(outbound_frame{s.head, body, s.tail, s.live});
    if (s.served) {
      s.served->store(now_ms, std::memory_order_relaxed);
    }
  }
}

constexpr std::size_t mode_index(transfer_mode m) {
  return static_cast<std::size_t>(m);
}
constexpr std::size_t mode_count = 3;

struct query_state {
  runtime::impl* rt = nullptr;
  caf::actor shard;
  std::shared_ptr<const core::bound_query> q;
  std::vector<record_ptr> rows;  // every matching record, in the query's total order
  std::size_t no_identity = 0;   // rows lacking an arc-hub §5.1 identity
  std::vector<sub_entry> subs;
  std::vector<sub_entry> replicas;                       // remote gateways' watches (owner side)
  std::unordered_map<std::uint64_t, std::size_t> index;  // token → position in subs
  std::unordered_map<caf::actor_addr, std::size_t> monitored;  // connection → its subscriptions
  std::array<std::size_t, mode_count> mode_subs{};
  std::uint64_t seen = 0;
  std::uint64_t seq = 0;
  std::array<body_ptr, mode_count> snapshot_cache{};  // valid for `seq`
  static inline const char* name = "weir.query";

  bool single() const { return q->single_id.has_value(); }
  bool paged() const { return q->page_size > 0 && !single(); }

  bool match(const core::record& r) const {
    return (!q->single_id || r.id == *q->single_id) && q->where.matches(r.doc);
  }

  bool less(const record_ptr& a, const record_ptr& b) const {
    return q->order.compare(a->doc, b->doc) < 0;
  }

  std::size_t position(const record_ptr& r) const {
    auto it =
        std::lower_bound(rows.begin(), rows.end(), r,
                         [this](const record_ptr& a, const record_ptr& b) { return less(a, b); });
    return static_cast<std::size_t>(it - rows.begin());
  }

  /// Removes the row holding `r`'s record. Rows are matched by id (unique in a dataset), not
  /// by pointer: a gateway's replica receives its `before` versions as fresh copies.
  void erase(const record_ptr& r) {
    auto pos = position(r);
    auto same = [&r](const record_ptr& x) { return x == r || x->id == r->id; };
    std::size_t found = rows.size();
    for (auto i = pos; i < rows.size() && !less(r, rows[i]); ++i) {
      if (same(rows[i])) {
        found = i;
        break;
      }
    }
    if (found == rows.size()) {
      // Not where the order says: only possible if a comparator changed meaning; stay correct.
      auto it = std::find_if(rows.begin(), rows.end(), same);
      if (it == rows.end()) {
        return;
      }
      found = static_cast<std::size_t>(it - rows.begin());
    }
    if (!rows[found]->has_identity) {
      --no_identity;
    }
    rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(found));
  }

  /// Replaces every row: the query's matches among `all`, in order.
  void load(const std::vector<record_ptr>& all) {
    rows.clear();
    no_identity = 0;
    for (auto& r : all) {
      if (match(*r)) {
        rows.push_back(r);
        if (!r->has_identity) {
          ++no_identity;
        }
      }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [this](const record_ptr& a, const record_ptr& b) { return less(a, b); });
    snapshot_cache = {};
  }

  void insert(const record_ptr& r) {
    auto it =
        std::upper_bound(rows.begin(), rows.end(), r,
                         [this](const record_ptr& a, const record_ptr& b) { return less(a, b); });
    rows.insert(it, r);
    if (!r->has_identity) {
      ++no_identity;
    }
  }

  std::vector<record_ptr> view() const {
    if (!paged()) {
      return rows;
    }
    auto begin = std::min<std::uint64_t>(q->page * q->page_size, rows.size());
    auto end = std::min<std::uint64_t>(begin + q->page_size, rows.size());
    return {rows.begin() + static_cast<std::ptrdiff_t>(begin),
            rows.begin() + static_cast<std::ptrdiff_t>(end)};
  }

  core::paging_info paging() const {
    if (!paged()) {
      return {};
    }
    return {q->page, q->page_size, rows.size()};
  }

  std::optional<std::string> data_json() const {
    if (single()) {
      if (rows.empty()) {
        return std::nullopt;
      }
      return rows.front()->json;
    }
    std::string out;
    if (paged()) {
      core::append_record_array(out, view());
    } else {
      core::append_record_array(out, rows);
    }
    return out;
  }

  body_ptr snapshot_body(transfer_mode mode) {
    auto& cached = snapshot_cache[mode_index(mode)];
    if (cached) {
      return cached;
    }
    auto data = data_json();
    std::optional<std::string> cs;
    if (mode == transfer_mode::legacy && !single()) {
      // Legacy's first emission carries a change set against an empty baseline (§5).
      cs.emplace();
      core::append_change_set(*cs, view(), {}, {});
    }
    cached = std::make_shared<const std::string>(core::encode_result_body(
        data ? std::optional<std::string_view>{*data} : std::nullopt,
        cs ? std::optional<std::string_view>{*cs} : std::nullopt, paging()));
    return cached;
  }
};

using query_ptr = caf::stateful_actor<query_state>*;

/// JSON-set comparison (§5.1 step 3) through core's reference implementation: the rare path
/// taken only when some item has no identity.
std::string fallback_change_set(const std::vector<record_ptr>& before,
                                const std::vector<record_ptr>& after) {
  boost::json::array prev, cur;
  prev.reserve(before.size());
  cur.reserve(after.size());
  for (auto& r : before) {
    prev.emplace_back(r->doc);
  }
  for (auto& r : after) {
    cur.emplace_back(r->doc);
  }
  std::string out;
  core::append_change_set_json(out, core::compute_change_set(prev, cur));
  return out;
}

/// Identity walk of §5.1 step 4 over two views whose items all have identities.
std::string walk_change_set(const std::vector<record_ptr>& before,
                            const std::vector<record_ptr>& after) {
  std::unordered_map<std::string_view, const record_ptr*> old_ids;
  old_ids.reserve(before.size());
  for (auto& r : before) {
    old_ids.emplace(r->id, &r);
  }
  std::vector<record_ptr> added, replaced, removed;
  std::unordered_set<std::string_view> new_ids;
  new_ids.reserve(after.size());
  for (auto& r : after) {
    new_ids.insert(r->id);
    auto it = old_ids.find(r->id);
    if (it == old_ids.end()) {
      added.push_back(r);
    } else if (*it->second != r && (*it->second)->json != r->json) {
      replaced.push_back(r);
    }
  }
  for (auto& r : before) {
    if (!new_ids.count(r->id)) {
      removed.push_back(r);
    }
  }
  if (added.empty() && replaced.empty() && removed.empty()) {
    return {};
  }
  std::string out;
  core::append_change_set(out, added, replaced, removed);
  return out;
}

void emit(query_ptr self, std::optional<std::string> cs_json) {
  auto& st = self->state;
  std::array<body_ptr, mode_count> bodies{};
  std::optional<std::string> data;
  bool need_data = st.single() || st.mode_subs[mode_index(transfer_mode::full)] > 0 ||
                   st.mode_subs[mode_index(transfer_mode::legacy)] > 0;
  if (need_data) {
    data = st.data_json();
  }
  auto paging = st.paging();
  auto as_view = [](const std::optional<std::string>& s) {
    return s ? std::optional<std::string_view>{*s} : std::nullopt;
  };
  if (st.single()) {
    // Non-array data: every mode sends data and never a change set (§5).
    auto b = std::make_shared<const std::string>(
        core::encode_result_body(as_view(data), std::nullopt, paging));
    bodies.fill(b);
  } else {
    if (st.mode_subs[mode_index(transfer_mode::full)] > 0) {
      bodies[mode_index(transfer_mode::full)] = std::make_shared<const std::string>(
          core::encode_result_body(as_view(data), std::nullopt, paging));
    }
    if (st.mode_subs[mode_index(transfer_mode::delta)] > 0) {
      bodies[mode_index(transfer_mode::delta)] = std::make_shared<const std::string>(
          core::encode_result_body(std::nullopt, as_view(cs_json), paging));
    }
    if (st.mode_subs[mode_index(transfer_mode::legacy)] > 0) {
      bodies[mode_index(transfer_mode::legacy)] = std::make_shared<const std::string>(
          core::encode_result_body(as_view(data), as_view(cs_json), paging));
    }
  }
  auto now_ms = unix_now_ms();
  for (auto& s : st.subs) {
    if (s.live->load(std::memory_order_relaxed)) {
      deliver(s, bodies[mode_index(s.mode)], now_ms);
    }
  }
}

void on_changes(query_ptr self, const changes_msg& m) {
  auto& st = self->state;
  if (m.seq <= st.seq) {
    return;  // already part of the rows this actor started from
  }
  st.seq = m.seq;
  struct item {
    record_ptr before, after;
    bool was, now;
  };
  std::vector<item> items;
  bool identity_everywhere = st.no_identity == 0;
  for (const auto& c : *m.changes) {
    if (c.dataset != st.q->dataset) {
      continue;
    }
    bool was = c.before && st.match(*c.before);
    bool now = c.after && st.match(*c.after);
    if (was || now) {
      items.push_back({c.before, c.after, was, now});
      if ((was && !c.before->has_identity) || (now && !c.after->has_identity)) {
        identity_everywhere = false;
      }
    }
  }
  if (items.empty()) {
    return;
  }
  if (!st.replicas.empty()) {
    // What a gateway's replica needs to follow: the matching sides of what changed.
    std::vector<core::record_change> out;
    out.reserve(items.size());
    for (auto& it : items) {
      out.push_back(core::record_change{st.q->dataset, it.was ? it.before : nullptr,
                                        it.now ? it.after : nullptr});
    }
    for (auto& r : st.replicas) {
      r.replica->changes(m.seq, m.version_id, out);
    }
  }
  st.snapshot_cache = {};
  std::vector<record_ptr> old_view;
  std::size_t old_total = st.rows.size();
  bool incremental = !st.paged() && !st.single() && identity_everywhere;
  if (!incremental) {
    old_view = st.view();
  }
  std::vector<std::pair<std::size_t, record_ptr>> removed;
  if (incremental) {
    for (auto& it : items) {
      if (it.was && !it.now) {
        removed.emplace_back(st.position(it.before), it.before);
      }
    }
  }
  for (auto& it : items) {
    if (it.was) {
      st.erase(it.before);
    }
  }
  for (auto& it : items) {
    if (it.now) {
      st.insert(it.after);
    }
  }
  if (st.single()) {
    emit(self, std::nullopt);
    return;
  }
  std::string cs;
  if (incremental) {
    std::vector<std::pair<std::size_t, record_ptr>> added, replaced;
    for (auto& it : items) {
      if (!it.now) {
        continue;
      }
      auto pos = st.position(it.after);
      if (!it.was) {
        added.emplace_back(pos, it.after);
      } else if (it.before->json != it.after->json) {
        replaced.emplace_back(pos, it.after);
      }
    }
    auto by_pos = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::sort(added.begin(), added.end(), by_pos);
    std::sort(replaced.begin(), replaced.end(), by_pos);
    std::sort(removed.begin(), removed.end(), by_pos);
    auto strip = [](const std::vector<std::pair<std::size_t, record_ptr>>& v) {
      std::vector<record_ptr> out;
      out.reserve(v.size());
      for (auto& p : v) {
        out.push_back(p.second);
      }
      return out;
    };
    if (added.empty() && replaced.empty() && removed.empty()) {
      return;
    }
    core::append_change_set(cs, strip(added), strip(replaced), strip(removed));
  } else {
    auto new_view = st.view();
    bool all_identity =
        std::all_of(old_view.begin(), old_view.end(), [](auto& r) { return r->has_identity; }) &&
        std::all_of(new_view.begin(), new_view.end(), [](auto& r) { return r->has_identity; });
    cs = all_identity ? walk_change_set(old_view, new_view)
                      : fallback_change_set(old_view, new_view);
    static const std::string empty_change_set = R"({"added":[],"replaced":[],"removed":[]})";
    if (cs.empty() || cs == empty_change_set) {
      if (old_total == st.rows.size()) {
        return;  // nothing in this page and no paging figure changed
      }
      cs = empty_change_set;
    }
  }
  emit(self, std::move(cs));
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
  --st.mode_subs[mode_index(st.subs[pos].mode)];
  // A direct subscription has no connection actor, and a null address must not be hashed
  // (std::hash<actor_addr> dereferences it: this crashed once a hub subscriber shared the key).
  if (auto conn = st.subs[pos].conn.address()) {
    if (auto m = st.monitored.find(conn); m != st.monitored.end() && --m->second == 0) {
      st.monitored.erase(m);
      self->demonitor(conn);
    }
  }
  if (pos + 1 != st.subs.size()) {
    st.subs[pos] = std::move(st.subs.back());
    st.index[st.subs[pos].token] = pos;
  }
  st.subs.pop_back();
  return true;
}

/// Tells the shard once, when the last subscription just left (never for a no-op, so a late
/// duplicate can't reach a newer query actor of the same key; the shard also checks the sender).
void went_idle(query_ptr self) {
  auto& st = self->state;
  if (st.subs.empty() && st.replicas.empty()) {
    self->send(st.shard, query_idle_msg{st.q->key, st.seen});
  }
}

caf::behavior query_behavior(query_ptr self, runtime::impl* rt, caf::actor shard,
                             std::shared_ptr<const core::bound_query> q,
                             std::vector<record_ptr> rows, std::uint64_t seq) {
  auto& st = self->state;
  st.rt = rt;
  st.shard = shard;
  st.q = std::move(q);
  st.seq = seq;
  st.load(rows);
  rt->query_actors.fetch_add(1);
  self->attach_functor([rt] { rt->query_actors.fetch_sub(1); });
  self->monitor(shard);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source == st.shard.address()) {
      self->quit();
      return;
    }
    std::vector<std::uint64_t> gone;
    for (auto& s : st.subs) {
      if (s.conn.address() == dm.source) {
        gone.push_back(s.token);
      }
    }
    bool removed = false;
    for (auto t : gone) {
      removed = remove_sub(self, t) || removed;
    }
    st.monitored.erase(dm.source);
    if (removed) {
      went_idle(self);
    }
  });
  return {
      [self](const changes_msg& m) { on_changes(self, m); },
      [self](subscribe_msg& m) {
        auto& st = self->state;
        ++st.seen;
        auto& sub = m.sub;
        if (sub.replica) {
          sub.replica->snapshot(st.seq, st.rows);
          st.replicas.push_back(std::move(sub));
          return;
        }
        // Direct subscriptions have no connection actor: their owner unsubscribes explicitly.
        if (sub.conn && st.monitored[sub.conn.address()]++ == 0) {
          self->monitor(sub.conn);
        }
        st.index[sub.token] = st.subs.size();
        ++st.mode_subs[mode_index(sub.mode)];
        deliver(sub, st.snapshot_body(sub.mode), unix_now_ms());
        st.subs.push_back(std::move(sub));
      },
      [self](const unsubscribe_msg& m) {
        if (remove_sub(self, m.token)) {
          went_idle(self);
        }
      },
      [self](const resync_msg& m) {
        auto& st = self->state;
        for (auto& r : st.replicas) {
          if (r.token == m.token) {
            r.replica->snapshot(st.seq, st.rows);
          }
        }
      },
      [self](reset_msg& m) {
        // A replica starting over (gateway side): a fresh full baseline for every subscriber,
        // as after a reconnect (arc-hub: the subscription stays, its state is replaced).
        auto& st = self->state;
        st.seq = m.seq;
        st.load(m.rows);
        auto now_ms = unix_now_ms();
        for (auto& s : st.subs) {
          if (s.live->load(std::memory_order_relaxed)) {
            deliver(s, st.snapshot_body(s.mode), now_ms);
          }
        }
      },
      [self](const fail_msg& m) {
        // The owner stayed away (gateway side): each subscription ends with an Error from its
        // connection; a direct stream, which has no connection actor, is closed.
        auto& st = self->state;
        for (auto& s : st.subs) {
          end_subscription(self, s, m.reason);
        }
        st.subs.clear();
        st.index.clear();
        self->quit();
      },
      [self](stop_atom) { self->quit(); },
  };
}

}  // namespace

caf::actor spawn_query(runtime::impl& rt, caf::actor shard,
                       std::shared_ptr<const core::bound_query> query,
                       std::vector<core::record_ptr> rows, std::uint64_t seq) {
  return rt.sys->spawn(query_behavior, &rt, std::move(shard), std::move(query), std::move(rows),
                       seq);
}

}  // namespace weir::actors

// The query actor: one per query key, on the unit's owner and on every gateway that serves the
// key through a watch. It holds the query's rows as the owner computed them (a bounded query's
// window, applied delta by delta; an unbounded query's matches, in an order index), turns each
// update into the protocol's frames once per transfer mode or projection in use, and hands every
// subscriber the same shared bytes. Remote gateways' watches (replicas) get the updates as they
// are.
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
#include "core/ag_ui_state.hpp"
#include "core/change_set.hpp"
#include "core/json_diff.hpp"
#include "core/order_index.hpp"
#include "core/query_result.hpp"
#include "core/windowed_codec.hpp"

namespace weir::actors {
namespace {

using core::record_ptr;
using core::transfer_mode;
using body_ptr = std::shared_ptr<const std::string>;
using index_type = core::order_index<record_ptr>;

using sub_entry = subscriber;

/// Writes one result to a subscriber's sink: its envelope head, the shared body, the tail.
/// `now_ms` stamps the subscription's data-served time for the health feed (one relaxed store).
/// `baseline`: the body carries the whole value, not a change (see outbound_frame).
/// `origin_ns`: when the write behind it reached this node (outbound_frame::origin_ns), 0 for
/// a snapshot.
void deliver(const sub_entry& s, const body_ptr& body, std::int64_t now_ms, bool baseline,
             std::int64_t origin_ns = 0) {
  if (auto sink = s.sink.lock()) {
    // Stamped first: once the frame is handed over, a client may read it and ask the health
    // feed before this thread runs again.
    if (s.served) {
      s.served->store(now_ms, std::memory_order_relaxed);
    }
    sink->send(outbound_frame{s.head, body, s.tail, s.live, baseline, origin_ns});
  }
}

constexpr std::size_t mode_index(transfer_mode m) {
  return static_cast<std::size_t>(m);
}
// One encoded body per slot and emission: the four transfer modes, then AG-UI state events.
constexpr std::size_t ag_ui_slot = 4;
constexpr std::size_t slot_count = 5;
constexpr std::size_t legacy_slot = mode_index(transfer_mode::legacy);
constexpr std::size_t full_slot = mode_index(transfer_mode::full);
constexpr std::size_t delta_slot = mode_index(transfer_mode::delta);
constexpr std::size_t patch_slot = mode_index(transfer_mode::patch);
static_assert(patch_slot < ag_ui_slot);

std::size_t slot_of(const sub_entry& s) {
  return s.format == result_format::ag_ui_state ? ag_ui_slot : mode_index(s.mode);
}

struct query_state {
  runtime::impl* rt = nullptr;
  caf::actor shard;
  std::shared_ptr<const core::bound_query> q;
  std::vector<record_ptr> window;    // bounded: the rows shown, in order
  std::unique_ptr<index_type> rows;  // unbounded: every match
  std::optional<std::uint64_t> total;
  std::size_t no_identity = 0;  // rows lacking an arc-hub §5.1 identity
  std::vector<sub_entry> subs;
  std::vector<sub_entry> replicas;                       // raw consumers (watches, merges)
  std::unordered_map<std::uint64_t, std::size_t> index;  // token → position in subs
  std::array<std::size_t, slot_count> slot_subs{};
  std::size_t windowed_subs = 0;
  std::uint64_t seen = 0;
  std::uint64_t seq = 0;
  std::array<body_ptr, slot_count> snapshot_cache{};  // valid for `seq`
  body_ptr windowed_snapshot;                         // valid for `seq`
  std::int64_t held_bytes = 0;                        // JSON bytes of the rows held
  std::int64_t origin_ns = 0;  // the update being emitted: when its write reached this node
  static inline const char* name = "weir.query";

  query_state() = default;
  query_state(const query_state&) = delete;
  query_state& operator=(const query_state&) = delete;
  // The rows go with the state (functors attached to the actor run after it is destroyed).
  ~query_state() {
    if (rt) {
      rt->held_row_bytes.fetch_sub(held_bytes, std::memory_order_relaxed);
      for (std::size_t i = 0; i < slot_count; ++i) {
        count_subscriptions(i, -static_cast<std::int64_t>(slot_subs[i]));
      }
      count_subscriptions(slot_count, -static_cast<std::int64_t>(windowed_subs));
    }
  }

  /// The node's subscription figures by encoding (runtime_stats::subscriptions_by_encoding):
  /// slot_count stands for windowed streams.
  void count_subscriptions(std::size_t slot, std::int64_t n) {
    if (rt && n != 0) {
      rt->subscriptions_by_encoding[slot].fetch_add(n, std::memory_order_relaxed);
    }
  }

  bool bounded() const { return q->bounded(); }
  bool single() const { return q->single_id.has_value(); }
  bool arc_paged() const { return bounded() && !q->windowed; }
  bool object_scope() const {
    return q->windowed && q->windowed->scope == core::windowed_scope::object;
  }
  const core::projection& proj() const {
    static const core::projection none;
    return q->windowed ? q->windowed->proj : none;
  }

  /// The rows shown, in order.
  std::vector<record_ptr> view() const {
    if (bounded()) {
      return window;
    }
    std::vector<record_ptr> out;
    out.reserve(rows->size());
    for (auto it = rows->begin(); it != rows->end(); ++it) {
      out.push_back(it->rec);
    }
    return out;
  }

  std::size_t size() const { return bounded() ? window.size() : rows->size(); }

  /// A single-document query's document record; null while the object has none.
  record_ptr document() const {
    if (size() == 0) {
      return nullptr;
    }
    return bounded() ? window.front() : rows->begin()->rec;
  }

  /// Subscribers that take RFC 6902 patches of a single document (patch mode, AG-UI state).
  bool wants_patches() const {
    return single() && (slot_subs[patch_slot] > 0 || slot_subs[ag_ui_slot] > 0);
  }

  core::paging_info paging() const {
    if (!arc_paged()) {
      return {};
    }
    return {q->page, q->page_size, total.value_or(0)};
  }

  void account(std::int64_t delta_bytes) {
    held_bytes += delta_bytes;
    rt->held_row_bytes.fetch_add(delta_bytes, std::memory_order_relaxed);
  }

  static std::int64_t bytes_of(const std::vector<record_ptr>& rs) {
    std::int64_t n = 0;
    for (auto& r : rs) {
      n += static_cast<std::int64_t>(r->json.size());
    }
    return n;
  }

  /// Replaces every row (a fresh start).
  void load(view_snapshot snap) {
    account(-held_bytes);
    no_identity = 0;
    total = snap.total;
    seq = snap.seq;
    for (auto& r : snap.rows) {
      if (!r->has_identity) {
        ++no_identity;
      }
    }
    account(bytes_of(snap.rows));
    if (bounded()) {
      window = std::move(snap.rows);
    } else {
      if (!rows) {
        rows = std::make_unique<index_type>(q->order);
      }
      rows->build(snap.rows.begin(), snap.rows.end());
    }
    snapshot_cache = {};
    windowed_snapshot = nullptr;
  }

  /// A single-document query's document JSON; nullopt while the object has none.
  std::optional<std::string_view> document_json() const {
    auto doc = document();
    return doc ? std::optional<std::string_view>{doc->json} : std::nullopt;
  }

  /// Appends `[json,…]` of the rows shown, walking them where they are held (no copy of the row
  /// list, no reference count touched): the `data` of a collection's full result.
  void append_rows(std::string& out) const {
    out.push_back('[');
    bool first = true;
    auto one = [&](const record_ptr& r) {
      if (!first) {
        out.push_back(',');
      }
      first = false;
      out.append(r->json);
    };
    if (bounded()) {
      for (const auto& r : window) {
        one(r);
      }
    } else {
      for (auto it = rows->begin(); it != rows->end(); ++it) {
        one(it->rec);
      }
    }
    out.push_back(']');
  }

  /// About what append_rows appends (held_bytes is every held row's JSON), to reserve it once.
  std::size_t rows_bytes() const {
    return static_cast<std::size_t>(std::max<std::int64_t>(held_bytes, 0)) + size() + 2;
  }

  /// A body with the whole value as `data` (a collection's rows, written in place, or the single
  /// document; omitted while it has none) and, when given, `changeSet`.
  std::string whole_body(std::optional<std::string_view> cs_json) const {
    std::optional<std::string_view> doc;
    if (single()) {
      doc = document_json();
    }
    core::result_body_builder b((single() ? (doc ? doc->size() : 0) : rows_bytes()) +
                                (cs_json ? cs_json->size() : 0));
    if (!single()) {
      append_rows(b.member("data"));
    } else if (doc) {
      b.member("data") += *doc;
    }
    if (cs_json) {
      b.member("changeSet") += *cs_json;
    }
    return b.finish(paging());
  }

  /// The first emission (or a fresh baseline) for `slot`: data, and for legacy collections a
  /// change set against an empty baseline; for AG-UI, a STATE_SNAPSHOT.
  body_ptr snapshot_body(std::size_t slot) {
    auto& cached = snapshot_cache[slot];
    if (cached) {
      return cached;
    }
    if (slot == ag_ui_slot) {
      // AG-UI state streams are of single documents; a collection's state would be its rows.
      std::string rows;
      if (!single()) {
        append_rows(rows);
      }
      cached = std::make_shared<const std::string>(core::encode_state_snapshot(
          single() ? document_json() : std::optional<std::string_view>{rows}));
      return cached;
    }
    std::optional<std::string> cs;
    if (slot == legacy_slot && !single()) {
      // Legacy's first emission carries a change set against an empty baseline (§5).
      cs.emplace();
      core::append_change_set(*cs, view(), {}, {});
    }
    cached = std::make_shared<const std::string>(
        whole_body(cs ? std::optional<std::string_view>{*cs} : std::nullopt));
    return cached;
  }

  body_ptr windowed_snapshot_body() {
    if (!windowed_snapshot) {
      auto v = view();
      auto records = core::encode_windowed_records(v, proj());
      windowed_snapshot = std::make_shared<const std::string>(
          core::encode_windowed_snapshot(records, q->windowed->include_total ? total : std::nullopt,
                                         q->windowed->offset, v.size()));
    }
    return windowed_snapshot;
  }

  view_snapshot current() const { return view_snapshot{seq, view(), total}; }
};

using query_ptr = caf::stateful_actor<query_state>*;

/// What the JSON-set fallback (§5.1 step 3) needs of an update besides its delta: the rows
/// that left and the old versions of the rows it replaced, each with its rank in the old view.
struct old_rows {
  std::vector<std::pair<std::size_t, record_ptr>> removed;
  std::unordered_map<std::string_view, std::pair<std::size_t, record_ptr>> replaced;  // by id
};

/// JSON-set comparison (§5.1 step 3) from what the update changed instead of from both whole
/// views (which parsed and serialized every row twice on every write once one row lacked an
/// identity). It gives the same arrays: a row both views hold in one version has one text on
/// both sides, and every record's text carries its own unique "id", so no other two rows can
/// have equal text. `added`: the upserts in the new order, except a new version whose
/// canonical text equals the old one's; `removed`: the rows that left and the old versions
/// replaced by other text, in the old order. O(rows changed).
std::string fallback_change_set(const core::window_delta& d, const old_rows& old) {
  core::change_set cs;
  auto gone = old.removed;
  for (const auto& u : d.upserts) {
    auto doc = core::parse_doc(*u.rec);
    if (!u.added) {
      if (auto it = old.replaced.find(u.rec->id); it != old.replaced.end()) {
        if (boost::json::serialize(core::parse_doc(*it->second.second)) ==
            boost::json::serialize(doc)) {
          continue;  // the same canonical JSON: in both sets
        }
        gone.push_back(it->second);
      }
    }
    cs.added.emplace_back(std::move(doc));
  }
  std::stable_sort(gone.begin(), gone.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [rank, r] : gone) {
    cs.removed.emplace_back(core::parse_doc(*r));
  }
  std::string out;
  core::append_change_set_json(out, cs);
  return out;
}

/// The Arc change set of a delta: added and replaced in the new order, removed in the old.
std::string arc_change_set(const core::window_delta& d) {
  std::vector<record_ptr> added, replaced, removed;
  for (const auto& u : d.upserts) {
    (u.added ? added : replaced).push_back(u.rec);
  }
  for (const auto& r : d.removed) {
    removed.push_back(r.rec);
  }
  std::string out;
  core::append_change_set(out, added, replaced, removed);
  return out;
}

/// The RFC 6902 patch from one version of a document to the next, computed once per change
/// for every patch-mode and AG-UI subscriber of the query.
std::string document_patch(const record_ptr& before, const record_ptr& after) {
  return boost::json::serialize(core::json_diff(core::parse_doc(*before), core::parse_doc(*after)));
}

/// One emission to every hub and direct subscriber: each body is encoded once per slot in use.
/// `cs_json`: a collection's change set. `patch_json`: a single document's patch from the
/// previous emission (nullopt when the document appeared or went: then everyone gets the whole
/// value, a baseline).
void emit_arc(query_ptr self, std::optional<std::string> cs_json,
              std::optional<std::string> patch_json = std::nullopt) {
  auto& st = self->state;
  std::array<body_ptr, slot_count> bodies{};
  std::array<bool, slot_count> baseline{};
  auto used = [&st](std::size_t slot) { return st.slot_subs[slot] > 0; };
  auto paging = st.paging();
  auto as_view = [](const std::optional<std::string>& s) {
    return s ? std::optional<std::string_view>{*s} : std::nullopt;
  };
  if (st.single()) {
    // Non-array data: every mode sends data and never a change set (§5); patch mode sends the
    // document's patch instead, once it has a baseline. The whole value goes to the data modes,
    // and to everyone when there is no patch (a baseline); with only patch and AG-UI
    // subscribers and a patch, nobody needs it.
    bool plain = used(legacy_slot) || used(full_slot) || used(delta_slot);
    body_ptr b;
    if (plain || !patch_json) {
      b = std::make_shared<const std::string>(st.whole_body(std::nullopt));
    }
    bodies[legacy_slot] = bodies[full_slot] = bodies[delta_slot] = b;
    baseline[legacy_slot] = baseline[full_slot] = baseline[delta_slot] = true;
    if (used(patch_slot)) {
      bodies[patch_slot] = patch_json
                               ? std::make_shared<const std::string>(core::encode_result_body(
                                     std::nullopt, std::nullopt, paging, *patch_json))
                               : b;
      baseline[patch_slot] = !patch_json;
    }
    if (used(ag_ui_slot)) {
      bodies[ag_ui_slot] = std::make_shared<const std::string>(
          patch_json ? core::encode_state_delta(*patch_json)
                     : core::encode_state_snapshot(st.document_json()));
      baseline[ag_ui_slot] = !patch_json;
    }
  } else {
    // The rows are written straight into each body that carries them: one walk and one copy
    // of every row's bytes per body, whatever the number of subscribers.
    if (used(full_slot)) {
      bodies[full_slot] = std::make_shared<const std::string>(st.whole_body(std::nullopt));
      baseline[full_slot] = true;
    }
    // A collection asked for patches gets delta's change sets (arc-hub decision 9).
    if (used(delta_slot) || used(patch_slot)) {
      bodies[delta_slot] = bodies[patch_slot] = std::make_shared<const std::string>(
          core::encode_result_body(std::nullopt, as_view(cs_json), paging));
    }
    if (used(legacy_slot)) {
      bodies[legacy_slot] = std::make_shared<const std::string>(st.whole_body(as_view(cs_json)));
      baseline[legacy_slot] = true;
    }
  }
  auto now_ms = unix_now_ms();
  for (auto& s : st.subs) {
    if (s.windowed_stream) {
      continue;
    }
    if (s.live->load(std::memory_order_relaxed)) {
      auto slot = slot_of(s);
      deliver(s, bodies[slot], now_ms, baseline[slot], st.origin_ns);
    }
  }
}

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
void reparent(query_ptr self, const caf::actor& shard) {
  auto& st = self->state;
  if (!shard || shard == st.shard) {
    return;
  }
  self->demonitor(st.shard);
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

/// Turns an unbounded query's changes into a delta, applying them to its rows. `old`, when set,
/// gets the rows that left and the replaced versions with their old ranks.
core::window_delta apply_changes(query_state& st, const std::vector<view_change>& changes,
                                 old_rows* old) {
  core::window_delta d;
  auto& reader = core::thread_doc_reader();
  auto position = [&](const record_ptr& r, const core::doc_ptr& doc) {
    return doc ? st.rows->position_of(*doc) : st.rows->position_of(reader.read(*r));
  };
  // Old ranks first, for the removed list's order.
  std::vector<std::pair<std::size_t, core::window_removal>> removed;
  std::vector<core::sort_position> before_pos(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.before) {
      before_pos[i] = position(c.before, c.before_doc);
      if (!c.after) {
        auto reason =
            c.after_exists ? core::removal_reason::filtered_out : core::removal_reason::deleted;
        auto at = st.rows->lower_bound(before_pos[i]).second;
        removed.emplace_back(at, core::window_removal{c.before, reason});
      } else if (old) {
        auto at = st.rows->lower_bound(before_pos[i]).second;
        old->replaced.emplace(c.before->id, std::pair{at, c.before});
      }
    }
  }
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.before) {
      st.rows->erase(before_pos[i]);
      st.account(-static_cast<std::int64_t>(c.before->json.size()));
      if (!c.before->has_identity) {
        --st.no_identity;
      }
    }
  }
  std::vector<core::sort_position> after_pos(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.after) {
      after_pos[i] = position(c.after, c.after_doc);
      st.rows->insert(c.after, after_pos[i]);
      st.account(static_cast<std::int64_t>(c.after->json.size()));
      if (!c.after->has_identity) {
        ++st.no_identity;
      }
    }
  }
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.after) {
      auto rank = st.rows->lower_bound(after_pos[i]).second;
      d.upserts.push_back(core::window_upsert{rank, c.after, !c.before, c.ops});
    }
  }
  std::sort(d.upserts.begin(), d.upserts.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  std::stable_sort(removed.begin(), removed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [at, r] : removed) {
    if (old) {
      old->removed.emplace_back(at, r.rec);
    }
    d.removed.push_back(std::move(r));
  }
  if (st.q->count && st.total) {
    std::int64_t t = static_cast<std::int64_t>(*st.total);
    for (const auto& c : changes) {
      t += (c.after ? 1 : 0) - (c.before ? 1 : 0);
    }
    st.total = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t));
  }
  return d;
}

/// Applies a bounded query's delta to its window. Removed rows are matched by id (a gateway's
/// delta names them only by id). `old`, when set, gets the rows that left and the replaced
/// versions with their old ranks.
core::window_delta apply_delta(query_state& st, const core::window_delta& in, old_rows* old) {
  core::window_delta d = in;
  std::unordered_map<std::string_view, const record_ptr*> shown;
  shown.reserve(st.window.size());
  for (const auto& r : st.window) {
    shown.emplace(r->id, &r);
  }
  auto rank_of = [&st](const record_ptr* p) {
    return static_cast<std::size_t>(p - st.window.data());
  };
  for (auto& r : d.removed) {
    if (auto it = shown.find(r.rec->id); it != shown.end()) {
      r.rec = *it->second;
      if (old) {
        old->removed.emplace_back(rank_of(it->second), r.rec);
      }
    }
  }
  std::int64_t bytes = 0;
  for (const auto& r : d.removed) {
    bytes -= static_cast<std::int64_t>(r.rec->json.size());
    if (!r.rec->has_identity) {
      --st.no_identity;
    }
  }
  for (const auto& u : d.upserts) {
    if (!u.added) {
      if (auto it = shown.find(u.rec->id); it != shown.end()) {
        if (old) {
          old->replaced.emplace((*it->second)->id, std::pair{rank_of(it->second), *it->second});
        }
        bytes -= static_cast<std::int64_t>((*it->second)->json.size());
        if (!(*it->second)->has_identity) {
          --st.no_identity;
        }
      }
    }
    bytes += static_cast<std::int64_t>(u.rec->json.size());
    if (!u.rec->has_identity) {
      ++st.no_identity;
    }
  }
  shown.clear();
  core::apply_window_delta(st.window, d);
  st.account(bytes);
  if (in.total) {
    st.total = in.total;
  }
  return d;
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

caf::behavior query_behavior(query_ptr self, runtime::impl* rt, caf::actor shard,
                             std::shared_ptr<const core::bound_query> q, view_snapshot snap) {
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
        auto from = caf::actor_cast<caf::actor>(self->current_sender());
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

}  // namespace

caf::actor spawn_query(runtime::impl& rt, caf::actor shard,
                       std::shared_ptr<const core::bound_query> query, view_snapshot snapshot) {
  return rt.sys->spawn(query_behavior, &rt, std::move(shard), std::move(query),
                       std::move(snapshot));
}

}  // namespace weir::actors

// weir::actors query actor internals — what the query actor's files share: its state (the
// rows, the subscribers by transfer-mode slot, the cached snapshot bodies), delivery of a frame
// to one subscriber, and how an update is turned into rows and bodies (query_updates.cpp).
// Private to query_actor.cpp and query_updates.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

#include <boost/json/serialize.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "core/ag_ui_state.hpp"
#include "core/change_set.hpp"
#include "core/json_diff.hpp"
#include "core/order_index.hpp"
#include "core/query_result.hpp"
#include "core/windowed_codec.hpp"

namespace weir::actors::query_impl {

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
inline void deliver(const sub_entry& s, const body_ptr& body, std::int64_t now_ms, bool baseline,
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

inline std::size_t slot_of(const sub_entry& s) {
  return s.format == result_format::ag_ui_state ? ag_ui_slot : mode_index(s.mode);
}

struct query_state {
  runtime::impl* rt = nullptr;
  query_parent_actor shard;  // what runs this query: a shard, a remote shard or a space view
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

using query_ptr = query_actor::stateful_pointer<query_state>;

/// What the JSON-set fallback (§5.1 step 3) needs of an update besides its delta: the rows
/// that left and the old versions of the rows it replaced, each with its rank in the old view.
struct old_rows {
  std::vector<std::pair<std::size_t, record_ptr>> removed;
  std::unordered_map<std::string_view, std::pair<std::size_t, record_ptr>> replaced;  // by id
};

// query_updates.cpp

/// JSON-set comparison (§5.1 step 3) from what the update changed instead of from both whole
/// views (which parsed and serialized every row twice on every write once one row lacked an
/// identity). It gives the same arrays: a row both views hold in one version has one text on
/// both sides, and every record's text carries its own unique "id", so no other two rows can
/// have equal text. `added`: the upserts in the new order, except a new version whose
/// canonical text equals the old one's; `removed`: the rows that left and the old versions
/// replaced by other text, in the old order. O(rows changed).
std::string fallback_change_set(const core::window_delta& d, const old_rows& old);

/// The Arc change set of a delta: added and replaced in the new order, removed in the old.
std::string arc_change_set(const core::window_delta& d);

/// The RFC 6902 patch from one version of a document to the next, computed once per change
/// for every patch-mode and AG-UI subscriber of the query.
std::string document_patch(const record_ptr& before, const record_ptr& after);

/// One emission to every hub and direct subscriber: each body is encoded once per slot in use.
/// `cs_json`: a collection's change set. `patch_json`: a single document's patch from the
/// previous emission (nullopt when the document appeared or went: then everyone gets the whole
/// value, a baseline).
void emit_arc(query_ptr self, std::optional<std::string> cs_json,
              std::optional<std::string> patch_json = std::nullopt);

/// Turns an unbounded query's changes into a delta, applying them to its rows. `old`, when set,
/// gets the rows that left and the replaced versions with their old ranks.
core::window_delta apply_changes(query_state& st, const std::vector<view_change>& changes,
                                 old_rows* old);

/// Applies a bounded query's delta to its window. Removed rows are matched by id (a gateway's
/// delta names them only by id). `old`, when set, gets the rows that left and the replaced
/// versions with their old ranks.
core::window_delta apply_delta(query_state& st, const core::window_delta& in, old_rows* old);

}  // namespace weir::actors::query_impl

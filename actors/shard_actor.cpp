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
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/skip.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/idempotency_memory.hpp"
#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "actors/unit_idleness.hpp"
#include "core/document_check.hpp"
#include "core/filter.hpp"
#include "core/json_patch.hpp"
#include "core/match_spans.hpp"
#include "core/order_index.hpp"
#include "core/record_rules.hpp"
#include "core/update_ops.hpp"
#include "core/version_id.hpp"
#include "core/window_view.hpp"
#include "log/log.hpp"

namespace weir::actors {

/// A loader thread → a shard: the index of `key` on `dataset` it built from the records the
/// shard handed it (see start_index_build).
struct index_built_msg {
  std::string dataset;
  std::string key;
  std::shared_ptr<core::order_index<core::record_ptr>> idx;
};

/// A loader thread → a shard: how many of the records the shard handed it match the filter
/// `where_text` of `dataset` (see start_count).
struct count_done_msg {
  std::string dataset;
  std::string where_text;
  std::uint64_t matches = 0;
};

}  // namespace weir::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::index_built_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::count_done_msg)

namespace weir::actors {
namespace {

using core::record_ptr;
using index_type = core::order_index<record_ptr>;
using clock_type = std::chrono::steady_clock;

struct view_entry;

struct index_entry {
  std::shared_ptr<index_type> idx;
  std::vector<view_entry*> views;  // the bounded queries reading it
  clock_type::time_point unused_since = clock_type::now();
};

/// A filter's number of matches in a dataset, kept after the last window that counted it closed
/// (Arc paging's totalItems, includeTotal): a client paging through a filtered query opens each
/// page after closing the last, and counting afresh evaluates the filter on every record (about
/// a second at a million). Kept current by every write (one filter evaluation per change for
/// each kept count), dropped after unitIdleMs unused.
struct kept_count {
  core::filter where;
  std::uint64_t matches = 0;
  clock_type::time_point used = clock_type::now();
};
constexpr std::size_t max_kept_counts = 8;  // per dataset of a unit: the cost each write pays

/// An index being built on a loader thread from the records as they were when it started: a
/// sort's first window at a million records would otherwise hold the unit's writes for most of
/// a second. Writes go on meanwhile; what they publish is journaled and applied to the index
/// when it arrives, and the subscriptions that need it wait here.
struct index_build {
  std::vector<subscribe_msg> waiting;                      // in arrival order
  std::vector<std::pair<record_ptr, record_ptr>> journal;  // (before, after) published since
  bool purged = false;  // an object delete since: the built index starts empty
};
/// Below this many records an index is built in place: a few milliseconds, less than the trip.
/// The same bound decides where a filter's first count runs (start_count).
constexpr std::size_t build_elsewhere_from = 16384;

struct dataset_state {
  core::record_set records;
  std::map<std::string, index_entry> indexes;   // by sort text
  std::map<std::string, index_build> building;  // by sort text
  std::map<std::string, kept_count> counts;     // by bound_query::where_text
  /// Counts being taken on a loader thread (the same journal and waiting list as an index
  /// build), by where_text: a filter's first count at a million records held the unit's
  /// writes for ~0.3 s (docs/performance.md).
  std::map<std::string, index_build> counting;

  /// Calls fn(job) for every build and count in progress.
  template <class Fn>
  void for_each_job(Fn&& fn) {
    for (auto& [k, b] : building) {
      fn(b);
    }
    for (auto& [k, c] : counting) {
      fn(c);
    }
  }
  void clear_jobs() {
    building.clear();
    counting.clear();
  }
};

/// A write applied in memory but not yet durable: later writes build on it, queries don't see it.
struct overlay_entry {
  record_ptr rec;  // nullptr: deleted by the pending write
  core::doc_ptr doc;
  std::uint64_t seq = 0;
  bool captured = false;  // the pending write is another program's change (write_batch::captured)
};

struct pending_write {
  std::uint64_t seq = 0;
  std::string version_id;
  std::shared_ptr<std::vector<core::record_change>> changes;
  write_callback done;
  bool object_deleted = false;  // a delete_object that purged the unit
  bool synthetic = false;       // the property-document side of an object delete
  /// Records the store wrote otherwise than staged (write_batch::corrected): published as such.
  std::shared_ptr<std::vector<store::record_write>> corrected;
  bool captured = false;  // another program's change, read back (write_batch::captured)
  std::int64_t staged_ns = steady_now_ns();  // view_update::origin_ns of what it publishes
  core::idempotency_entry key;               // its Idempotency-Key (key.key empty: none)
};

/// One query key on this unit.
struct view_entry {
  caf::actor actor;
  std::shared_ptr<const core::bound_query> q;
  std::string route;      // unbounded: dataset, or dataset '\0' id for a single document
  std::string index_key;  // bounded: its index in the dataset
  std::unique_ptr<core::window_view> window;
  std::uint64_t matched = 0;  // unbounded: how many records match (its total when counted)
  std::uint64_t forwarded = 0;
};

struct shard_state {
  runtime::impl* rt = nullptr;
  store::unit_key unit;
  std::uint64_t seq = 0;  // last sequence handed to the store
  /// The run of batches the pending writes belong to (write_batch::origin): a new one after
  /// writes were refused, whose successors the store then refuses too.
  std::uint64_t origin = 0;
  idempotency_memory keys;  // Idempotency-Keys of acknowledged and in-flight writes
  bool deleted = false;     // the object was deleted and nothing was written since (published)
  std::int64_t last_modified_ms = 0;  // objects unit: the latest `modifiedAt` stamped
  std::unordered_map<std::string, dataset_state> data;  // durable, published state
  std::unordered_map<std::string, overlay_entry> overlay;
  std::deque<pending_write> pending;
  std::size_t refreshing = 0;  // change capture's reads under way in the store
  /// The last write staged before the store corrected one (write_batch::corrected): writes up
  /// to it may have been staged on what the correction replaced, so their `before` is taken
  /// from what was published instead.
  std::uint64_t rebase_through = 0;
  /// Writes up to this sequence were refused by the store's fence (refuse_pending).
  std::uint64_t refused_through = 0;
  /// Batches handed to the store and not answered yet (pending, or refused but still queued).
  std::size_t in_store = 0;
  /// Elastic membership: the epoch of the owners this shard's state is valid under (from its
  /// spawn, moved on while its unit stays here): stamped on each batch, for the store's fence.
  std::uint64_t valid_epoch = 0;
  std::unordered_map<std::string, view_entry> views;  // by query key
  /// Set once the unit's owner changed (hand_over_msg): what reaches this shard goes there,
  /// and the shard stops once its own writes are answered.
  caf::actor successor;
  /// Spawned to take a unit over from `predecessor`: loading waits for its handover_done_msg.
  caf::actor predecessor;
  std::vector<adopt_msg> adopted;  // its query actors, taken over once the unit is loaded
  // Unbounded queries by what a change can concern: collection queries by dataset,
  // single-document ones by (dataset, id), so a write wakes only those it may change.
  std::unordered_map<std::string, std::vector<view_entry*>> routes;
  unit_idleness idle;
  static inline const char* name = "weir.shard";
};

using shard_ptr = caf::stateful_actor<shard_state>*;

std::string overlay_key(std::string_view dataset, std::string_view id) {
  std::string k{dataset};
  k.push_back('\0');
  k.append(id);
  return k;
}

std::string sort_text(const core::sort_spec& s) {
  boost::json::array a;
  for (const auto& k : s.keys()) {
    a.push_back(boost::json::array{boost::json::string{k.path}, k.descending});
  }
  return boost::json::serialize(a);
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The latest version of a record, pending writes included (its document when known).
std::pair<record_ptr, core::doc_ptr> current(shard_state& st, const std::string& dataset,
                                             const std::string& id) {
  if (auto it = st.overlay.find(overlay_key(dataset, id)); it != st.overlay.end()) {
    return {it->second.rec, it->second.doc};
  }
  auto ds = st.data.find(dataset);
  if (ds == st.data.end()) {
    return {};
  }
  auto it = ds->second.records.find(std::string_view{id});
  return it == ds->second.records.end() ? std::pair<record_ptr, core::doc_ptr>{}
                                        : std::pair<record_ptr, core::doc_ptr>{*it, nullptr};
}

core::doc_ptr doc_of(const record_ptr& r, core::doc_ptr known) {
  if (known || !r) {
    return known;
  }
  return std::make_shared<const boost::json::object>(core::parse_doc(*r));
}

/// Every record of the unit as of the latest pending write, keyed by (dataset, id).
std::vector<std::pair<std::string, record_ptr>> all_current(shard_state& st) {
  std::vector<std::pair<std::string, record_ptr>> out;
  std::unordered_set<std::string> seen;
  for (auto& [k, e] : st.overlay) {
    seen.insert(k);
    if (e.rec) {
      out.emplace_back(k.substr(0, k.find('\0')), e.rec);
    }
  }
  for (auto& [ds, d] : st.data) {
    for (auto& r : d.records) {
      if (!seen.count(overlay_key(ds, r->id))) {
        out.emplace_back(ds, r);
      }
    }
  }
  return out;
}

/// A change being prepared: the new document is stamped once the versionId is known.
struct staged {
  std::string dataset;
  std::string id;
  record_ptr before;
  core::doc_ptr before_doc;
  std::optional<boost::json::object> after;  // nullopt: delete
  std::shared_ptr<const core::change_ops> ops;
  std::string update{};  // a PATCH's body, for a store that may apply it again (record_write)
};

/// The server-maintained `modifiedAt` of a property document: milliseconds since the epoch,
/// strictly growing across the space's objects (the objects unit stamps them all) even when
/// writes land within one millisecond or the clock steps back, so `-modifiedAt` orders objects
/// by their last write.
void stamp_modified(shard_state& st, boost::json::object& doc, const boost::json::object* before) {
  std::int64_t next = std::max(now_ms(), st.last_modified_ms + 1);
  if (before) {
    if (const auto* prev = before->if_contains("modifiedAt"); prev && prev->is_int64()) {
      next = std::max(next, prev->get_int64() + 1);
    }
  }
  st.last_modified_ms = next;
  doc["modifiedAt"] = next;
}

core::result<std::vector<staged>> stage(shard_state& st, write_command& cmd) {
  std::vector<staged> out;
  // Ids come from URL segments or gRPC fields: check each before anything is staged.
  auto check = [](std::string_view v, std::string_view field) {
    return core::validate_id(v, field);
  };
  if (auto r = check(cmd.space, "space"); !r) {
    return std::move(r).error();
  }
  // Every client write names an object; an empty one would address the space's `objects`
  // unit, which only the property-document paths may touch.
  if (cmd.kind == write_kind::delete_object_document) {
    if (auto r = check(cmd.id, "objectId"); !r) {
      return std::move(r).error();
    }
  } else if (auto r = check(cmd.object, "objectId"); !r) {
    return std::move(r).error();
  }
  bool record_op = cmd.kind == write_kind::put_record || cmd.kind == write_kind::patch_record ||
                   cmd.kind == write_kind::delete_record ||
                   cmd.kind == write_kind::json_patch_record;
  if (record_op || cmd.kind == write_kind::batch) {
    if (auto r = check(cmd.dataset, "dataset"); !r) {
      return std::move(r).error();
    }
  }
  if (record_op) {
    if (auto r = check(cmd.id, "id"); !r) {
      return std::move(r).error();
    }
  }
  auto replace = [&](std::string dataset, std::string id, boost::json::object doc,
                     bool property_document) {
    auto [before, bdoc] = current(st, dataset, id);
    bdoc = doc_of(before, bdoc);
    if (property_document) {
      stamp_modified(st, doc, bdoc.get());
    }
    auto ops = std::make_shared<const core::change_ops>(core::ops_for_replace(bdoc.get(), doc));
    out.push_back({std::move(dataset), std::move(id), std::move(before), std::move(bdoc),
                   std::move(doc), std::move(ops)});
  };
  switch (cmd.kind) {
    case write_kind::put_object: {
      auto rec = core::normalize_record(std::move(cmd.body), cmd.object);
      if (!rec) {
        return std::move(rec).error();
      }
      replace(std::string{objects_dataset}, cmd.object, std::move(rec.value()), true);
      break;
    }
    case write_kind::put_record: {
      auto rec = core::normalize_record(std::move(cmd.body), cmd.id);
      if (!rec) {
        return std::move(rec).error();
      }
      replace(cmd.dataset, cmd.id, std::move(rec.value()), false);
      break;
    }
    case write_kind::patch_record: {
      const auto& limits = st.rt->opts.records;
      auto spec = core::parse_update(cmd.body, limits);
      if (!spec) {
        return std::move(spec).error();
      }
      auto [before, bdoc] = current(st, cmd.dataset, cmd.id);
      if (!before) {
        return core::make_error(
            "record.not_found",
            "record '" + cmd.id + "' does not exist in dataset '" + cmd.dataset + "'",
            {{"id", cmd.id}, {"dataset", cmd.dataset}});
      }
      bdoc = doc_of(before, bdoc);
      boost::json::object doc = *bdoc;
      if (auto r = core::apply_update(spec.value(), doc); !r) {
        return std::move(r).error();
      }
      // What the ops made of the record: a $set may have added a member past the bound.
      if (auto r = core::check_document(doc, limits); !r) {
        return std::move(r).error();
      }
      auto ops = std::make_shared<const core::change_ops>(core::ops_for_update(spec.value(), doc));
      out.push_back(
          {cmd.dataset, cmd.id, before, std::move(bdoc), std::move(doc), std::move(ops),
           st.rt->store.shared_with_others() ? boost::json::serialize(cmd.body) : std::string{}});
      break;
    }
    case write_kind::json_patch_record:
    case write_kind::json_patch_object: {
      // RFC 6902, atomically: the patch applies to the current document as a whole or not at
      // all, and what it leaves must still be a valid record with the same id.
      bool object = cmd.kind == write_kind::json_patch_object;
      std::string dataset = object ? std::string{objects_dataset} : cmd.dataset;
      const std::string& id = object ? cmd.object : cmd.id;
      auto [before, bdoc] = current(st, dataset, id);
      if (!before) {
        return object ? core::make_error("object.not_found",
                                         "object '" + id + "' has no property document to patch",
                                         {{"objectId", id}})
                      : core::make_error(
                            "record.not_found",
                            "record '" + id + "' does not exist in dataset '" + dataset + "'",
                            {{"id", id}, {"dataset", dataset}});
      }
      bdoc = doc_of(before, bdoc);
      // One copy of the current document: the patch works on it, the original stays as it is.
      const auto& limits = st.rt->opts.records;
      auto result =
          core::patched(boost::json::value(*bdoc), cmd.body, core::patch_mode::strict, limits);
      if (!result) {
        return std::move(result).error();
      }
      auto& doc = result->doc;
      if (!doc.is_object()) {
        return core::make_error("patch.invalid_result",
                                "the patched document must still be a JSON object");
      }
      if (auto r = core::check_document(doc, limits); !r) {
        return std::move(r).error();
      }
      auto rec = core::normalize_record(std::move(doc), id);
      if (!rec) {
        return std::move(rec).error();
      }
      replace(std::move(dataset), id, std::move(rec.value()), object);
      break;
    }
    case write_kind::delete_object_document:
      cmd.dataset = std::string{objects_dataset};
      [[fallthrough]];
    case write_kind::delete_record: {
      auto [before, bdoc] = current(st, cmd.dataset, cmd.id);
      if (!before) {
        return core::make_error(
            "record.not_found",
            "record '" + cmd.id + "' does not exist in dataset '" + cmd.dataset + "'",
            {{"id", cmd.id}, {"dataset", cmd.dataset}});
      }
      out.push_back({cmd.dataset, cmd.id, before, std::move(bdoc), std::nullopt, nullptr});
      break;
    }
    case write_kind::delete_object: {
      for (auto& [ds, r] : all_current(st)) {
        out.push_back({ds, r->id, r, nullptr, std::nullopt, nullptr});
      }
      break;
    }
    case write_kind::refresh_records:
      // Never staged from a command: handle_refresh reads the rows first (stage_captured).
      return core::make_error("request.invalid_field", "a refresh is not a write");
    case write_kind::batch: {
      if (auto ok = core::check_batch_fields(cmd.body); !ok) {
        return ok.error();
      }
      auto& b = cmd.body.as_object();
      std::unordered_set<std::string> ids;
      std::unordered_set<std::string> deleted;
      if (auto* up = b.if_contains("upsert")) {
        if (!up->is_array()) {
          return core::make_error("request.invalid_field", "\"upsert\" must be an array of records",
                                  {{"field", "upsert"}});
        }
        std::size_t i = 0;
        for (auto& item : up->as_array()) {
          auto rec = core::normalize_record(std::move(item), std::nullopt);
          if (!rec) {
            auto e = std::move(rec).error();
            e.details["index"] = i;
            return e;
          }
          std::string id{rec->at("id").as_string()};
          if (!ids.insert(id).second) {
            return core::make_error("batch.duplicate_id",
                                    "record '" + id + "' appears more than once in the batch",
                                    {{"id", id}});
          }
          replace(cmd.dataset, id, std::move(rec.value()), false);
          ++i;
        }
      }
      if (auto* del = b.if_contains("delete")) {
        if (!del->is_array()) {
          return core::make_error("request.invalid_field", "\"delete\" must be an array of ids",
                                  {{"field", "delete"}});
        }
        for (auto& v : del->as_array()) {
          if (!v.is_string()) {
            return core::make_error("request.invalid_field", "\"delete\" must hold only string ids",
                                    {{"field", "delete"}});
          }
          std::string id{v.as_string()};
          if (auto r = core::validate_id(id, "delete"); !r) {
            return std::move(r).error();
          }
          if (!deleted.insert(id).second) {
            return core::make_error("batch.duplicate_id",
                                    "record '" + id + "' appears more than once in \"delete\"",
                                    {{"id", id}});
          }
          if (ids.count(id)) {
            return core::make_error("batch.conflict",
                                    "record '" + id + "' is both upserted and deleted in one batch",
                                    {{"id", id}});
          }
          if (auto [before, bdoc] = current(st, cmd.dataset, id); before) {
            out.push_back({cmd.dataset, id, before, std::move(bdoc), std::nullopt, nullptr});
          }
        }
      }
      break;
    }
  }
  return out;
}

void submit_staged(shard_ptr self, std::vector<staged>& items, write_kind kind, write_callback done,
                   bool captured, core::idempotency_entry key = {});
void handle_refresh(shard_ptr self, write_msg& m);

void handle_write(shard_ptr self, write_msg& m) {
  auto& st = self->state;
  if (m.cmd.kind == write_kind::refresh_records) {
    handle_refresh(self, m);
    return;
  }
  core::idempotency_entry key;
  if (!m.cmd.idempotency_key.empty()) {
    // A retry of a write this unit acknowledged (or is committing) is answered with that
    // write's outcome, not applied again; the same key on a different write is refused.
    key.key = m.cmd.idempotency_key;
    key.fingerprint =
        core::write_fingerprint(static_cast<int>(m.cmd.kind), m.cmd.object, m.cmd.dataset, m.cmd.id,
                                boost::json::serialize(m.cmd.body));
    auto reused = [&] {
      return core::make_error(
          "request.idempotency_key_reused",
          "this Idempotency-Key was used for a different write to this object; use a new key "
          "for a new write",
          {{"idempotencyKey", key.key}});
    };
    if (const auto* e = st.keys.find(key.key)) {
      if (e->fingerprint != key.fingerprint) {
        m.done(reused());
      } else {
        m.done(write_outcome{e->version_id, true});
      }
      return;
    }
    if (auto* f = st.keys.pending(key.key)) {
      if (f->fingerprint != key.fingerprint) {
        m.done(reused());
      } else if (f->waiters.size() >= 64) {
        m.done(core::make_error("server.overloaded",
                                "too many retries of this Idempotency-Key are waiting for the "
                                "first one's outcome; retry later"));
      } else {
        f->waiters.push_back(std::move(m.done));
      }
      return;
    }
    key.expires_at_ms = idempotency_memory::now_ms() + st.rt->opts.idempotency_key_ttl_ms;
  }
  if (st.pending.size() >= st.rt->opts.max_pending_writes_per_unit) {
    m.done(core::make_error("server.overloaded",
                            "too many writes are waiting to become durable on this unit; retry"));
    return;
  }
  auto staged_r = stage(st, m.cmd);
  if (!staged_r) {
    m.done(std::move(staged_r).error());
    return;
  }
  auto& items = staged_r.value();
  if (items.empty()) {
    // Nothing to change (a batch deleting only absent ids, or deleting an empty object's data):
    // answer with the unit's current version; an empty id tells delete_object "held nothing".
    // (Its key is not remembered: nothing was stored; a retry is judged again.)
    m.done(write_outcome{
        m.cmd.kind == write_kind::delete_object ? std::string{} : core::encode_version_id(st.seq)});
    return;
  }
  submit_staged(self, items, m.cmd.kind, std::move(m.done), false, std::move(key));
}

/// Hands staged changes to the store as the unit's next write, and keeps them pending (visible
/// to later writes, not to queries) until the store says they are durable. `captured`: they are
/// changes another program made in the store; only the unit's sequence is written.
void submit_staged(shard_ptr self, std::vector<staged>& items, write_kind kind, write_callback done,
                   bool captured, core::idempotency_entry key) {
  auto& st = self->state;
  std::uint64_t seq = st.seq + 1;
  auto vid = core::encode_version_id(seq);
  auto changes = std::make_shared<std::vector<core::record_change>>();
  changes->reserve(items.size());
  store::write_batch batch{st.unit,        seq,     {},      std::nullopt, captured,
                           st.valid_epoch, nullptr, nullptr, st.origin,    {}};
  batch.writes.reserve(captured ? 0 : items.size());
  bool object_deleted = kind == write_kind::delete_object;
  // The object-deleted marker: set by an object delete, cleared by the next write after it.
  bool was_deleted = st.deleted || std::any_of(st.pending.begin(), st.pending.end(),
                                               [](auto& p) { return p.object_deleted; });
  if (object_deleted) {
    batch.deleted = true;
  } else if (was_deleted) {
    batch.deleted = false;
  }
  for (auto& s : items) {
    record_ptr after;
    core::doc_ptr after_doc;
    if (s.after) {
      core::stamp_version(*s.after, vid);
      after = core::make_record(*s.after);
      if (!captured && after->json.size() > st.rt->opts.records.max_bytes) {
        // The exact size, stamp included; refused before anything is applied. (A captured row
        // was checked when it was read: refusing it here would have it read again forever.)
        done(core::record_too_large(after->json.size(), st.rt->opts.records, s.id));
        return;
      }
      if (!captured && s.after->size() > st.rt->opts.records.max_members) {
        // The stamp adds members (`_ver`, and `id` to a batch item's body): what is stored must
        // be what a load accepts again (found by fuzzing write_body).
        done(core::make_error("record.too_many_members",
                              "the record has " + std::to_string(s.after->size()) +
                                  " members with its id and _ver; at most " +
                                  std::to_string(st.rt->opts.records.max_members) +
                                  " are allowed (records.maxMembers)",
                              {{"path", ""}, {"max", st.rt->opts.records.max_members}}));
        return;
      }
      if (!st.rt->store.holds_nul_characters() && core::contains_nul_character(after->json)) {
        // Refused before anything is applied: nothing of this write is in the unit yet.
        done(core::make_error("record.unsupported_character",
                              "this node's store (PostgreSQL jsonb) cannot hold the character "
                              "U+0000 (\\u0000) in a string; remove it from record '" +
                                  s.id + "'",
                              {{"id", s.id}}));
        return;
      }
      after_doc = std::make_shared<const boost::json::object>(std::move(*s.after));
      if (!captured && !s.update.empty()) {
        batch.writes.push_back({s.dataset, s.id, after->json, std::move(s.update), s.before->json});
        if (!batch.corrected) {
          batch.corrected = std::make_shared<std::vector<store::record_write>>();
        }
      } else if (!captured) {
        batch.writes.push_back({s.dataset, s.id, after->json, {}, {}});
      }
    } else if (!captured) {
      batch.writes.push_back({s.dataset, s.id, std::string{}, {}, {}});
    }
    changes->push_back(core::record_change{s.dataset, s.before, after, std::move(s.before_doc),
                                           after_doc, std::move(s.ops)});
  }
  if (!key.key.empty()) {
    key.version_id = vid;
    batch.keys.push_back(key);  // stored with the write, in the same transaction or batch
  }
  caf::actor me = caf::actor_cast<caf::actor>(self);
  auto corrected = batch.corrected;
  auto queued = st.rt->store.submit(std::move(batch), [me, seq](core::result<void> r) {
    caf::anon_send(me, r ? commit_msg{seq, true, {}, {}}
                         : commit_msg{seq, false, r.error().message, r.error().code});
  });
  if (!queued) {
    done(std::move(queued).error());
    return;
  }
  ++st.in_store;
  st.seq = seq;
  for (auto& c : *changes) {
    const auto& id = c.after ? c.after->id : c.before->id;
    st.overlay[overlay_key(c.dataset, id)] = overlay_entry{c.after, c.after_doc, seq, captured};
  }
  if (!key.key.empty()) {
    st.keys.start(key.key, key.fingerprint);
  }
  st.pending.push_back(pending_write{seq, std::move(vid), std::move(changes), std::move(done),
                                     object_deleted, kind == write_kind::delete_object_document,
                                     std::move(corrected), captured, steady_now_ns(),
                                     std::move(key)});
}

}  // namespace

/// Records read again for a refresh (refreshed_msg).
struct refreshed_rows {
  write_msg msg;  // the refresh, answered once its rows are applied
  core::result<std::vector<store::read_record>> rows;
};

namespace {

/// Change capture's refresh: reads the rows again in the store, behind every write of this unit
/// submitted so far (durable_store::read_after_writes), so the read sees them all and no write
/// submitted later commits before it. Never reads on this actor's thread.
void handle_refresh(shard_ptr self, write_msg& m) {
  auto& st = self->state;
  std::vector<std::string> ids;
  if (m.cmd.body.is_array()) {
    for (const auto& v : m.cmd.body.as_array()) {
      if (v.is_string()) {
        ids.emplace_back(v.as_string());
      }
    }
  }
  auto job = std::make_shared<refreshed_rows>(
      refreshed_rows{std::move(m), std::vector<store::read_record>{}});
  auto dataset = job->msg.cmd.dataset;
  auto queued =
      st.rt->store.read_after_writes(st.unit, dataset, std::move(ids),
                                     [job, me = caf::actor_cast<caf::actor>(self)](
                                         core::result<std::vector<store::read_record>> rows) {
                                       job->rows = std::move(rows);
                                       caf::anon_send(me, refreshed_msg{job});
                                     });
  if (!queued) {
    job->msg.done(std::move(queued).error());  // not taken: change capture reads it again
    return;
  }
  ++st.refreshing;
}

/// What the store held for rows another program changed (read after every write this unit had
/// submitted when the refresh came), against the unit's records: a change for each that
/// differs. A row that a write of this unit submitted since then still has pending is left to
/// that write: it commits after the read, so it is what the store keeps (a PATCH is applied
/// again to the row as the store holds it, write_batch::corrected). A row Weir cannot hold (not
/// an object, an id Weir refuses) is skipped with a warning. A property document keeps the
/// `modifiedAt` its row has: stamping a new one only here would differ from the store, and a
/// second read would see a change that is not there.
std::vector<staged> stage_captured(shard_state& st, const std::string& dataset,
                                   std::vector<store::read_record>& rows) {
  std::vector<staged> out;
  for (auto& row : rows) {
    // A pending captured write does not decide the row: this read is newer than the one it
    // came from, so the row is compared with it.
    if (auto o = st.overlay.find(overlay_key(dataset, row.id));
        o != st.overlay.end() && !o->second.captured) {
      continue;
    }
    auto [before, bdoc] = current(st, dataset, row.id);
    if (!row.json) {
      if (before) {
        out.push_back({dataset, row.id, before, std::move(bdoc), std::nullopt, nullptr});
      }
      continue;
    }
    // Another program wrote this row: it must hold to the limits every write holds to (a
    // number jsonb keeps and JSON cannot carry, a document deeper than any reader reads).
    const auto& limits = st.rt->opts.records;
    auto v = core::check_document_text(*row.json, limits);
    auto parsed = v ? core::parse_document(*row.json, limits)
                    : core::result<boost::json::value>{std::move(v).error()};
    if (parsed && parsed->is_object()) {
      parsed->as_object().erase("id");  // the row's key is the record's id
    }
    auto rec = parsed ? core::normalize_record(std::move(parsed.value()), row.id)
                      : core::result<boost::json::object>{std::move(parsed).error()};
    if (!rec) {
      st.rt->skipped.add({st.unit.space, st.unit.object, dataset, row.id, rec.error().code,
                          rec.error().message, 0});
      log::warn("change capture skipped a record the store holds but Weir cannot serve",
                {{"space", st.unit.space},
                 {"object", st.unit.object},
                 {"dataset", dataset},
                 {"id", row.id},
                 {"code", rec.error().code},
                 {"error", rec.error().message}});
      continue;
    }
    auto& doc = rec.value();
    bdoc = doc_of(before, bdoc);
    if (bdoc) {
      auto held = *bdoc;
      held.erase("_ver");
      if (core::json_equal(boost::json::value(held), boost::json::value(doc))) {
        continue;  // already so here: this node wrote it, or read it before
      }
    }
    auto ops = std::make_shared<const core::change_ops>(core::ops_for_replace(bdoc.get(), doc));
    out.push_back(
        {dataset, row.id, std::move(before), std::move(bdoc), std::move(doc), std::move(ops)});
  }
  return out;
}

void handle_refreshed(shard_ptr self, refreshed_msg& m) {
  auto& st = self->state;
  --st.refreshing;
  auto& job = *m.rows;
  if (!job.rows) {
    job.msg.done(std::move(job.rows).error());
    return;
  }
  auto items = stage_captured(st, job.msg.cmd.dataset, job.rows.value());
  if (items.empty()) {
    job.msg.done(write_outcome{core::encode_version_id(st.seq)});
    return;
  }
  submit_staged(self, items, write_kind::batch, std::move(job.msg.done), true);
}

bool matches(const view_entry& v, const core::record& r, const boost::json::object& doc) {
  const auto& q = *v.q;
  return (!q.single_id || r.id == *q.single_id) && q.where.matches(doc);
}

/// An object delete purged the unit: every query's rows go (the query actors remove them all
/// on `object_deleted`), and the indexes and windows start over empty.
void publish_object_deleted(shard_ptr self, const pending_write& w) {
  auto& st = self->state;
  for (auto& [name, ds] : st.data) {
    ds.records.clear();
    for (auto& [key, ie] : ds.indexes) {
      ie.idx->assign_sorted({});
    }
    for (auto& [text, kc] : ds.counts) {
      kc.matches = 0;
    }
    ds.for_each_job([](index_build& b) {
      b.journal.clear();
      b.purged = true;
    });
  }
  for (auto& [key, v] : st.views) {
    if (v.window) {
      v.window->fill();
    }
    v.matched = 0;
    view_update u;
    u.seq = w.seq;
    u.version_id = w.version_id;
    u.origin_ns = w.staged_ns;
    u.object_deleted = true;
    u.synthetic = true;
    if (v.q->count) {
      u.total = 0;
    }
    self->send(v.actor, update_msg{std::move(u)});
  }
}

void publish(shard_ptr self, pending_write& w) {
  auto& st = self->state;
  auto& changes = *w.changes;
  std::vector<core::record_step> steps(changes.size());
  std::unordered_map<std::string, core::write_steps> by_dataset;
  std::vector<view_entry*> touched;  // bounded queries this write reached
  std::unordered_map<view_entry*, std::vector<view_change>> unbounded;
  std::vector<std::string> appeared;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    auto& c = changes[i];
    auto& ds = st.data[c.dataset];
    const auto& id = c.after ? c.after->id : c.before->id;
    auto single_route = st.routes.find(overlay_key(c.dataset, id));
    auto route = st.routes.find(c.dataset);
    bool wanted = !ds.indexes.empty() || !ds.counts.empty() || single_route != st.routes.end() ||
                  route != st.routes.end();
    if (wanted && c.before && !c.before_doc) {
      c.before_doc = doc_of(c.before, nullptr);
    }
    auto& s = steps[i];
    s.before = c.before;
    s.after = c.after;
    s.before_doc = c.before_doc.get();
    s.after_doc = c.after_doc.get();
    s.ops = c.ops;
    if (c.before) {
      if (auto it = ds.records.find(std::string_view{c.before->id}); it != ds.records.end()) {
        ds.records.erase(it);
      }
    }
    if (c.after) {
      if (ds.records.empty() && !st.unit.object.empty()) {
        appeared.push_back(c.dataset);  // space-wide merges of this dataset take this unit in
      }
      ds.records.insert(c.after);
    }
    ds.for_each_job([&](index_build& b) { b.journal.emplace_back(c.before, c.after); });
    for (auto& [text, kc] : ds.counts) {
      bool mb = c.before && kc.where.matches(*c.before_doc);
      bool ma = c.after && kc.where.matches(*c.after_doc);
      kc.matches = kc.matches + (ma ? 1 : 0) - (mb ? 1 : 0);
    }
    for (auto& [key, ie] : ds.indexes) {
      core::sort_position bpos, apos;
      core::record_step at = s;
      if (c.before) {
        bpos = ie.idx->position_of(*c.before_doc);
        ie.idx->erase(bpos);
        at.before_pos = &bpos;
      }
      if (c.after) {
        apos = ie.idx->position_of(*c.after_doc);
        ie.idx->insert(c.after, apos);
        at.after_pos = &apos;
      }
      for (auto* v : ie.views) {
        if (v->window->apply(at) && std::find(touched.begin(), touched.end(), v) == touched.end()) {
          touched.push_back(v);
        }
      }
    }
    auto visit = [&](std::unordered_map<std::string, std::vector<view_entry*>>::iterator r) {
      if (r == st.routes.end()) {
        return;
      }
      for (auto* v : r->second) {
        bool mb = c.before && matches(*v, *c.before, *c.before_doc);
        bool ma = c.after && matches(*v, *c.after, *c.after_doc);
        if (mb || ma) {
          v->matched = v->matched + (ma ? 1 : 0) - (mb ? 1 : 0);
          unbounded[v].push_back(view_change{
              mb ? c.before : nullptr, ma ? c.after : nullptr, mb ? c.before_doc : nullptr,
              ma ? c.after_doc : nullptr, c.after != nullptr, c.ops});
        }
      }
    };
    visit(route);
    visit(single_route);
    by_dataset[c.dataset].emplace(std::string_view{id}, &s);
  }
  for (const auto& ds : appeared) {
    st.rt->unit_has_dataset(st.unit.space, st.unit.object, ds);
  }
  for (auto* v : touched) {
    auto d = v->window->end_write(by_dataset[v->q->dataset]);
    if (!d) {
      continue;
    }
    view_update u;
    u.seq = w.seq;
    u.version_id = w.version_id;
    u.origin_ns = w.staged_ns;
    u.synthetic = w.synthetic;
    u.total = d->total;
    u.delta = std::make_shared<const core::window_delta>(std::move(*d));
    self->send(v->actor, update_msg{std::move(u)});
  }
  for (auto& [v, list] : unbounded) {
    view_update u;
    u.seq = w.seq;
    u.version_id = w.version_id;
    u.origin_ns = w.staged_ns;
    u.synthetic = w.synthetic;
    u.changes = std::make_shared<const std::vector<view_change>>(std::move(list));
    if (v->q->count) {
      u.total = v->matched;  // a space view's merge sums its sources' totals
    }
    self->send(v->actor, update_msg{std::move(u)});
  }
}

/// `w`'s changes with the records as published as their `before` (a write staged on a record
/// that the store then committed otherwise: its index positions, matches and ops must be taken
/// from what subscribers have).
void rebase(shard_state& st, pending_write& w) {
  std::shared_ptr<std::vector<core::record_change>> changes;
  for (std::size_t i = 0; i < w.changes->size(); ++i) {
    const auto& c = (*w.changes)[i];
    const auto& id = c.after ? c.after->id : c.before->id;
    record_ptr published;
    if (auto ds = st.data.find(c.dataset); ds != st.data.end()) {
      if (auto it = ds->second.records.find(std::string_view{id}); it != ds->second.records.end()) {
        published = *it;
      }
    }
    if (published == c.before) {
      continue;
    }
    if (!changes) {
      changes = std::make_shared<std::vector<core::record_change>>(*w.changes);
    }
    auto& r = (*changes)[i];
    r.before = published;
    r.before_doc = doc_of(published, nullptr);
    if (r.after) {
      r.after_doc = doc_of(r.after, r.after_doc);
      r.ops = std::make_shared<const core::change_ops>(
          core::ops_for_replace(r.before_doc.get(), *r.after_doc));
    }
  }
  if (changes) {
    std::erase_if(*changes, [](const core::record_change& c) { return !c.before && !c.after; });
    w.changes = std::move(changes);
  }
}

/// The store applied some of `w`'s updates again, to records another program had changed since
/// this unit read them (write_batch::corrected): what it wrote is what is published.
void apply_corrections(pending_write& w) {
  auto changes = std::make_shared<std::vector<core::record_change>>(*w.changes);
  for (auto& fix : *w.corrected) {
    auto c = std::find_if(changes->begin(), changes->end(), [&](const core::record_change& c) {
      const auto& id = c.after ? c.after->id : c.before->id;
      return c.dataset == fix.dataset && id == fix.id;
    });
    if (c == changes->end()) {
      continue;
    }
    c->before_doc = doc_of(c->before, c->before_doc);
    if (fix.json.empty()) {
      c->after = nullptr;  // the other program had deleted it: so it stays
      c->after_doc = nullptr;
      c->ops = nullptr;
      continue;
    }
    boost::json::object doc;
    c->after = core::parse_record(fix.json, &doc);
    c->after_doc = std::make_shared<const boost::json::object>(std::move(doc));
    c->ops = std::make_shared<const core::change_ops>(
        core::ops_for_replace(c->before_doc.get(), *c->after_doc));
  }
  // A record the other program had deleted, and that was not here before either: no change.
  std::erase_if(*changes, [](const core::record_change& c) { return !c.before && !c.after; });
  w.changes = std::move(changes);
}

/// The store refused a write (elastic membership's fence: another member owns the unit now), or
/// on PostgreSQL could not commit it: nothing of it was applied, nor of the writes staged after
/// it, which built on it (the store refuses those of the same origin unwritten). Each is
/// answered with the refusal and leaves the overlay; what was published stays; what is staged
/// next starts a new origin. After the fence, the unit moves away once this node's view of the
/// owners catches up.
void refuse_pending(shard_ptr self, const commit_msg& m) {
  auto& st = self->state;
  auto e = core::make_error(m.code, m.error);
  for (auto& w : st.pending) {
    for (auto& c : *w.changes) {
      const auto& id = c.after ? c.after->id : c.before->id;
      auto key = overlay_key(c.dataset, id);
      if (auto it = st.overlay.find(key); it != st.overlay.end() && it->second.seq == w.seq) {
        st.overlay.erase(it);
      }
    }
    if (w.done) {
      w.done(e);
    }
    if (!w.key.key.empty()) {
      st.keys.settle(w.key.key, e);
    }
  }
  st.pending.clear();
  st.refused_through = st.seq;
  // What is staged from now on builds on what is durable, not on the refused writes.
  st.origin = st.rt->next_origin();
}

void handle_commit(shard_ptr self, const commit_msg& m) {
  auto& st = self->state;
  --st.in_store;
  if (m.seq <= st.refused_through && (st.pending.empty() || m.seq < st.pending.front().seq)) {
    // A write already refused with those before it: the store refuses it too (its unit's owner
    // is another member), or, should the owners have changed back within that moment,
    // committed it after all. Then memory no longer holds what the store does: load again.
    if (m.ok) {
      log::warn("a unit committed a write it had refused; loading it again",
                {{"space", st.unit.space}, {"object", st.unit.object}});
      st.rt->reload_unit(st.unit, caf::actor_cast<caf::actor>(self));
    }
    return;
  }
  if (!m.ok && m.code == "cluster.not_owner") {
    refuse_pending(self, m);
    return;
  }
  if (!m.ok && st.rt->store.shared_with_others()) {
    // PostgreSQL: a commit that failed (the database unreachable for longer than the store's
    // retries) rolled back; nothing of it was applied, and the store refuses the writes staged
    // after it without writing them (they built on it). Each is answered, the node carries on.
    // When the outcome is unknown (write.outcome_unknown: it may have committed), memory may
    // differ from the database: the unit is loaded again once its writes are answered.
    log::warn("a write to the store failed; the writes staged after it are refused",
              {{"space", st.unit.space},
               {"object", st.unit.object},
               {"code", m.code},
               {"error", m.error}});
    refuse_pending(self, m);
    if (m.code == "write.outcome_unknown") {
      st.rt->reload_unit(st.unit, caf::actor_cast<caf::actor>(self));
    }
    return;
  }
  if (!m.ok) {
    // A failed fsync leaves the WAL's state unknown; continuing would let memory diverge from
    // disk. Stop loudly and let the restart recover exactly what was made durable.
    std::fprintf(stderr, "weir: fatal: store write failed for unit '%s/%s': %s\n",
                 st.unit.space.c_str(), st.unit.object.c_str(), m.error.c_str());
    std::abort();
  }
  if (st.pending.empty() || st.pending.front().seq != m.seq) {
    std::fprintf(stderr, "weir: fatal: out-of-order commit %llu\n",
                 static_cast<unsigned long long>(m.seq));
    std::abort();
  }
  auto w = std::move(st.pending.front());
  st.pending.pop_front();
  for (auto& c : *w.changes) {
    const auto& id = c.after ? c.after->id : c.before->id;
    auto key = overlay_key(c.dataset, id);
    if (auto it = st.overlay.find(key); it != st.overlay.end() && it->second.seq == w.seq) {
      st.overlay.erase(it);
    }
  }
  if (w.seq <= st.rebase_through) {
    rebase(st, w);
  }
  if (w.corrected && !w.corrected->empty()) {
    apply_corrections(w);
    st.rebase_through = st.seq;
  }
  if (w.object_deleted) {
    st.deleted = true;
    publish_object_deleted(self, w);
  } else {
    st.deleted = false;
    publish(self, w);
  }
  if (!w.key.key.empty()) {
    st.keys.remember(w.key, st.rt->opts.max_idempotency_keys_per_unit);
    st.keys.settle(w.key.key, write_outcome{w.version_id});
  }
  w.done(write_outcome{std::move(w.version_id)});
}

/// The index of `order` on dataset `ds`, built from its records the first time a window needs
/// it (O(N log N); see docs/performance.md for the cost at a million records).
index_entry& ensure_index(dataset_state& ds, const core::sort_spec& order) {
  auto key = sort_text(order);
  auto it = ds.indexes.find(key);
  if (it == ds.indexes.end()) {
    index_entry e;
    e.idx = std::make_shared<index_type>(order);
    auto t0 = clock_type::now();
    e.idx->build(ds.records.begin(), ds.records.end());
    if (auto ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
        ms >= 500) {
      log::info("built an index", {{"index", key}, {"records", ds.records.size()}, {"ms", ms}});
    }
    it = ds.indexes.emplace(std::move(key), std::move(e)).first;
  }
  return it->second;
}

/// Whether a window on `order` may open on `ds` without passing `max` indexes: true when its
/// index exists or there is room. Makes room by dropping indexes no window reads (the longest
/// unused first), which the next window of their sort rebuilds. Each index holds an entry per
/// record and costs O(N log N) to build, so the number of sorts is what bounds a caller here.
/// The number of matches of `q`'s filter when the dataset has it without counting: an open
/// window of the dataset with the same filter that counts (on any sort), a kept count (then
/// marked used), or an index whose first key the filter bounds and nothing else
/// (core::count_by_ranks, O(log N)). nullopt: a window opening on it would count every record.
std::optional<std::uint64_t> known_count(dataset_state& ds, const core::bound_query& q) {
  for (const auto& [k, ie] : ds.indexes) {
    for (const auto* v : ie.views) {
      if (v->q->where_text == q.where_text && v->window->total()) {
        return v->window->total();
      }
    }
  }
  if (auto kc = ds.counts.find(q.where_text); kc != ds.counts.end()) {
    kc->second.used = clock_type::now();
    return kc->second.matches;
  }
  // A filter that is an interval on some index's first key is counted from its ranks.
  for (const auto& [k, ie] : ds.indexes) {
    if (auto n = core::count_by_ranks(*ie.idx, q.where, core::max_array_reads_for_count)) {
      return n;
    }
  }
  return std::nullopt;
}

/// Whether a subscription waiting for a count will read the index of `sort_key`: such an index
/// stays while it waits, as if a window read it.
bool awaited_index(const dataset_state& ds, const std::string& sort_key) {
  for (const auto& [text, job] : ds.counting) {
    for (const auto& w : job.waiting) {
      if (sort_text(w.query->order) == sort_key) {
        return true;
      }
    }
  }
  return false;
}

bool index_room(dataset_state& ds, const core::sort_spec& order, std::size_t max) {
  auto key = sort_text(order);
  if (ds.indexes.count(key) || ds.building.count(key)) {
    return true;
  }
  while (ds.indexes.size() + ds.building.size() >= max) {
    auto unused = ds.indexes.end();
    for (auto it = ds.indexes.begin(); it != ds.indexes.end(); ++it) {
      if (it->second.views.empty() && !awaited_index(ds, it->first) &&
          (unused == ds.indexes.end() || it->second.unused_since < unused->second.unused_since)) {
        unused = it;
      }
    }
    if (unused == ds.indexes.end()) {
      return false;
    }
    ds.indexes.erase(unused);
  }
  return true;
}

/// Registers the view of `query` and computes its snapshot (the caller gives it an actor).
std::pair<std::unordered_map<std::string, view_entry>::iterator, view_snapshot> open_view(
    shard_state& st, const std::shared_ptr<const core::bound_query>& query) {
  const auto& q = *query;
  auto it = st.views.emplace(q.key, view_entry{}).first;
  {
    auto& v = it->second;
    v.q = query;
    auto& ds = st.data[q.dataset];
    // The query starts from the published state as of the last commit; every later commit
    // reaches it as an update, in order, so nothing is missed or seen twice.
    view_snapshot snap;
    snap.seq = st.pending.empty() ? st.seq : st.pending.front().seq - 1;
    if (q.bounded()) {
      auto& ie = ensure_index(ds, q.order);
      v.index_key = sort_text(q.order);
      v.window = std::make_unique<core::window_view>(*ie.idx, q.where, q.offset, q.limit, q.count);
      // Another window with the same filter (another page, another sort) or a kept count has
      // the count already: counting again would evaluate the filter on every record (about
      // 0.3 s at a million) for each page opened.
      std::optional<std::uint64_t> known;
      if (q.count && !q.where.matches_all()) {
        known = known_count(ds, q);
      }
      v.window->fill(known);
      ie.views.push_back(&v);
      snap.rows = v.window->visible();
      snap.total = v.window->total();
    } else {
      if (q.single_id) {
        if (auto r = ds.records.find(std::string_view{*q.single_id}); r != ds.records.end()) {
          if (matches(v, **r, core::thread_doc_reader().read(**r))) {
            snap.rows.push_back(*r);
          }
        }
      } else {
        bool all = q.where.matches_all();
        snap.rows.reserve(all ? ds.records.size() : 0);
        for (const auto& r : ds.records) {
          if (all || q.where.matches(core::thread_doc_reader().read(*r))) {
            snap.rows.push_back(r);
          }
        }
      }
      v.matched = snap.rows.size();
      if (q.count) {
        snap.total = v.matched;
      }
      v.route = q.single_id ? overlay_key(q.dataset, *q.single_id) : q.dataset;
      st.routes[v.route].push_back(&v);
    }
    return {it, std::move(snap)};
  }
}

/// The dataset's records as they are, for a loader thread. One pass, reserved, which the
/// unit's writes wait for: from an index when the dataset has one (its leaves hold the records
/// 64 to a node; ~35 ms at a million records), else from the flat record set (~40 ms; 110-120 ms
/// when the set was a node per record).
std::shared_ptr<std::vector<record_ptr>> collect_records(const dataset_state& ds) {
  auto records = std::make_shared<std::vector<record_ptr>>();
  records->reserve(ds.records.size());
  if (!ds.indexes.empty()) {
    const auto& from = *ds.indexes.begin()->second.idx;
    for (auto it = from.begin(); it != from.end(); ++it) {
      records->push_back(it->rec);
    }
  } else {
    for (const auto& r : ds.records) {
      records->push_back(r);
    }
  }
  return records;
}

/// Hands the dataset's records to a loader thread to build the index of `order`; the shard
/// goes on serving, and index_built_msg brings the index back (on_index_built).
std::map<std::string, index_build>::iterator start_index_build(shard_ptr self,
                                                               const std::string& dataset,
                                                               dataset_state& ds,
                                                               const core::sort_spec& order,
                                                               std::string key) {
  auto records = collect_records(ds);
  auto idx = std::make_shared<index_type>(order);
  self->state.rt->loader.post(
      [shard = caf::actor_cast<caf::actor>(self), records, idx, dataset, key]() mutable {
        auto t0 = clock_type::now();
        idx->build(records->begin(), records->end());
        auto ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
        if (ms >= 500) {
          log::info("built an index", {{"index", key}, {"records", records->size()}, {"ms", ms}});
        }
        records.reset();  // its references go here, not on the shard's thread
        caf::anon_send(shard, index_built_msg{dataset, key, idx});
      });
  return ds.building.emplace(std::move(key), index_build{}).first;
}

void handle_subscribe(shard_ptr self, subscribe_msg& m);

/// Hands the dataset's records to a loader thread to count the matches of `where`; the shard
/// goes on serving (what it publishes meanwhile is journaled), and count_done_msg brings the
/// count back (on_count_done), which becomes a kept count the waiting windows open with.
std::map<std::string, index_build>::iterator start_count(shard_ptr self, const std::string& dataset,
                                                         dataset_state& ds,
                                                         const core::filter& where,
                                                         const std::string& where_text) {
  auto records = collect_records(ds);
  self->state.rt->loader.post(
      [shard = caf::actor_cast<caf::actor>(self), records, where, dataset, where_text]() mutable {
        auto t0 = clock_type::now();
        std::uint64_t matches = 0;
        auto& reader = core::thread_doc_reader();
        for (const auto& r : *records) {
          matches += where.matches(reader.read(*r)) ? 1 : 0;
        }
        auto ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
        if (ms >= 500) {
          log::info("counted a filter's matches",
                    {{"dataset", dataset}, {"records", records->size()}, {"ms", ms}});
        }
        records.reset();  // its references go here, not on the shard's thread
        caf::anon_send(shard, count_done_msg{dataset, where_text, matches});
      });
  return ds.counting.emplace(where_text, index_build{}).first;
}

/// Takes the build or count `key` out of `jobs` of `dataset` as its loader thread finished it;
/// nullopt when it is no longer there (the unit was handed over meanwhile).
std::optional<index_build> take_job(shard_state& st, const std::string& dataset,
                                    std::map<std::string, index_build> dataset_state::*jobs,
                                    const std::string& key) {
  auto dsit = st.data.find(dataset);
  if (dsit == st.data.end()) {
    return std::nullopt;
  }
  auto& map = dsit->second.*jobs;
  auto it = map.find(key);
  if (it == map.end()) {
    return std::nullopt;
  }
  auto job = std::move(it->second);
  map.erase(it);
  return job;
}

/// Keeps `matches` as the count of `where` (kept_count), making room by dropping the least
/// recently used one.
void keep_count(dataset_state& ds, const core::filter& where, const std::string& where_text,
                std::uint64_t matches);

/// A count a loader thread took: what was published meanwhile is applied to it, it is kept, and
/// the windows that waited for it open with it, in arrival order.
void on_count_done(shard_ptr self, count_done_msg& m) {
  auto taken = take_job(self->state, m.dataset, &dataset_state::counting, m.where_text);
  if (!taken) {
    return;
  }
  auto& ds = self->state.data[m.dataset];
  auto& job = *taken;
  if (job.waiting.empty()) {
    return;  // every window that wanted it closed meanwhile
  }
  const auto& where = job.waiting.front().query->where;
  std::int64_t matches = job.purged ? 0 : static_cast<std::int64_t>(m.matches);
  auto& reader = core::thread_doc_reader();
  for (auto& [before, after] : job.journal) {
    matches -= before && where.matches(reader.read(*before)) ? 1 : 0;
    matches += after && where.matches(reader.read(*after)) ? 1 : 0;
  }
  keep_count(ds, where, m.where_text,
             static_cast<std::uint64_t>(std::max<std::int64_t>(matches, 0)));
  for (auto& w : job.waiting) {
    handle_subscribe(self, w);
  }
}

/// The index a build brought back: what was published meanwhile is applied to it, it joins the
/// dataset's indexes, and the subscriptions that waited for it are handled in arrival order.
void on_index_built(shard_ptr self, index_built_msg& m) {
  auto taken = take_job(self->state, m.dataset, &dataset_state::building, m.key);
  if (!taken) {
    return;
  }
  auto& ds = self->state.data[m.dataset];
  auto& build = *taken;
  auto& idx = *m.idx;
  if (build.purged) {
    idx.assign_sorted({});
  }
  auto& reader = core::thread_doc_reader();
  for (auto& [before, after] : build.journal) {
    if (before) {
      idx.erase(idx.position_of(reader.read(*before)));
    }
    if (after) {
      idx.insert(after, idx.position_of(reader.read(*after)));
    }
  }
  index_entry e;
  e.idx = std::move(m.idx);
  ds.indexes.emplace(m.key, std::move(e));
  for (auto& w : build.waiting) {
    handle_subscribe(self, w);
  }
}

/// Answers a subscription this shard will not serve, in its protocol's form: a windowed stream's
/// error envelope, a raw consumer's refusal (which carries `e` to another member's client), a
/// hub subscription's Error frame (its text is fixed by arc-hub §2.1), a direct stream's close.
void refuse_subscription(subscriber& sub, const core::error& e) {
  if (auto w = sub.windowed.lock()) {
    w->refused(e);
  } else if (sub.replica) {
    sub.replica->refused(e);
  } else if (auto owner = sub.owner.lock()) {
    owner->subscription_failed(sub.token);
  } else if (auto sink = sub.sink.lock()) {
    sink->close(1011, e.message);
  }
}

void handle_subscribe(shard_ptr self, subscribe_msg& m) {
  auto& st = self->state;
  const auto& q = *m.query;
  if (q.windowed && q.windowed->scope == core::windowed_scope::object && st.deleted) {
    refuse_subscription(m.sub, core::make_error("object.deleted",
                                                "object '" + q.object +
                                                    "' was deleted; write to it to use it again",
                                                {{"objectId", q.object}}));
    return;
  }
  auto it = st.views.find(q.key);
  if (it == st.views.end()) {
    if (auto max = st.rt->opts.hub.max_sort_indexes_per_dataset;
        q.bounded() && !index_room(st.data[q.dataset], q.order, max)) {
      auto e = core::make_error(
          "query.too_many_sorts",
          "dataset '" + q.dataset + "' of object '" + q.object + "' already has " +
              std::to_string(max) +
              " sort orders in use by open windows (query.maxSortIndexesPerDataset); use one of "
              "their sorts, or retry once some close",
          {{"dataset", q.dataset}, {"objectId", q.object}, {"limit", max}});
      refuse_subscription(m.sub, e);
      return;
    }
    if (q.bounded()) {
      auto& ds = st.data[q.dataset];
      auto key = sort_text(q.order);
      auto b = ds.building.find(key);
      if (b == ds.building.end() && !ds.indexes.count(key) &&
          ds.records.size() >= build_elsewhere_from) {
        b = start_index_build(self, q.dataset, ds, q.order, std::move(key));
      }
      if (b != ds.building.end()) {
        b->second.waiting.push_back(std::move(m));
        return;
      }
      // A window that counts its filter's matches, on a large dataset, with no count to take:
      // counted on a loader thread while the unit goes on serving.
      if (q.count && !q.where.matches_all()) {
        auto c = ds.counting.find(q.where_text);
        if (c == ds.counting.end() && ds.records.size() >= build_elsewhere_from &&
            !known_count(ds, q)) {
          c = start_count(self, q.dataset, ds, q.where, q.where_text);
        }
        if (c != ds.counting.end()) {
          c->second.waiting.push_back(std::move(m));
          return;
        }
      }
    }
    auto [entry, snap] = open_view(st, m.query);
    it = entry;
    it->second.actor =
        spawn_query(*st.rt, caf::actor_cast<caf::actor>(self), m.query, std::move(snap));
  }
  ++it->second.forwarded;
  self->send(it->second.actor, std::move(m));
}

/// Keeps the count of a closing window's filter (kept_count), making room by dropping the least
/// recently used one.
void keep_count(dataset_state& ds, const core::bound_query& q, std::uint64_t matches) {
  if (q.where.matches_all()) {
    return;  // the index's size is the count
  }
  keep_count(ds, q.where, q.where_text, matches);
}

void keep_count(dataset_state& ds, const core::filter& where, const std::string& where_text,
                std::uint64_t matches) {
  auto now = clock_type::now();
  if (auto it = ds.counts.find(where_text); it != ds.counts.end()) {
    it->second.used = now;
    return;  // kept current since it was taken
  }
  if (ds.counts.size() >= max_kept_counts) {
    ds.counts.erase(std::min_element(ds.counts.begin(), ds.counts.end(), [](auto& a, auto& b) {
      return a.second.used < b.second.used;
    }));
  }
  ds.counts.emplace(where_text, kept_count{where, matches, now});
}

void drop_view(shard_state& st, std::unordered_map<std::string, view_entry>::iterator it) {
  auto& v = it->second;
  if (v.window) {
    auto& ds = st.data[v.q->dataset];
    if (auto total = v.window->total()) {
      keep_count(ds, *v.q, *total);
    }
    if (auto ie = ds.indexes.find(v.index_key); ie != ds.indexes.end()) {
      std::erase(ie->second.views, &v);
      if (ie->second.views.empty()) {
        ie->second.unused_since = clock_type::now();
      }
    }
  } else {
    auto& list = st.routes[v.route];
    std::erase(list, &v);
    if (list.empty()) {
      st.routes.erase(v.route);
    }
  }
  st.views.erase(it);
}

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
      return kv.second.views.empty() && !awaited_index(ds, kv.first) &&
             now - kv.second.unused_since >= keep;
    });
    std::erase_if(ds.counts, [&](const auto& kv) { return now - kv.second.used >= keep; });
  }
  st.idle.check(self, *st.rt, st.unit, [&st] {
    return st.views.empty() && st.pending.empty() && st.refreshing == 0 &&
           std::all_of(st.data.begin(), st.data.end(), [](const auto& kv) {
             return kv.second.building.empty() && kv.second.counting.empty();
           });
  });
}

/// Once the writes this shard sent to the store are answered (after a hand-over): tells the
/// successor, which loads the unit only now, and stops.
void finish_if_done(shard_ptr self) {
  auto& st = self->state;
  if (st.successor && st.pending.empty() && st.refreshing == 0 && st.in_store == 0) {
    self->send(st.successor, handover_done_msg{});
    self->quit();
  }
}

/// The unit's owner changed: every query actor goes to `successor` with what it counted, and the
/// views go from here (without stopping their actors).
void hand_over(shard_ptr self, caf::actor successor) {
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
    // Subscriptions waiting for an index or a count go to the successor, which takes its own.
    ds.for_each_job([&](index_build& b) {
      for (auto& w : b.waiting) {
        self->send(successor, std::move(w));
      }
    });
    ds.clear_jobs();
  }
  st.views.clear();
}

/// Takes over a query actor from the unit's previous entry: a view over this shard's records,
/// and a fresh snapshot that every subscriber gets as a baseline.
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
  self->send(m.actor, reparent_msg{caf::actor_cast<caf::actor>(self)});
  self->send(m.actor, reset_msg{std::move(snap)});
}

caf::behavior serving(shard_ptr self);
caf::behavior loading(shard_ptr self);

/// A shard whose unit could not be read: everything that waited for the load (skipped in the
/// mailbox, and put back in front of it when the load's answer was taken) and what arrives
/// before it ends is answered — a write refused, a subscription ended with its protocol's
/// error — so that no subscriber is left without a baseline, an Error or an end. Then it ends;
/// the next use loads the unit again.
caf::behavior load_failed(shard_ptr self, const core::error& why) {
  self->set_default_handler(caf::drop);
  auto e = core::make_error(
      "server.unavailable",
      "the unit (object '" + self->state.unit.object + "' of space '" + self->state.unit.space +
          "') could not be read from the store: " + why.message + "; nothing was applied: retry",
      {{"objectId", self->state.unit.object}});
  return {
      [e](write_msg& m) { m.done(e); },
      [e](subscribe_msg& m) { refuse_subscription(m.sub, e); },
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
      },
  };
}

/// A successor waiting for its predecessor's query actors, and for its writes to be answered:
/// then it loads the unit, which holds them all. Everything else stays in the mailbox.
caf::behavior taking_over(shard_ptr self) {
  return {
      [self](adopt_msg& m) { self->state.adopted.push_back(std::move(m)); },
      [self](handover_done_msg) {
        auto& st = self->state;
        st.predecessor = nullptr;
        st.rt->loader.load(st.unit, caf::actor_cast<caf::actor>(self));
        self->become(loading(self));
      },
  };
}

/// A predecessor after its hand-over: what still reaches it goes to the successor, and the
/// store's answers to its own writes are delivered before it stops.
caf::behavior handing_over(shard_ptr self) {
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
      [pass](resync_msg& m) { pass(m); },
      [pass](rebaseline_msg& m) { pass(m); },
      [pass](query_idle_msg& m) { pass(m); },
      [](idle_atom) {},
      [](const epoch_msg&) {},
      [](index_built_msg&) {},  // its waiting subscriptions went to the successor
      [](count_done_msg&) {},   // the same
  };
}

caf::behavior serving(shard_ptr self) {
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
        // Still waiting for its index or count: it never opens.
        for (auto& [name, ds] : self->state.data) {
          ds.for_each_job([&](index_build& b) {
            std::erase_if(b.waiting, [&](const subscribe_msg& w) {
              return w.sub.token == m.token && w.query->key == m.key;
            });
          });
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
      [self](count_done_msg& m) { on_count_done(self, m); },
      [](handover_done_msg) {},  // the predecessor's, after its down already let us serve
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

caf::behavior shard_behavior(shard_ptr self, runtime::impl* rt, store::unit_key unit,
                             caf::actor predecessor) {
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
        "the unit closed while its sort index was being built or its filter counted; retry");
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
  // every other message waits in the mailbox.
  self->set_default_handler(caf::skip);
  if (predecessor) {
    return taking_over(self);
  }
  rt->loader.load(unit, caf::actor_cast<caf::actor>(self));
  return loading(self);
}

caf::behavior loading(shard_ptr self) {
  return {
      [self](loaded_msg& m) {
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
        self->set_default_handler(caf::print_and_drop);
        self->become(serving(self));
      },
  };
}

}  // namespace

caf::actor spawn_shard(runtime::impl& rt, store::unit_key unit, caf::actor predecessor) {
  return rt.sys->spawn(shard_behavior, &rt, std::move(unit), std::move(predecessor));
}

}  // namespace weir::actors

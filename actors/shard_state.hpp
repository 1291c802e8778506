// weir::actors shard internals — what the shard actor's files share (shard_actor.cpp: the
// actor, its states and its unit's life; shard_write.cpp: staging writes and handing them to
// the store; shard_publish.cpp: publishing durable writes to records, indexes and queries;
// shard_views.cpp: queries' views, indexes and counts). Private to those files: nothing else
// includes it.
#pragma once

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
#include <caf/typed_event_based_actor.hpp>

#include "actors/idempotency_memory.hpp"
#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "actors/typed_states.hpp"
#include "actors/unit_idleness.hpp"
#include "core/all_matches.hpp"
#include "core/document_check.hpp"
#include "core/filter.hpp"
#include "core/first_matches.hpp"
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
  std::uint64_t id = 0;  // the build's index_build::id
};

/// A loader thread → a shard: a pass over the records the shard handed it for the filter
/// `where_text` of `dataset`: its count, and its first matches in the order of the window
/// `view_key` that started the pass (see scan_for).
struct scan_done_msg {
  std::string dataset;
  std::string job_key;  // in dataset_state::scanning (scan_key)
  std::string where_text;
  std::string view_key;
  std::string sort_key;                        // sort_text of that window's order
  std::shared_ptr<core::first_matches> found;  // for a window
  std::shared_ptr<core::all_matches> all;      // for an unbounded query instead
};

/// Records read again for a refresh (refreshed_msg).
struct refreshed_rows {
  write_msg msg;  // the refresh, answered once its rows are applied
  core::result<std::vector<store::read_record>> rows;
};

}  // namespace weir::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::index_built_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::scan_done_msg)

namespace weir::actors::shard_impl {

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
  /// A pass waits for a free slot (max_scans_running) before it takes the records; until then
  /// it journals nothing. `queued`: its place in line (dataset_state::scans_queued).
  bool started = true;
  std::uint64_t queued = 0;
  /// Which build this is (dataset_state::builds_started): the index a loader thread sends back
  /// is taken by the build of that number only, since another build of the same sort may have
  /// begun from other records (one made after a pass, below, is not asked for by the shard).
  std::uint64_t id = 0;
  /// A build's sort (unset for a pass).
  core::sort_spec order;
  /// A build of an index on a field a filter bounds (field_index_for) that no window asked
  /// for: dropped, its index freed when it comes, when another index needs its room and no
  /// window waits for it (a window on that field's sort may; index_room).
  bool for_filter = false;
  /// A pass for a filter bounding a field no index leads with: the index on that field, which
  /// the loader thread builds from the same records after the pass (`then_index_id`), and
  /// which the shard takes when there is room for it (adopt_field_index).
  std::optional<core::sort_spec> then_index;
  std::uint64_t then_index_id = 0;
};
/// Below this many records an index is built in place: a few milliseconds, less than the trip.
/// The same bound decides where a filter's first count runs (scan_for), and how many index
/// entries a window's first fill may read on the unit's thread before its rows are found by a
/// pass on a loader thread instead (about 6 ms of parsing on this machine).
constexpr std::size_t build_elsewhere_from = 16384;
/// The deepest offset a pass keeps the matches before (first_matches): past it, the rest of a
/// window's offset is walked on the unit's thread from the last match kept, as before. Each
/// match kept is a sort position (~100 B) held until the window opens.
constexpr std::uint64_t max_scan_offset = 65536;
/// Filter passes of one dataset on the loader at once; the others wait in line, holding only
/// their subscriptions. A running pass holds a copy of the dataset's record references (16 B a
/// record) and one of the node's two loader threads (unit_loader) for its length: one at a
/// time per dataset leaves the other thread to other datasets' passes and to unit loads, and
/// bounds what many filters opened together on one dataset hold to one copy. Across datasets
/// each may run one (N datasets, N copies of their own records). A pass that builds its
/// filter's field index after it (index_build::then_index) keeps its thread and its copy for
/// that build (~1 s at a million records), while the dataset's next pass may start on the
/// other: once per field, while that field's index is kept.
constexpr std::size_t max_scans_running = 1;

struct dataset_state {
  core::record_set records;
  std::map<std::string, index_entry> indexes;   // by sort text
  std::map<std::string, index_build> building;  // by sort text
  std::map<std::string, kept_count> counts;     // by bound_query::where_text
  /// Passes over the records for a filter on a loader thread (the same journal and waiting
  /// list as an index build), by scan_key (where_text, marked for an unbounded query's pass): a
  /// filter's first count, or a window's rows found by walking its index, at a million records held
  /// the unit's writes for ~0.3 s (docs/performance.md).
  std::map<std::string, index_build> scanning;
  std::uint64_t scans_queued = 0;  // passes put in line so far (index_build::queued)
  /// The indexes named queries' filters want on this dataset (runtime::impl::filter_indexes),
  /// by sort text, once the dataset is large enough to have them (keep_filter_indexes): never
  /// dropped to make room nor for being unused. `pins_known`: computed; `pins_kept`: each is
  /// built or being built, so writes need not look again.
  std::vector<std::pair<std::string, core::sort_spec>> pinned;
  bool pins_known = false;
  bool pins_kept = false;
  bool pins(const std::string& sort_key) const {
    return std::any_of(pinned.begin(), pinned.end(),
                       [&](const auto& p) { return p.first == sort_key; });
  }
  std::uint64_t builds_started = 0;  // index builds begun so far (index_build::id)
  /// The subscriptions of a finished build or pass while they are handled (on_index_built,
  /// on_scan_done): taken out of their job, they still keep their sorts' indexes from being
  /// dropped to make room for one of them (awaited_index).
  const std::vector<subscribe_msg>* handling = nullptr;
  /// A pass's first matches while the subscriptions that waited for it are handled
  /// (on_scan_done), by where_text and sort text (located_key): the window that started it
  /// (`view_key`) and any other of the same filter and sort whose rows lie within them open
  /// from them (located_for).
  struct located_rows {
    std::string view_key;
    std::shared_ptr<const core::first_matches> found;
  };
  std::map<std::string, located_rows> located;
  /// Every match of a filter from a pass, by where_text, while the subscriptions that waited
  /// for the pass are handled: the unbounded queries among them open from them.
  std::map<std::string, std::shared_ptr<core::all_matches>> gathered;

  /// Calls fn(job) for every index build and pass in progress.
  template <class Fn>
  void for_each_job(Fn&& fn) {
    for (auto& [k, b] : building) {
      fn(b);
    }
    for (auto& [k, c] : scanning) {
      fn(c);
    }
  }
  void clear_jobs() {
    building.clear();
    scanning.clear();
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
  query_actor actor;
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
  unit_actor successor;
  /// Spawned to take a unit over from `predecessor`: loading waits for its handover_done_msg.
  unit_actor predecessor;
  std::vector<adopt_msg> adopted;  // its query actors, taken over once the unit is loaded
  // Unbounded queries by what a change can concern: collection queries by dataset,
  // single-document ones by (dataset, id), so a write wakes only those it may change.
  std::unordered_map<std::string, std::vector<view_entry*>> routes;
  unit_idleness idle;
  static inline const char* name = "weir.shard";
};

/// The shard: a unit's entry on its owner, hearing also the store's answers (commit_msg,
/// refreshed_msg), the loader's (loaded_msg, index_built_msg, scan_done_msg), and the stop it
/// sends itself after a failed load.
using shard_actor = unit_actor::extend<caf::reacts_to<commit_msg>, caf::reacts_to<refreshed_msg>,
                                       caf::reacts_to<loaded_msg>, caf::reacts_to<index_built_msg>,
                                       caf::reacts_to<scan_done_msg>, caf::reacts_to<stop_atom>>;

using shard_ptr = shard_actor::stateful_pointer<shard_state>;

/// This shard's handle (for the loader, the store's callbacks and its query actors).
inline shard_actor handle_of(shard_ptr self) {
  return shard_actor{self};
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

// shard_write.cpp

std::string overlay_key(std::string_view dataset, std::string_view id);

std::string sort_text(const core::sort_spec& s);

std::int64_t now_ms();

/// The latest version of a record, pending writes included (its document when known).
std::pair<record_ptr, core::doc_ptr> current(shard_state& st, const std::string& dataset,
                                             const std::string& id);

core::doc_ptr doc_of(const record_ptr& r, core::doc_ptr known);

/// Every record of the unit as of the latest pending write, keyed by (dataset, id).
std::vector<std::pair<std::string, record_ptr>> all_current(shard_state& st);

/// The server-maintained `modifiedAt` of a property document: milliseconds since the epoch,
/// strictly growing across the space's objects (the objects unit stamps them all) even when
/// writes land within one millisecond or the clock steps back, so `-modifiedAt` orders objects
/// by their last write.
void stamp_modified(shard_state& st, boost::json::object& doc, const boost::json::object* before);

core::result<std::vector<staged>> stage(shard_state& st, write_command& cmd);

void handle_write(shard_ptr self, write_msg& m);

/// Hands staged changes to the store as the unit's next write, and keeps them pending (visible
/// to later writes, not to queries) until the store says they are durable. `captured`: they are
/// changes another program made in the store; only the unit's sequence is written.
void submit_staged(shard_ptr self, std::vector<staged>& items, write_kind kind, write_callback done,
                   bool captured, core::idempotency_entry key = {});

/// Change capture's refresh: reads the rows again in the store, behind every write of this unit
/// submitted so far (durable_store::read_after_writes), so the read sees them all and no write
/// submitted later commits before it. Never reads on this actor's thread.
void handle_refresh(shard_ptr self, write_msg& m);

/// What the store held for rows another program changed (read after every write this unit had
/// submitted when the refresh came), against the unit's records: a change for each that
/// differs. A row that a write of this unit submitted since then still has pending is left to
/// that write: it commits after the read, so it is what the store keeps (a PATCH is applied
/// again to the row as the store holds it, write_batch::corrected). A row Weir cannot hold (not
/// an object, an id Weir refuses) is skipped with a warning. A property document keeps the
/// `modifiedAt` its row has: stamping a new one only here would differ from the store, and a
/// second read would see a change that is not there.
std::vector<staged> stage_captured(shard_state& st, const std::string& dataset,
                                   std::vector<store::read_record>& rows);

void handle_refreshed(shard_ptr self, refreshed_msg& m);

// shard_publish.cpp

bool matches(const view_entry& v, const core::record& r, const boost::json::object& doc);

/// An object delete purged the unit: every query's rows go (the query actors remove them all
/// on `object_deleted`), and the indexes and windows start over empty.
void publish_object_deleted(shard_ptr self, const pending_write& w);

void publish(shard_ptr self, pending_write& w);

/// `w`'s changes with the records as published as their `before` (a write staged on a record
/// that the store then committed otherwise: its index positions, matches and ops must be taken
/// from what subscribers have).
void rebase(shard_state& st, pending_write& w);

/// The store applied some of `w`'s updates again, to records another program had changed since
/// this unit read them (write_batch::corrected): what it wrote is what is published.
void apply_corrections(pending_write& w);

/// The store refused a write (elastic membership's fence: another member owns the unit now), or
/// on PostgreSQL could not commit it: nothing of it was applied, nor of the writes staged after
/// it, which built on it (the store refuses those of the same origin unwritten). Each is
/// answered with the refusal and leaves the overlay; what was published stays; what is staged
/// next starts a new origin. After the fence, the unit moves away once this node's view of the
/// owners catches up.
void refuse_pending(shard_ptr self, const commit_msg& m);

void handle_commit(shard_ptr self, const commit_msg& m);

// shard_views.cpp

/// The index of `order` on dataset `ds`, built from its records the first time a window needs
/// it (O(N log N); see docs/performance.md for the cost at a million records).
index_entry& ensure_index(dataset_state& ds, const core::sort_spec& order);

/// The number of matches of `q`'s filter when the dataset has it without counting: an open
/// window of the dataset with the same filter that counts (on any sort), a kept count (then
/// marked used), or an index whose first key (or first two, core::span_plan::compound) the
/// filter bounds and nothing else (core::count_by_ranks, O(k log N) for k intervals). nullopt: a
/// window opening on it would count every record.
std::optional<std::uint64_t> known_count(dataset_state& ds, const core::bound_query& q);

/// Whether a subscription waiting for a pass or an index build (or, its job done, about to be
/// handled) will read the index of `sort_key`: such an index stays while it waits, as if a
/// window read it.
bool awaited_index(const dataset_state& ds, const std::string& sort_key);

/// Whether a window on `order` may open on `ds` without passing `max` indexes: true when its
/// index exists or there is room. Makes room by dropping indexes no window reads (the longest
/// unused first), which the next window of their sort rebuilds, and then builds of a filter's
/// field index no window waits for (index_build::for_filter). Each index holds an entry per
/// record and costs O(N log N) to build, so the number of sorts is what bounds a caller here.
bool index_room(dataset_state& ds, const core::sort_spec& order, std::size_t max);

/// The key in dataset_state::scanning of the pass `q` needs: its where_text for a window (the
/// first matches in an order), marked apart for an unbounded query (every match), so that
/// neither waits for a pass that cannot open it.
std::string scan_key(const core::bound_query& q);

/// The key of dataset_state::located for a pass with `where_text` in the order `sort_key`.
std::string located_key(const std::string& where_text, const std::string& sort_key);

/// The matches of a pass that a window of `q` opens from: the pass `q`'s window started, or one
/// with the same filter and sort that kept every match or at least `q`'s offset + limit + 1.
/// nullptr when there is none.
const core::first_matches* located_for(const dataset_state& ds, const core::bound_query& q);

/// The window of bounded `q` over the index `idx` of its sort, filled: from a pass's matches
/// when located_for gives them, else from the index with the count the dataset knows
/// (known_count). nullptr when the fill would read more than `max_reads` index entries (see
/// window_view::fill).
std::unique_ptr<core::window_view> make_window(dataset_state& ds, const index_type& idx,
                                               const core::bound_query& q, std::size_t max_reads);

/// The records an index whose first key (or first two) `where` bounds gives as the only ones that
/// can match (core::span_plan), from the index whose runs hold the fewest, when they are at most
/// `max_reads` (marking that index used). Else, for a filter with a top-level $or
/// (core::filter::disjuncts), the records of each branch's fewest runs, each record once, when
/// every branch has such runs and they hold at most `max_reads` in all. In no particular order;
/// nullopt when no index gives so few.
std::optional<std::vector<record_ptr>> records_that_can_match(dataset_state& ds,
                                                              const core::filter& where,
                                                              std::size_t max_reads);

/// The window of bounded `q` filled from the records indexes give as the only ones that can
/// match `q`'s filter (records_that_can_match), when they are at most `max_reads`: its count and
/// rows by one pass over those records on this thread, whatever the window's sort. nullptr when
/// no index gives so few.
std::unique_ptr<core::window_view> window_from_spans(dataset_state& ds, const core::bound_query& q,
                                                     std::size_t max_reads);

/// The index that would answer `q`'s filter: the sort, ascending, on the first field path
/// the filter bounds to intervals (core::span_plan::narrow), else the field the filter bounds
/// by a complement or a whole type class and nothing else (exact: its count comes from ranks),
/// else, for a top-level $or whose every branch bounds some field narrowly, such a field of the
/// first branch no index serves yet; in each case one that no index of `ds` leads with, built,
/// being built, or to be built after a running pass. nullopt when there is no such field.
std::optional<core::sort_spec> field_index_for(const dataset_state& ds, const core::bound_query& q);

/// After the pass `pass` (which carried then_index), takes the index on its field that the
/// loader thread is now building from the same records as a build of `ds` (for_filter), with
/// the pass's journal: when no index leads with the field nor is coming, and index_room makes
/// room for it. Otherwise the index is freed on a loader thread when it comes. Such an index is
/// an index like a sort's: it counts against `max` and goes after unitIdleMs without serving a
/// count, a window's rows or an unbounded query's (known_count, records_that_can_match).
void adopt_field_index(dataset_state& ds, index_build& pass, std::size_t max);

/// Keeps the indexes named queries' filters want on `dataset` (runtime::impl::filter_indexes)
/// once it holds build_elsewhere_from records: each built on a loader thread if missing, and
/// kept like an index a window reads, so that such a query's first page (its count, its rows)
/// reads ranks instead of passing over every record. At most max_sort_indexes_per_dataset - 1
/// of them, so a window's sort always has room. Called when the unit is loaded, after each
/// write to the dataset and at each idle check (a check of two flags once they are kept).
void keep_filter_indexes(shard_ptr self, const std::string& dataset, dataset_state& ds);

/// Registers the view of `query` and computes its snapshot (the caller gives it an actor).
/// `window`: a bounded query's window already filled (make_window), else made here.
/// `found_rows`: an unbounded query's rows already found (records_that_can_match), else taken from
/// a pass (dataset_state::gathered) or read here.
std::pair<std::unordered_map<std::string, view_entry>::iterator, view_snapshot> open_view(
    shard_state& st, const std::shared_ptr<const core::bound_query>& query,
    std::unique_ptr<core::window_view> window = nullptr,
    std::vector<record_ptr>* found_rows = nullptr);

/// The dataset's records as they are, for a loader thread. One pass, reserved, which the
/// unit's writes wait for: from an index when the dataset has one (its leaves hold the records
/// 64 to a node; ~35 ms at a million records), else from the flat record set (~40 ms; 110-120 ms
/// when the set was a node per record).
std::shared_ptr<std::vector<record_ptr>> collect_records(const dataset_state& ds);

/// Hands the dataset's records to a loader thread to build the index of `order`; the shard
/// goes on serving, and index_built_msg brings the index back (on_index_built).
std::map<std::string, index_build>::iterator start_index_build(shard_ptr self,
                                                               const std::string& dataset,
                                                               dataset_state& ds,
                                                               const core::sort_spec& order,
                                                               std::string key);

/// Puts subscription `m` in line for the pass its query needs (scan_key): one pass with its
/// filter on a loader thread, giving its count and, for a window, its first matches in its order
/// (core::first_matches), for an unbounded query every match (core::all_matches). The shard
/// goes on serving (what it publishes meanwhile is journaled), and scan_done_msg brings the pass
/// back (on_scan_done): the count becomes a kept count, and the query opens from the matches.
/// A pass starts at once while fewer than max_scans_running of the dataset run, else when one
/// ends (launch_scans), in the order they were asked for.
/// `then_index`: an index for the loader thread to build from the same records once the pass
/// is done (adopt_field_index); dropped when the pass starts if one leading with that field is
/// coming by then, or there can be no room for it.
void scan_for(shard_ptr self, subscribe_msg& m,
              std::optional<core::sort_spec> then_index = std::nullopt);

/// Starts the passes of `ds` waiting in line while fewer than max_scans_running run; a pass
/// whose subscriptions all left meanwhile is dropped.
void launch_scans(shard_ptr self, const std::string& dataset, dataset_state& ds);

/// Takes the build or pass `key` out of `jobs` of `dataset` as its loader thread finished it;
/// nullopt when it is no longer there (the unit was handed over meanwhile, or a filter's field
/// index was not taken or gave way: on_index_built also checks the build's number).
std::optional<index_build> take_job(shard_state& st, const std::string& dataset,
                                    std::map<std::string, index_build> dataset_state::*jobs,
                                    const std::string& key);

/// A pass a loader thread made: what was published meanwhile is applied to it, its count is
/// kept, and the windows that waited for it open, in arrival order (the one that started it
/// from its matches).
void on_scan_done(shard_ptr self, scan_done_msg& m);

/// The index a build brought back: what was published meanwhile is applied to it, it joins the
/// dataset's indexes, and the subscriptions that waited for it are handled in arrival order.
void on_index_built(shard_ptr self, index_built_msg& m);

/// Answers a subscription this shard will not serve, in its protocol's form: a windowed stream's
/// error envelope, a raw consumer's refusal (which carries `e` to another member's client), a
/// hub subscription's Error frame (its text is fixed by arc-hub §2.1), a direct stream's close.
void refuse_subscription(subscriber& sub, const core::error& e);

void handle_subscribe(shard_ptr self, subscribe_msg& m);

/// Keeps the count of a closing window's filter (kept_count), making room by dropping the least
/// recently used one.
void keep_count(dataset_state& ds, const core::bound_query& q, std::uint64_t matches);

void keep_count(dataset_state& ds, const core::filter& where, const std::string& where_text,
                std::uint64_t matches);

void drop_view(shard_state& st, std::unordered_map<std::string, view_entry>::iterator it);

// shard_actor.cpp

void handle_idle(shard_ptr self, const query_idle_msg& m);

void touch(shard_ptr self);

void on_idle_check(shard_ptr self);

/// Once the writes this shard sent to the store are answered (after a hand-over): tells the
/// successor, which loads the unit only now, and stops.
void finish_if_done(shard_ptr self);

/// The unit's owner changed: every query actor goes to `successor` with what it counted, and the
/// views go from here (without stopping their actors).
void hand_over(shard_ptr self, unit_actor successor);

/// Takes over a query actor from the unit's previous entry: a view over this shard's records,
/// and a fresh snapshot that every subscriber gets as a baseline.
void adopt(shard_ptr self, adopt_msg& m);

/// A shard whose unit could not be read: everything that waited for the load (skipped in the
/// mailbox, and put back in front of it when the load's answer was taken) and what arrives
/// before it ends is answered — a write refused, a subscription ended with its protocol's
/// error — so that no subscriber is left without a baseline, an Error or an end. Then it ends;
/// the next use loads the unit again.
shard_actor::behavior_type load_failed(shard_ptr self, const core::error& why);

/// A successor waiting for its predecessor's query actors, and for its writes to be answered:
/// then it loads the unit, which holds them all. Everything else stays in the mailbox.
shard_actor::behavior_type taking_over(shard_ptr self);

/// A predecessor after its hand-over: what still reaches it goes to the successor, and the
/// store's answers to its own writes are delivered before it stops.
shard_actor::behavior_type handing_over(shard_ptr self);

shard_actor::behavior_type serving(shard_ptr self);

shard_actor::behavior_type shard_behavior(shard_ptr self, runtime::impl* rt, store::unit_key unit,
                                          unit_actor predecessor);

shard_actor::behavior_type loading(shard_ptr self);

}  // namespace weir::actors::shard_impl

// The shard's queries: views over the unit's records (a window over the index of its sort,
// maintained in O(log N) per change; an unbounded filter), the indexes and counts they share,
// built, counted or scanned for a window's rows on a loader thread for large datasets, and
// subscriptions opened on them. See shard_state.hpp.
#include "actors/shard_state.hpp"

#include <unordered_set>

namespace weir::actors::shard_impl {

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
  // A filter that is nothing but bounds on some index's first key (or first two) is counted from
  // its ranks.
  for (auto& [k, ie] : ds.indexes) {
    if (auto n = core::count_by_ranks(*ie.idx, q.where, core::max_array_reads_for_count)) {
      if (ie.views.empty()) {
        ie.unused_since = clock_type::now();  // it serves counts: kept while it does
      }
      return n;
    }
  }
  return std::nullopt;
}

bool awaited_index(const dataset_state& ds, const std::string& sort_key) {
  auto awaits = [&](const std::vector<subscribe_msg>& waiting) {
    for (const auto& w : waiting) {
      // A subscription of `handling` already handled was moved from: its query is null.
      if (w.query && sort_text(w.query->order) == sort_key) {
        return true;
      }
    }
    return false;
  };
  for (const auto& [text, job] : ds.scanning) {
    if (awaits(job.waiting)) {
      return true;
    }
  }
  // A build of a filter's field index (field_index_for) holds subscriptions of other sorts.
  for (const auto& [text, job] : ds.building) {
    if (awaits(job.waiting)) {
      return true;
    }
  }
  return ds.handling && awaits(*ds.handling);
}

namespace {

/// An index index_room may drop: no window reads it, no subscription waits to, and no named
/// query's filter wants it kept (keep_filter_indexes).
bool droppable(const dataset_state& ds, const std::string& key, const index_entry& ie) {
  return ie.views.empty() && !awaited_index(ds, key) && !ds.pins(key);
}

/// A build index_room may drop: a filter's field index no window waits for and no named query
/// wants kept (its index is discarded when it comes: on_index_built finds no build of its
/// number).
bool droppable(const dataset_state& ds, const std::string& key, const index_build& b) {
  return b.for_filter && b.waiting.empty() && !ds.pins(key);
}

/// The matches a pass (or a read of an index's runs) keeps for window `q`: its rows and its
/// look-ahead past its offset; a deeper offset than max_scan_offset is walked from the last
/// match kept (on the unit's thread, as any window's offset is).
std::size_t rows_to_keep(const core::bound_query& q) {
  return static_cast<std::size_t>(std::min<std::uint64_t>(q.offset, max_scan_offset) + q.limit + 1);
}

}  // namespace

bool index_room(dataset_state& ds, const core::sort_spec& order, std::size_t max) {
  auto key = sort_text(order);
  if (ds.indexes.count(key) || ds.building.count(key)) {
    return true;
  }
  while (ds.indexes.size() + ds.building.size() >= max) {
    auto unused = ds.indexes.end();
    for (auto it = ds.indexes.begin(); it != ds.indexes.end(); ++it) {
      if (droppable(ds, it->first, it->second) &&
          (unused == ds.indexes.end() || it->second.unused_since < unused->second.unused_since)) {
        unused = it;
      }
    }
    if (unused != ds.indexes.end()) {
      ds.indexes.erase(unused);
      continue;
    }
    auto build = std::find_if(ds.building.begin(), ds.building.end(),
                              [&](const auto& kv) { return droppable(ds, kv.first, kv.second); });
    if (build == ds.building.end()) {
      return false;
    }
    ds.building.erase(build);
  }
  return true;
}

std::string located_key(const std::string& where_text, const std::string& sort_key) {
  return where_text + '\n' + sort_key;
}

std::string scan_key(const core::bound_query& q) {
  return q.bounded() ? q.where_text : q.where_text + "\nall";
}

const core::first_matches* located_for(const dataset_state& ds, const core::bound_query& q) {
  auto it = ds.located.find(located_key(q.where_text, sort_text(q.order)));
  if (it == ds.located.end()) {
    return nullptr;
  }
  const auto& found = *it->second.found;
  const auto kept = found.rows().size();
  if (it->second.view_key == q.key || !found.bound() ||
      (kept > q.offset && kept - q.offset > q.limit)) {
    return &found;
  }
  return nullptr;
}

std::unique_ptr<core::window_view> make_window(dataset_state& ds, const index_type& idx,
                                               const core::bound_query& q, std::size_t max_reads) {
  auto window = std::make_unique<core::window_view>(idx, q.where, q.offset, q.limit, q.count);
  if (const auto* found = located_for(ds, q)) {
    window->fill(*found);
    return window;
  }
  // Another window with the same filter (another page, another sort) or a kept count has the
  // count already: counting again would evaluate the filter on every record (a pass, 0.13-0.35 s
  // at a million here, docs/performance.md) for each page opened.
  std::optional<std::uint64_t> known;
  if (q.count && !q.where.matches_all()) {
    known = known_count(ds, q);
  }
  if (!window->fill(known, max_reads)) {
    return nullptr;
  }
  return window;
}

namespace {

/// The runs of the index of `ds` whose runs for `where` hold the fewest records, when they hold
/// at most `max_reads`.
struct fewest_runs {
  index_entry* index = nullptr;
  std::vector<core::rank_span> spans;
  std::size_t records = 0;
};

std::optional<fewest_runs> fewest_runs_for(dataset_state& ds, const core::filter& where,
                                           std::size_t max_reads) {
  fewest_runs best;
  best.records = max_reads + 1;
  for (auto& [k, ie] : ds.indexes) {
    auto plan = core::span_plan::make(where, ie.idx->spec());
    if (!plan) {
      continue;
    }
    auto spans = plan->spans(*ie.idx);
    std::size_t n = 0;
    for (const auto& sp : spans) {
      n += sp.size();
    }
    if (n < best.records) {
      best = {&ie, std::move(spans), n};
    }
  }
  if (best.index == nullptr) {
    return std::nullopt;
  }
  return best;
}

template <class Each>
void for_each_in_runs(const fewest_runs& runs, Each&& each) {
  for (const auto& sp : runs.spans) {
    auto it = runs.index->idx->select(sp.first);
    for (auto r = sp.first; r < sp.last; ++r, ++it) {
      each(it->rec);
    }
  }
  if (runs.index->views.empty()) {
    runs.index->unused_since = clock_type::now();  // it serves queries: kept while it does
  }
}

}  // namespace

std::optional<std::vector<record_ptr>> records_that_can_match(dataset_state& ds,
                                                              const core::filter& where,
                                                              std::size_t max_reads) {
  std::vector<record_ptr> records;
  if (auto best = fewest_runs_for(ds, where, max_reads)) {
    records.reserve(best->records);
    for_each_in_runs(*best, [&](const record_ptr& r) { records.push_back(r); });
    return records;
  }
  // An $or across fields ({"$or": [{"owner": "u"}, {"shared": "u"}]}): every match lies in the
  // runs of one of its branches, each read from its own index, when together they are few.
  auto branches = where.disjuncts();
  if (branches.empty()) {
    return std::nullopt;
  }
  std::vector<fewest_runs> picked;
  std::size_t total = 0;
  for (const auto& branch : branches) {
    auto best = fewest_runs_for(ds, branch, max_reads - total);
    if (!best) {
      return std::nullopt;
    }
    total += best->records;
    picked.push_back(std::move(*best));
  }
  // A record in the runs of two branches is read once.
  std::unordered_set<const core::record*> seen;
  seen.reserve(total);
  records.reserve(total);
  for (const auto& runs : picked) {
    for_each_in_runs(runs, [&](const record_ptr& r) {
      if (seen.insert(r.get()).second) {
        records.push_back(r);
      }
    });
  }
  return records;
}

std::unique_ptr<core::window_view> window_from_spans(dataset_state& ds, const core::bound_query& q,
                                                     std::size_t max_reads) {
  auto records = records_that_can_match(ds, q.where, max_reads);
  if (!records) {
    return nullptr;
  }
  // Every record that can match is among them: a pass over them alone is a whole pass.
  auto found = core::first_matches::scan(*records, q.where, q.order, rows_to_keep(q));
  auto window = std::make_unique<core::window_view>(*ensure_index(ds, q.order).idx, q.where,
                                                    q.offset, q.limit, q.count);
  window->fill(found);
  return window;
}

namespace {

/// Whether an index of `ds` has `path` as its first key, built, being built, or to be built
/// after a pass that is running (index_build::then_index).
bool index_leads_with(const dataset_state& ds, const core::json_path& path) {
  return std::any_of(
             ds.indexes.begin(), ds.indexes.end(),
             [&](const auto& kv) { return kv.second.idx->spec().first_key_path() == path; }) ||
         std::any_of(ds.building.begin(), ds.building.end(),
                     [&](const auto& kv) { return kv.second.order.first_key_path() == path; }) ||
         std::any_of(ds.scanning.begin(), ds.scanning.end(), [&](const auto& kv) {
           return kv.second.started && kv.second.then_index &&
                  kv.second.then_index->first_key_path() == path;
         });
}

/// Whether index_room could make room for one more index in `ds` (without dropping anything).
bool room_possible(const dataset_state& ds, std::size_t max) {
  return ds.indexes.size() + ds.building.size() < max ||
         std::any_of(ds.indexes.begin(), ds.indexes.end(),
                     [&](const auto& kv) { return droppable(ds, kv.first, kv.second); }) ||
         std::any_of(ds.building.begin(), ds.building.end(),
                     [&](const auto& kv) { return droppable(ds, kv.first, kv.second); });
}

}  // namespace

std::optional<core::sort_spec> field_index_for(const dataset_state& ds,
                                               const core::bound_query& q) {
  // A field the filter bounds to intervals first; one it bounds by a complement ($ne, $nin) or a
  // whole type class ($type) only where that is the whole filter (its count then comes from
  // ranks).
  std::optional<core::sort_spec> complement;
  for (const auto& field : q.where.paths()) {
    auto order = core::filter_index_order({field});
    auto plan = order ? core::span_plan::make(q.where, *order) : std::nullopt;
    if (!plan || index_leads_with(ds, order->first_key_path())) {
      continue;
    }
    if (plan->narrow()) {
      return std::move(*order);
    }
    if (plan->exact() && !complement) {
      complement = std::move(*order);
    }
  }
  if (complement) {
    return complement;
  }
  // An $or across fields: an index for each branch, one per pass, while each branch bounds a
  // field narrowly (one that does not leaves every record a candidate) and they need at most
  // max_disjunct_index_fields fields in all.
  std::optional<core::sort_spec> wanted;
  std::unordered_set<std::string> needed;
  for (const auto& branch : q.where.disjuncts()) {
    const std::string* served = nullptr;
    const std::string* first = nullptr;
    std::optional<core::sort_spec> first_order;
    for (const auto& field : q.where.paths()) {
      auto order = core::filter_index_order({field});
      auto plan = order ? core::span_plan::make(branch, *order) : std::nullopt;
      if (!plan || !plan->narrow()) {
        continue;
      }
      if (index_leads_with(ds, order->first_key_path())) {
        served = &field;
        break;
      }
      if (!first) {
        first = &field;
        first_order = std::move(*order);
      }
    }
    if (!served && !first) {
      return std::nullopt;
    }
    needed.insert(served ? *served : *first);
    if (!served && !wanted) {
      wanted = std::move(first_order);
    }
  }
  if (needed.size() > core::max_disjunct_index_fields) {
    return std::nullopt;
  }
  return wanted;
}

void adopt_field_index(dataset_state& ds, index_build& pass, std::size_t max) {
  const auto& order = *pass.then_index;
  if (index_leads_with(ds, order.first_key_path()) || !index_room(ds, order, max)) {
    return;  // the index is freed on a loader thread when it comes (on_index_built)
  }
  index_build b;
  b.id = pass.then_index_id;
  b.order = order;
  b.for_filter = true;
  b.journal = std::move(pass.journal);
  b.purged = pass.purged;
  ds.building.emplace(sort_text(order), std::move(b));
}

void keep_filter_indexes(shard_ptr self, const std::string& dataset, dataset_state& ds) {
  auto& st = self->state;
  if (ds.pins_kept || ds.records.size() < build_elsewhere_from || st.successor) {
    // Below that size a filter's first page reads the records in place, in a few ms; a unit
    // being handed over builds nothing its successor would use.
    return;
  }
  const auto max = st.rt->opts.hub.max_sort_indexes_per_dataset;
  if (!ds.pins_known) {
    ds.pins_known = true;
    const auto& wanted = st.rt->filter_indexes;
    auto here = [&](const runtime::impl::filter_index& fi) {
      return fi.dataset == dataset && (fi.space.empty() || fi.space == st.unit.space) &&
             (fi.object.empty() || fi.object == st.unit.object);
    };
    // An index on one field is no use beside one on that field and another: the latter's runs
    // on its first key are the same.
    auto subsumed = [&](const runtime::impl::filter_index& fi) {
      return fi.keys.size() == 1 &&
             std::any_of(wanted.begin(), wanted.end(), [&](const auto& other) {
               return here(other) && other.keys.size() > 1 && other.keys[0] == fi.keys[0];
             });
    };
    for (const auto& fi : wanted) {
      if (!here(fi) || subsumed(fi) || ds.pinned.size() + 1 >= max) {
        continue;
      }
      auto order = core::sort_spec::parse(fi.keys);
      if (order && !ds.pins(sort_text(*order))) {
        ds.pinned.emplace_back(sort_text(*order), std::move(*order));
      }
    }
  }
  bool kept = true;
  for (const auto& [key, order] : ds.pinned) {
    if (ds.indexes.count(key)) {
      continue;
    }
    if (auto b = ds.building.find(key); b != ds.building.end()) {
      b->second.for_filter = false;  // a field's index after a pass, now wanted for good
      continue;
    }
    // Room is made as for a window's sort; with every slot held by windows' indexes it is
    // tried again at the next write or idle check.
    if (!index_room(ds, order, max)) {
      kept = false;
      continue;
    }
    start_index_build(self, dataset, ds, order, key);
  }
  ds.pins_kept = kept;
}

std::pair<std::unordered_map<std::string, view_entry>::iterator, view_snapshot> open_view(
    shard_state& st, const std::shared_ptr<const core::bound_query>& query,
    std::unique_ptr<core::window_view> window, std::vector<record_ptr>* found_rows) {
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
      v.window = window ? std::move(window)
                        : make_window(ds, *ie.idx, q, std::numeric_limits<std::size_t>::max());
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
      } else if (found_rows) {
        snap.rows = std::move(*found_rows);  // read from an index's runs (handle_subscribe)
      } else if (auto g = ds.gathered.find(q.where_text); g != ds.gathered.end()) {
        snap.rows = g->second->rows();  // a pass found them (on_scan_done)
      } else {
        bool all = q.where.matches_all();
        snap.rows.reserve(all ? ds.records.size() : 0);
        auto& reader = core::thread_doc_reader();
        for (const auto& r : ds.records) {
          if (all || q.where.matches(reader.read_only(*r, q.where.fields()))) {
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

namespace {

/// On a loader thread: builds `idx` from `records` and sends it to `shard` as build `id`.
void build_and_send(const shard_actor& shard, std::shared_ptr<std::vector<record_ptr>>& records,
                    std::shared_ptr<index_type> idx, const std::string& dataset,
                    const std::string& key, std::uint64_t id, runtime::impl& rt) {
  auto t0 = clock_type::now();
  idx->build(records->begin(), records->end());
  auto ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  if (ms >= 500) {
    log::info("built an index", {{"index", key}, {"records", records->size()}, {"ms", ms}});
  }
  records.reset();  // its references go here, not on the shard's thread
  caf::anon_send(shard, index_built_msg{dataset, key, std::move(idx), id});
  // After the send: a caller that sees no build running knows the index is in the mailbox.
  rt.index_builds_running.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace

std::map<std::string, index_build>::iterator start_index_build(shard_ptr self,
                                                               const std::string& dataset,
                                                               dataset_state& ds,
                                                               const core::sort_spec& order,
                                                               std::string key) {
  auto records = collect_records(ds);
  auto idx = std::make_shared<index_type>(order);
  const auto id = ++ds.builds_started;
  auto* rt = self->state.rt;
  rt->dataset_passes[0].fetch_add(1, std::memory_order_relaxed);
  rt->index_builds_running.fetch_add(1, std::memory_order_relaxed);
  rt->loader.post([shard = handle_of(self), rt, records, idx, dataset, key, id]() mutable {
    build_and_send(shard, records, std::move(idx), dataset, key, id, *rt);
  });
  index_build b;
  b.id = id;
  b.order = order;
  return ds.building.emplace(std::move(key), std::move(b)).first;
}

namespace {

/// Hands the dataset's records to a loader thread for the pass `job`, for its first waiter's
/// query (the one its journal and result are read for).
void launch_scan(shard_ptr self, const std::string& dataset, dataset_state& ds, index_build& job) {
  auto* rt = self->state.rt;
  // The index on the filter's field, built after the pass from the same records: not when one
  // is coming already (another pass, a build), or there can be no room for it.
  if (job.then_index && (index_leads_with(ds, job.then_index->first_key_path()) ||
                         !room_possible(ds, rt->opts.hub.max_sort_indexes_per_dataset))) {
    job.then_index.reset();
  }
  job.started = true;
  job.journal.clear();
  job.purged = false;
  const auto query = job.waiting.front().query;
  auto records = collect_records(ds);
  rt->dataset_passes[1].fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<index_type> then_idx;
  if (job.then_index) {
    job.then_index_id = ++ds.builds_started;
    then_idx = std::make_shared<index_type>(*job.then_index);
    rt->dataset_passes[0].fetch_add(1, std::memory_order_relaxed);
    rt->index_builds_running.fetch_add(1, std::memory_order_relaxed);
  }
  auto now_running = rt->filter_passes_running.fetch_add(1, std::memory_order_relaxed) + 1;
  for (auto peak = rt->filter_passes_peak.load(std::memory_order_relaxed);
       now_running > peak && !rt->filter_passes_peak.compare_exchange_weak(peak, now_running);) {
  }
  rt->loader.post([shard = handle_of(self), rt, records, query, dataset,
                   then_idx = std::move(then_idx), then_id = job.then_index_id]() mutable {
    auto t0 = clock_type::now();
    const auto& q = *query;
    std::shared_ptr<core::first_matches> found;
    std::shared_ptr<core::all_matches> all;
    if (q.bounded()) {
      found = std::make_shared<core::first_matches>(
          core::first_matches::scan(*records, q.where, q.order, rows_to_keep(q)));
    } else {
      all = std::make_shared<core::all_matches>(core::all_matches::scan(*records, q.where));
    }
    auto ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    if (ms >= 500) {
      log::info("scanned a dataset for a filter",
                {{"dataset", dataset}, {"records", records->size()}, {"ms", ms}});
    }
    rt->filter_passes_running.fetch_sub(1, std::memory_order_relaxed);
    caf::anon_send(shard, scan_done_msg{dataset, scan_key(q), q.where_text, q.key,
                                        sort_text(q.order), std::move(found), std::move(all)});
    if (then_idx) {
      // The same records: the pass's journal brings this index up to date too.
      auto key = sort_text(then_idx->spec());
      build_and_send(shard, records, std::move(then_idx), dataset, key, then_id, *rt);
    }
    records.reset();  // its references go here, not on the shard's thread
  });
}

std::size_t running_scans(const dataset_state& ds) {
  return static_cast<std::size_t>(std::count_if(ds.scanning.begin(), ds.scanning.end(),
                                                [](const auto& kv) { return kv.second.started; }));
}

}  // namespace

void scan_for(shard_ptr self, subscribe_msg& m, std::optional<core::sort_spec> then_index) {
  const auto& q = *m.query;
  auto& ds = self->state.data[q.dataset];
  auto [it, fresh] = ds.scanning.try_emplace(scan_key(q));
  it->second.waiting.push_back(std::move(m));
  if (then_index && !it->second.then_index && (fresh || !it->second.started)) {
    it->second.then_index = std::move(then_index);  // a running pass's loader has its orders
  }
  if (fresh) {
    it->second.started = false;
    it->second.queued = ++ds.scans_queued;
    launch_scans(self, q.dataset, ds);
  }
}

void launch_scans(shard_ptr self, const std::string& dataset, dataset_state& ds) {
  while (running_scans(ds) < max_scans_running) {
    auto next = ds.scanning.end();
    for (auto it = ds.scanning.begin(); it != ds.scanning.end(); ++it) {
      if (!it->second.started &&
          (next == ds.scanning.end() || it->second.queued < next->second.queued)) {
        next = it;
      }
    }
    if (next == ds.scanning.end()) {
      return;
    }
    if (next->second.waiting.empty()) {
      ds.scanning.erase(next);  // every subscription that wanted it left while it waited
      continue;
    }
    launch_scan(self, dataset, ds, next->second);
  }
}

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

void on_scan_done(shard_ptr self, scan_done_msg& m) {
  auto taken = take_job(self->state, m.dataset, &dataset_state::scanning, m.job_key);
  if (!taken) {
    return;
  }
  auto& ds = self->state.data[m.dataset];
  auto& job = *taken;
  // Kept even when every query that wanted the pass closed meanwhile: the next page of the
  // same filter would count it again.
  if (m.all) {
    if (job.purged) {
      m.all->clear();
    }
    m.all->catch_up(job.journal);
    keep_count(ds, m.all->where(), m.where_text, m.all->rows().size());
  } else {
    auto& found = *m.found;
    if (job.purged) {
      found.clear();
    }
    for (auto& [before, after] : job.journal) {
      found.apply(before.get(), after);
    }
    keep_count(ds, found.where(), m.where_text, found.count());
  }
  // The field's index the loader thread now builds from the pass's records (then_index) is
  // taken first, so that the subscriptions handled below see it coming (and do not ask for it
  // again); theirs are the indexes it may not replace (awaited_index sees `handling`).
  if (job.then_index) {
    ds.handling = &job.waiting;
    adopt_field_index(ds, job, self->state.rt->opts.hub.max_sort_indexes_per_dataset);
    ds.handling = nullptr;
  }
  if (job.waiting.empty()) {
    launch_scans(self, m.dataset, ds);
    return;
  }
  auto key = located_key(m.where_text, m.sort_key);
  if (m.all) {
    ds.gathered[m.where_text] = std::move(m.all);
  } else {
    ds.located[key] = dataset_state::located_rows{m.view_key, std::move(m.found)};
  }
  ds.handling = &job.waiting;
  for (auto& w : job.waiting) {
    handle_subscribe(self, w);
  }
  ds.handling = nullptr;
  ds.located.erase(key);
  ds.gathered.erase(m.where_text);
  launch_scans(self, m.dataset, ds);
}

void on_index_built(shard_ptr self, index_built_msg& m) {
  std::optional<index_build> taken;
  if (auto ds = self->state.data.find(m.dataset); ds != self->state.data.end()) {
    // Only the build of its number takes it: another build of this sort may have begun from
    // other records, and a field's index built after a pass may not have been taken at all.
    if (auto b = ds->second.building.find(m.key);
        b != ds->second.building.end() && b->second.id == m.id) {
      taken = take_job(self->state, m.dataset, &dataset_state::building, m.key);
    }
  }
  if (!taken) {
    // Not wanted: freed on a loader thread (an entry per record), not the unit's.
    self->state.rt->loader.post([idx = std::move(m.idx)] {});
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
  ds.handling = &build.waiting;
  for (auto& w : build.waiting) {
    handle_subscribe(self, w);
  }
  ds.handling = nullptr;
}

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
    std::unique_ptr<core::window_view> window;
    std::optional<core::all_matches> found;  // an unbounded result read here from an index
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
      // A window on a large dataset whose filter's count is not known, or whose rows its index
      // does not give within a bounded walk (matches far down the sort, or none): found by a
      // pass on a loader thread while the unit goes on serving. The pass that was made for it,
      // or for another window of the same filter and sort reaching as far, opens it.
      if (!q.where.matches_all() && ds.records.size() >= build_elsewhere_from) {
        // Read on this thread only within a bound: a pass's rows when one found them; else the
        // records an index says alone can match, when they are few; else a walk of the sort's
        // index when the count is known or not needed.
        if (located_for(ds, q)) {
          window = make_window(ds, *ensure_index(ds, q.order).idx, q, build_elsewhere_from);
        }
        if (!window) {
          window = window_from_spans(ds, q, build_elsewhere_from);
        }
        if (!window && (!q.count || known_count(ds, q))) {
          window = make_window(ds, *ensure_index(ds, q.order).idx, q, build_elsewhere_from);
        }
        if (!window) {
          // A pass on a loader thread. When the filter bounds a field no index leads with, the
          // loader thread then builds that field's index from the same records, so that later
          // filters on the field read its ranks instead of every record (a pass, 0.13-0.35 s at
          // 1M records; the build, several times that, is not waited for).
          scan_for(self, m, field_index_for(ds, q));
          return;
        }
      }
    } else if (auto& ds = st.data[q.dataset]; !q.single_id && !q.where.matches_all() &&
                                              ds.records.size() >= build_elsewhere_from &&
                                              !ds.gathered.count(q.where_text)) {
      // An unbounded query's first result on a large dataset: from the few records an index
      // says alone can match, read here; else its filter evaluated on every record by a pass
      // on a loader thread while the unit goes on serving (and, when the filter bounds a field
      // no index leads with, that field's index built after it, as for a window).
      auto records = records_that_can_match(ds, q.where, build_elsewhere_from);
      if (!records) {
        scan_for(self, m, field_index_for(ds, q));
        return;
      }
      found = core::all_matches::scan(*records, q.where);
    }
    auto [entry, snap] =
        open_view(st, m.query, std::move(window), found ? &found->rows() : nullptr);
    it = entry;
    it->second.actor = spawn_query(*st.rt, handle_of(self), m.query, std::move(snap));
  }
  ++it->second.forwarded;
  self->send(it->second.actor, std::move(m));
}

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

}  // namespace weir::actors::shard_impl

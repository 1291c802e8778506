// The shard's queries: views over the unit's records (a window over the index of its sort,
// maintained in O(log N) per change; an unbounded filter), the indexes and counts they share,
// built or counted on a loader thread for large datasets, and subscriptions opened on them.
// See shard_state.hpp.
#include "actors/shard_state.hpp"

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
  // A filter that is an interval on some index's first key is counted from its ranks.
  for (const auto& [k, ie] : ds.indexes) {
    if (auto n = core::count_by_ranks(*ie.idx, q.where, core::max_array_reads_for_count)) {
      return n;
    }
  }
  return std::nullopt;
}

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

// The shard's publish step: a durable batch goes into the unit's records, the ordered indexes
// its windows share, and one update per query whose rows it changed; then each write is
// acknowledged. Also what the store refused or corrected. See shard_state.hpp.
#include "actors/shard_state.hpp"

namespace weir::actors::shard_impl {

bool matches(const view_entry& v, const core::record& r, const boost::json::object& doc) {
  const auto& q = *v.q;
  return (!q.single_id || r.id == *q.single_id) && q.where.matches(doc);
}

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
    ds.for_each_job([&](index_build& b) {
      if (b.started) {
        b.journal.emplace_back(c.before, c.after);
      }
    });
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
  for (const auto& [name, steps_of] : by_dataset) {
    keep_filter_indexes(self, name, st.data[name]);
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
      st.rt->reload_unit(st.unit, handle_of(self));
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
      st.rt->reload_unit(st.unit, handle_of(self));
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

}  // namespace weir::actors::shard_impl

// The shard's write path up to the store: a write staged against the unit's records and
// pending writes (ids, PATCH and JSON Patch applied, document limits, versionIds stamped), and
// handed to the store as the unit's next batch, pending until it is durable; change capture's
// refreshes read back what other programs wrote. See shard_state.hpp.
#include "actors/shard_state.hpp"
#include "actors/whole_refresh.hpp"

namespace weir::actors::shard_impl {

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

namespace {

/// 404 record.not_found for the record `cmd` names.
core::error record_not_found(const write_command& cmd) {
  return core::make_error("record.not_found",
                          "record '" + cmd.id + "' does not exist in dataset '" + cmd.dataset + "'",
                          {{"id", cmd.id}, {"dataset", cmd.dataset}});
}

}  // namespace

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
        return record_not_found(cmd);
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
        return record_not_found(cmd);
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
  batch.forget_keys = st.keys.take_forgotten();
  shard_actor me = handle_of(self);
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

void handle_refresh(shard_ptr self, write_msg& m) {
  auto& st = self->state;
  if (is_whole_refresh_now(m.cmd)) {
    // The lane starts a whole refresh of this unit: the ids held here now, with the store's
    // (whole_refresh.hpp).
    const auto& dataset = m.cmd.dataset;
    std::vector<std::pair<std::string, std::string>> held;
    for (auto& [ds, r] : all_current(st)) {
      if (dataset.empty() || ds == dataset) {
        held.emplace_back(std::move(ds), r->id);
      }
    }
    run_whole_refresh(*st.rt, st.unit, dataset, std::move(held), std::move(m.done));
    return;
  }
  if (is_whole_refresh(m.cmd)) {
    // A transaction changed more rows than change capture kept the keys of: queued on the
    // node's whole refresh lane and taken at once (whole_refresh.hpp says why that is safe).
    refresh_whole(*st.rt, st.unit, m.cmd.dataset);
    m.done(write_outcome{});
    return;
  }
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
  auto queued = st.rt->store.read_after_writes(
      st.unit, dataset, std::move(ids),
      [job, me = handle_of(self)](core::result<std::vector<store::read_record>> rows) {
        job->rows = std::move(rows);
        caf::anon_send(me, refreshed_msg{job});
      });
  if (!queued) {
    job->msg.done(std::move(queued).error());  // not taken: change capture reads it again
    return;
  }
  ++st.refreshing;
}

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

}  // namespace weir::actors::shard_impl

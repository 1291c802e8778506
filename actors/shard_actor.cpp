// The shard actor: single writer of one ownership unit (space, objectId). It validates and
// applies writes, stamps versionIds from the unit's sequence, hands batches to the store for
// durable group commit, and only once a batch is durable publishes its record changes to the
// unit's query actors and acknowledges the write. It also owns the unit's query actors.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "actors/unit_idleness.hpp"
#include "core/record_rules.hpp"
#include "core/update_ops.hpp"
#include "core/version_id.hpp"

namespace weir::actors {
namespace {

using core::record_ptr;

struct dataset_state {
  std::unordered_map<std::string, record_ptr> records;
};

/// A write applied in memory but not yet durable: later writes build on it, queries don't see it.
struct overlay_entry {
  record_ptr rec;  // nullptr: deleted by the pending write
  std::uint64_t seq = 0;
};

struct pending_write {
  std::uint64_t seq = 0;
  std::string version_id;
  std::shared_ptr<std::vector<core::record_change>> changes;
  write_callback done;
};

struct query_entry {
  caf::actor actor;
  std::string route;  // index key: the dataset, or dataset '\0' id for a single document
  std::uint64_t forwarded = 0;
};

struct shard_state {
  runtime::impl* rt = nullptr;
  store::unit_key unit;
  std::uint64_t seq = 0;                                // last sequence handed to the store
  std::unordered_map<std::string, dataset_state> data;  // durable, published state
  std::unordered_map<std::string, overlay_entry> overlay;
  std::deque<pending_write> pending;
  std::unordered_map<std::string, query_entry> queries;
  // Which query actors a change can concern: collection queries by dataset, single-document
  // queries by (dataset, id), so a write wakes only the queries it may change, not every query
  // of the unit (one object's property write must not wake every object query of the space).
  std::unordered_map<std::string, std::vector<caf::actor>> routes;
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

/// The latest version of a record, pending writes included.
record_ptr current(shard_state& st, const std::string& dataset, const std::string& id) {
  if (auto it = st.overlay.find(overlay_key(dataset, id)); it != st.overlay.end()) {
    return it->second.rec;
  }
  auto ds = st.data.find(dataset);
  if (ds == st.data.end()) {
    return nullptr;
  }
  auto it = ds->second.records.find(id);
  return it == ds->second.records.end() ? nullptr : it->second;
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
    for (auto& [id, r] : d.records) {
      if (!seen.count(overlay_key(ds, id))) {
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
  std::optional<boost::json::object> after;  // nullopt: delete
};

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
                   cmd.kind == write_kind::delete_record;
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
  switch (cmd.kind) {
    case write_kind::put_object: {
      auto rec = core::normalize_record(std::move(cmd.body), cmd.object);
      if (!rec) {
        return std::move(rec).error();
      }
      std::string ds{objects_dataset};
      out.push_back({ds, cmd.object, current(st, ds, cmd.object), std::move(rec.value())});
      break;
    }
    case write_kind::put_record: {
      auto rec = core::normalize_record(std::move(cmd.body), cmd.id);
      if (!rec) {
        return std::move(rec).error();
      }
      out.push_back(
          {cmd.dataset, cmd.id, current(st, cmd.dataset, cmd.id), std::move(rec.value())});
      break;
    }
    case write_kind::patch_record: {
      auto spec = core::parse_update(cmd.body);
      if (!spec) {
        return std::move(spec).error();
      }
      auto before = current(st, cmd.dataset, cmd.id);
      if (!before) {
        return core::make_error(
            "record.not_found",
            "record '" + cmd.id + "' does not exist in dataset '" + cmd.dataset + "'",
            {{"id", cmd.id}, {"dataset", cmd.dataset}});
      }
      boost::json::object doc = before->doc;
      if (auto r = core::apply_update(spec.value(), doc); !r) {
        return std::move(r).error();
      }
      out.push_back({cmd.dataset, cmd.id, before, std::move(doc)});
      break;
    }
    case write_kind::delete_object_document:
      cmd.dataset = std::string{objects_dataset};
      [[fallthrough]];
    case write_kind::delete_record: {
      auto before = current(st, cmd.dataset, cmd.id);
      if (!before) {
        return core::make_error(
            "record.not_found",
            "record '" + cmd.id + "' does not exist in dataset '" + cmd.dataset + "'",
            {{"id", cmd.id}, {"dataset", cmd.dataset}});
      }
      out.push_back({cmd.dataset, cmd.id, before, std::nullopt});
      break;
    }
    case write_kind::delete_object: {
      for (auto& [ds, r] : all_current(st)) {
        out.push_back({ds, r->id, r, std::nullopt});
      }
      break;
    }
    case write_kind::batch: {
      if (!cmd.body.is_object()) {
        return core::make_error("request.not_object", "a batch body must be a JSON object");
      }
      auto& b = cmd.body.as_object();
      for (auto& kv : b) {
        if (kv.key() != "upsert" && kv.key() != "delete") {
          return core::make_error(
              "request.unknown_field",
              "unknown field \"" + std::string{kv.key()} + "\"; accepted fields: upsert, delete",
              {{"fields", boost::json::array{kv.key()}},
               {"accepted", boost::json::array{"upsert", "delete"}}});
        }
      }
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
          out.push_back({cmd.dataset, id, current(st, cmd.dataset, id), std::move(rec.value())});
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
          if (auto before = current(st, cmd.dataset, id)) {
            out.push_back({cmd.dataset, id, before, std::nullopt});
          }
        }
      }
      if (!b.contains("upsert") && !b.contains("delete")) {
        return core::make_error("request.missing_field",
                                "a batch needs \"upsert\" and/or \"delete\"",
                                {{"field", "upsert"}});
      }
      break;
    }
  }
  return out;
}

void handle_write(shard_ptr self, write_msg& m) {
  auto& st = self->state;
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
    m.done(write_outcome{
        m.cmd.kind == write_kind::delete_object ? std::string{} : core::encode_version_id(st.seq)});
    return;
  }
  std::uint64_t seq = st.seq + 1;
  auto vid = core::encode_version_id(seq);
  auto changes = std::make_shared<std::vector<core::record_change>>();
  changes->reserve(items.size());
  store::write_batch batch{st.unit, seq, {}};
  batch.writes.reserve(items.size());
  for (auto& s : items) {
    record_ptr after;
    if (s.after) {
      core::stamp_version(*s.after, vid);
      after = core::make_record(std::move(*s.after));
      batch.writes.push_back({s.dataset, s.id, after->json});
    } else {
      batch.writes.push_back({s.dataset, s.id, std::string{}});
    }
    changes->push_back(core::record_change{s.dataset, s.before, after});
  }
  caf::actor me = caf::actor_cast<caf::actor>(self);
  auto queued = st.rt->store.submit(std::move(batch), [me, seq](core::result<void> r) {
    caf::anon_send(me, commit_msg{seq, r.has_value(), r ? std::string{} : r.error().message});
  });
  if (!queued) {
    m.done(std::move(queued).error());
    return;
  }
  st.seq = seq;
  for (auto& c : *changes) {
    const auto& id = c.after ? c.after->id : c.before->id;
    st.overlay[overlay_key(c.dataset, id)] = overlay_entry{c.after, seq};
  }
  st.pending.push_back(pending_write{seq, std::move(vid), std::move(changes), std::move(m.done)});
}

void handle_commit(shard_ptr self, const commit_msg& m) {
  auto& st = self->state;
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
  std::unordered_set<std::string_view> datasets;
  for (auto& c : *w.changes) {
    const auto& id = c.after ? c.after->id : c.before->id;
    auto& ds = st.data[c.dataset].records;
    if (c.after) {
      ds[id] = c.after;
    } else {
      ds.erase(id);
    }
    auto key = overlay_key(c.dataset, id);
    if (auto it = st.overlay.find(key); it != st.overlay.end() && it->second.seq == w.seq) {
      st.overlay.erase(it);
    }
    datasets.insert(c.dataset);
  }
  if (!st.routes.empty()) {
    changes_msg msg{w.seq, w.version_id, w.changes};
    std::unordered_set<caf::actor_addr> sent;
    auto send_route = [&](const std::string& route) {
      auto r = st.routes.find(route);
      if (r == st.routes.end()) {
        return;
      }
      for (auto& a : r->second) {
        if (sent.insert(a.address()).second) {
          self->send(a, msg);
        }
      }
    };
    for (auto ds : datasets) {
      send_route(std::string{ds});
    }
    for (auto& c : *w.changes) {
      send_route(overlay_key(c.dataset, c.after ? c.after->id : c.before->id));
    }
  }
  w.done(write_outcome{std::move(w.version_id)});
}

void handle_subscribe(shard_ptr self, subscribe_msg& m) {
  auto& st = self->state;
  const auto& q = *m.query;
  auto it = st.queries.find(q.key);
  if (it == st.queries.end()) {
    std::vector<record_ptr> rows;
    if (auto ds = st.data.find(q.dataset); ds != st.data.end()) {
      rows.reserve(ds->second.records.size());
      for (auto& [id, r] : ds->second.records) {
        rows.push_back(r);
      }
    }
    // The query starts from the published state as of the last commit; every later commit
    // reaches it as a changes_msg, in order, so nothing is missed or seen twice.
    std::uint64_t published = st.pending.empty() ? st.seq : st.pending.front().seq - 1;
    auto a =
        spawn_query(*st.rt, caf::actor_cast<caf::actor>(self), m.query, std::move(rows), published);
    auto route = q.single_id ? overlay_key(q.dataset, *q.single_id) : q.dataset;
    st.routes[route].push_back(a);
    it = st.queries.emplace(q.key, query_entry{a, std::move(route), 0}).first;
  }
  ++it->second.forwarded;
  self->send(it->second.actor, std::move(m));
}

void handle_idle(shard_ptr self, const query_idle_msg& m) {
  auto& st = self->state;
  auto it = st.queries.find(m.key);
  // Only the key's current actor may retire it, and only if no subscribe is on its way to it.
  if (it != st.queries.end() && it->second.forwarded == m.seen &&
      caf::actor_cast<caf::actor_addr>(self->current_sender()) == it->second.actor.address()) {
    self->send(it->second.actor, stop_atom::value);
    auto& list = st.routes[it->second.route];
    std::erase(list, it->second.actor);
    if (list.empty()) {
      st.routes.erase(it->second.route);
    }
    st.queries.erase(it);
  }
}

void touch(shard_ptr self) {
  self->state.idle.touch(self, *self->state.rt);
}

void on_idle_check(shard_ptr self) {
  auto& st = self->state;
  st.idle.check(self, *st.rt, st.unit, [&st] { return st.queries.empty() && st.pending.empty(); });
}

caf::behavior shard_behavior(shard_ptr self, runtime::impl* rt, store::unit_key unit) {
  self->state.rt = rt;
  self->state.unit = unit;
  auto loaded = rt->store.load_unit(unit);
  if (!loaded) {
    // The unit cannot be read (store stopped, or an I/O error): this actor ends without serving
    // anything. Writes sent to it are answered server.unavailable by their guards; the next use
    // tries again.
    std::fprintf(stderr, "weir: cannot load unit '%s/%s': %s\n", unit.space.c_str(),
                 unit.object.c_str(), loaded.error().message.c_str());
    rt->forget_shard(unit, self->address());
    self->quit(caf::sec::runtime_error);
    return {};
  }
  self->state.seq = loaded->seq;
  // However this actor ends (retired, shut down, or killed by an exception in a handler), the
  // registry must stop handing it out; the next use reloads the unit from the store.
  self->attach_functor([rt, unit, addr = self->address()] { rt->forget_shard(unit, addr); });
  for (auto& r : loaded->records) {
    auto rec = core::parse_record(r.json);
    if (!rec) {
      // Serving less than was acknowledged would be silent data loss: refuse to go on.
      std::fprintf(stderr, "weir: fatal: unit '%s/%s' holds an unreadable record '%s/%s'\n",
                   unit.space.c_str(), unit.object.c_str(), r.dataset.c_str(), r.id.c_str());
      std::abort();
    }
    self->state.data[r.dataset].records.emplace(r.id, std::move(rec));
  }
  self->set_exit_handler([self](caf::exit_msg& msg) {
    for (auto& [k, q] : self->state.queries) {
      self->send(q.actor, stop_atom::value);
    }
    self->state.queries.clear();
    self->state.routes.clear();
    self->quit(msg.reason);
  });
  touch(self);
  return {
      [self](write_msg& m) {
        touch(self);
        handle_write(self, m);
      },
      [self](const commit_msg& m) { handle_commit(self, m); },
      [self](subscribe_msg& m) {
        touch(self);
        handle_subscribe(self, m);
      },
      [self](unsubscribe_msg& m) {
        auto it = self->state.queries.find(m.key);
        if (it != self->state.queries.end()) {
          self->send(it->second.actor, std::move(m));
        }
      },
      [self](resync_msg& m) {
        auto it = self->state.queries.find(m.key);
        if (it != self->state.queries.end()) {
          self->send(it->second.actor, std::move(m));
        }
      },
      [self](const query_idle_msg& m) {
        touch(self);
        handle_idle(self, m);
      },
      [self](idle_atom) { on_idle_check(self); },
  };
}

}  // namespace

caf::actor spawn_shard(runtime::impl& rt, store::unit_key unit) {
  return rt.sys->spawn(shard_behavior, &rt, std::move(unit));
}

}  // namespace weir::actors

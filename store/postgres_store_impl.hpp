// weir::store::postgres_store::impl — the PostgreSQL store's state (its connections, the group
// commit queue, change capture, the connections' health) and its group commit: one transaction
// per group with later batches winning, PATCHes applied again to rows another program changed
// (locked first), idempotency keys, elastic membership's fence, and the retries on a new
// connection after a break. Private to postgres_store.cpp, which holds the public methods.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/document_check.hpp"
#include "core/record_rules.hpp"
#include "core/rendezvous.hpp"
#include "core/update_ops.hpp"
#include "core/version_id.hpp"
#include "store/group_commit_queue.hpp"
#include "store/pg_support.hpp"
#include "store/postgres_change_reader.hpp"
#include "store/postgres_leases.hpp"
#include "store/postgres_schema.hpp"

namespace weir::store {

// This header is postgres_store.cpp's alone: the libpq helpers by their short names.
using pg::columns;
using pg::connect;
using pg::exec;
using pg::result_ptr;
using pg::trim;

/// The writer session's settings (again after each reconnect).
constexpr const char* writer_setup = "SET statement_timeout = '30s'";
/// The reader's (unit loads): a big unit may take seconds to read, but a lock that another
/// program holds on the tables (LOCK, ALTER, VACUUM FULL) fails the load after 5 s instead of
/// holding every later load behind it. One statement, as exec sends it.
constexpr const char* reader_setup =
    "SELECT set_config('statement_timeout', '60s', false), set_config('lock_timeout', '5s', "
    "false)";
/// The lookups' (a space's existence, a space's objects): a space lookup runs on an I/O thread,
/// so a lock another program holds fails it after 2 s.
constexpr const char* lookup_setup =
    "SELECT set_config('statement_timeout', '30s', false), set_config('lock_timeout', '2s', "
    "false)";
/// How long a space lookup waits for the lookup session (held by a listing of a space's
/// objects, which can take seconds) before answering as if it failed.
constexpr std::chrono::seconds lookup_wait{2};

struct postgres_store::impl {
  options opts;
  PGconn* writer_conn = nullptr;
  /// BEGIN and the marker naming this member as the transaction's writer: change capture
  /// skips the rows when that member owns their unit, and has the owner read them when not.
  std::string begin_sql;
  /// The fence's statement (elastic membership; see check_ownership).
  std::string fence_sql;
  mutable std::mutex reader_mu;
  PGconn* reader_conn = nullptr;
  // Space lookups have their own connection: they are short, and must not wait behind a
  // large unit's load on the reader.
  mutable std::timed_mutex lookup_mu;
  PGconn* lookup_conn = nullptr;
  std::unique_ptr<group_commit_queue> writer;
  mutable std::mutex capture_mu;
  std::unique_ptr<postgres_change_reader> capture_reader;  // once start_capture ran

  ~impl() {
    capture_reader.reset();  // its thread ends before anything it could call goes
    writer.reset();          // the writer thread ends before its connection closes
    if (writer_conn) {
      PQfinish(writer_conn);
    }
    if (reader_conn) {
      PQfinish(reader_conn);
    }
    if (lookup_conn) {
      PQfinish(lookup_conn);
    }
  }

  /// The settings of `c`'s session, made again whenever it is reconnected.
  const char* setup_of(PGconn* c) const {
    return c == writer_conn ? writer_setup : c == reader_conn ? reader_setup : lookup_setup;
  }

  /// A group whose connection broke is committed again on a new one, for up to 30 s (the
  /// database restarting, a failover): it writes final values with their sequences, so writing
  /// it twice leaves what writing it once does (a PATCH already in its row is not applied again,
  /// see commit). A group that lost to another program's transaction (a deadlock, a lock or
  /// statement timeout: store.conflict) is committed again the same way. Other errors fail at
  /// once.
  ///
  /// A connection that broke while its COMMIT was on the way leaves the outcome unknown: the
  /// transaction may have committed. Should the group then end refused (the fence: another
  /// member owns the unit now) or failed, its batches are answered write.outcome_unknown, never
  /// a refusal of a write that may be in the table.
  core::result<void> commit_with_retry(const std::vector<group_commit_queue::pending>& group) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{30};
    auto pause = std::chrono::milliseconds{100};
    bool uncertain = false;
    for (;;) {
      pg::heal(writer_conn, &reconnects, writer_setup);
      commit_sent = false;
      auto r = commit(group);
      bool conflict = !r && r.error().code == "store.conflict";
      bool broke = !r && pg::broken(writer_conn);
      uncertain = uncertain || (broke && commit_sent);
      if (!r && !broke && !conflict && !uncertain && group.size() > 1) {
        // PostgreSQL refused the transaction for something in it (a constraint or trigger
        // another program added, a value it will not take): one batch should not fail the
        // others. Each is committed on its own; the refused ones answer their own error, and
        // a later batch of a refused one's origin is refused unwritten (it built on it).
        note({}, false);
        return commit_one_by_one(group);
      }
      if (r || (!broke && !conflict) || std::chrono::steady_clock::now() + pause > deadline) {
        note(r ? std::string{} : r.error().message, broke);  // the outcome, after the retries
        return uncertain ? outcome_unknown(group, r) : r;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds{2000});
    }
  }

  /// The group again, one transaction per batch (see commit_with_retry): always succeeds as a
  /// group; each batch that failed carries its error in `refused`.
  core::result<void> commit_one_by_one(const std::vector<group_commit_queue::pending>& group) {
    std::set<std::uint64_t> failed_origins;
    for (const auto& p : group) {
      core::result<void> r;
      if (p.batch.origin != 0 && failed_origins.count(p.batch.origin)) {
        r = core::make_error("store.write_failed",
                             "an earlier write of this unit failed, and this one was built on "
                             "it: it was not applied; retry");
      } else {
        r = commit_with_retry(std::vector<group_commit_queue::pending>{p});
        if (r && p.batch.refused && !p.batch.refused->code.empty()) {
          r = *p.batch.refused;  // the fence refused it
        }
      }
      if (!r) {
        if (p.batch.origin != 0) {
          failed_origins.insert(p.batch.origin);
        }
        if (p.batch.refused) {
          *p.batch.refused = r.error();
        }
      }
    }
    return {};
  }

  /// The answers after an attempt whose COMMIT's outcome was lost (see commit_with_retry).
  static core::result<void> outcome_unknown(const std::vector<group_commit_queue::pending>& group,
                                            core::result<void> r) {
    auto unknown = core::make_error(
        "write.outcome_unknown",
        "the connection to PostgreSQL broke while the write was being committed, and it may "
        "have committed: read the record to see, or retry with the same Idempotency-Key");
    for (const auto& p : group) {
      if (p.batch.refused && !p.batch.refused->code.empty()) {
        *p.batch.refused = unknown;
      }
    }
    if (!r) {
      return unknown;
    }
    return r;
  }

  /// The last failure that came from the database being out of reach ("" once a statement
  /// succeeds again): /cluster/health's and /metrics' view of the store's connections.
  void note(const std::string& error, bool broke) {
    if (!error.empty() && !broke) {
      return;  // the database answered: a refusal, not an outage
    }
    std::lock_guard lock{health_mu};
    health_error = error;
  }
  bool commit_sent = false;  // the attempt under way sent its COMMIT (the writer thread's)
  std::atomic<std::uint64_t> reconnects{0};
  mutable std::mutex health_mu;
  std::string health_error;

  /// Runs `attempt` on `c` (under its owner's mutex), healed first; once more on a fresh
  /// connection when the session broke under it and `again` says running it twice is safe.
  template <class F>
  auto on_healed(
      PGconn* c, F&& attempt, const std::function<bool()>& again = [] { return true; })
      -> decltype(attempt(c)) {
    bool was_usable = pg::heal(c, &reconnects, setup_of(c));
    auto r = attempt(c);
    // Once more only when the session broke under the statement: when the database could not
    // be reached at all, a second connect would only double the wait.
    if (!r && was_usable && pg::broken(c) && again()) {
      pg::heal(c, &reconnects, setup_of(c));
      r = attempt(c);
    }
    note(r ? std::string{} : r.error().message, !r && pg::broken(c));
    return r;
  }

  using record_key =
      std::tuple<std::string_view, std::string_view, std::string_view, std::string_view>;

  /// A PATCHed row as the group found it, locked.
  struct locked_row {
    bool as_based_on = false;  // it holds the document the PATCH was applied to
    std::string json;          // otherwise: what it holds, compact
  };

  /// Locks the rows the group PATCHes (FOR UPDATE, in key order: another program's write to them
  /// waits for this transaction, and this one for theirs) and tells, for each, whether it still
  /// holds the document its first PATCH in the group was applied to (compared by the server, as
  /// jsonb) or else what it holds.
  result_ptr lock_patched(const std::vector<group_commit_queue::pending>& group,
                          std::map<record_key, locked_row>& out) {
    columns keys{5};
    std::set<record_key> seen;
    for (const auto& p : group) {
      for (const auto& w : p.batch.writes) {
        if (p.batch.captured) {
          break;
        }
        if (!w.update.empty() &&
            seen.insert({p.batch.unit.space, p.batch.unit.object, w.dataset, w.id}).second) {
          keys.add({p.batch.unit.space, p.batch.unit.object, w.dataset, w.id, w.based_on});
        }
      }
    }
    if (keys.rows == 0) {
      return result_ptr{PQmakeEmptyPGresult(writer_conn, PGRES_COMMAND_OK)};
    }
    auto r = exec(writer_conn,
                  "SELECT r.space, r.object, r.dataset, r.id, r.doc = k.based_on::jsonb, "
                  "CASE WHEN r.doc = k.based_on::jsonb THEN NULL ELSE r.doc::text END "
                  "FROM weir_records r "
                  "JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) "
                  "AS k(space, object, dataset, id, based_on) ON r.space = k.space AND "
                  "r.object = k.object AND r.dataset = k.dataset AND r.id = k.id "
                  "ORDER BY r.space COLLATE \"C\", r.object COLLATE \"C\", "
                  "r.dataset COLLATE \"C\", r.id COLLATE \"C\" FOR UPDATE OF r",
                  keys.finish());
    if (r.ok()) {
      for (int i = 0; i < PQntuples(r.r); ++i) {
        // The map's keys view strings that must outlive the result: kept in key_text.
        auto& k = key_text.emplace_back();
        for (int c = 0; c < 4; ++c) {
          k[c] = PQgetvalue(r.r, i, c);
        }
        locked_row row;
        row.as_based_on = PQgetvalue(r.r, i, 4)[0] == 't';
        if (!row.as_based_on) {
          row.json = pg_schema::compact(PQgetvalue(r.r, i, 5),
                                        static_cast<std::size_t>(PQgetlength(r.r, i, 5)));
        }
        out[{k[0], k[1], k[2], k[3]}] = std::move(row);
      }
    }
    return r;
  }
  std::deque<std::array<std::string, 4>> key_text;  // the locked rows' keys, for one commit

  /// Whether the record `json` carries `version_id` in its `_ver`: the batch is in it already
  /// (its first commit went through before the connection broke).
  static bool stamped_with(const std::string& json, const std::string& version_id) {
    boost::system::error_code ec;
    auto v = boost::json::parse(json, ec, {}, core::document_parse_options());
    const auto* o = ec ? nullptr : v.if_object();
    const auto* ver = o ? o->if_contains("_ver") : nullptr;
    const auto* id = ver && ver->is_object() ? ver->as_object().if_contains("id") : nullptr;
    return id && id->is_string() && id->as_string() == version_id;
  }

  /// `update` applied again to the record `json` (id `id`), stamped with `version_id`; the
  /// record as it is when the update no longer applies to it (another program made its path a
  /// string, say) or it is not a record Weir can hold.
  static std::string apply_again(const std::string& json, const std::string& update,
                                 const std::string& id, const std::string& version_id) {
    boost::system::error_code ed, eu;
    auto doc = boost::json::parse(json, ed, {}, core::document_parse_options());
    auto body = boost::json::parse(update, eu, {}, core::document_parse_options());
    if (ed || eu || !doc.is_object()) {
      return json;
    }
    doc.as_object().erase("id");  // the row's key is the record's id
    auto rec = core::normalize_record(std::move(doc), id);
    auto spec = core::parse_update(body);
    if (!rec || !spec || !core::apply_update(spec.value(), rec.value())) {
      return json;
    }
    core::stamp_version(rec.value(), version_id);
    return boost::json::serialize(rec.value());
  }

  /// The group in one transaction. Within it, later batches win (they were applied later by
  /// their units' owners), so each record and unit is written once, with its last value. A PATCH
  /// is applied again to the stored record when another program changed it since its owner read
  /// it (the rows are locked first), so neither loses the other's change.
  core::result<void> commit(const std::vector<group_commit_queue::pending>& group) {
    struct unit_state {
      std::uint64_t seq = 0;
      std::optional<bool> deleted;
    };
    auto fail = [&](const result_ptr& r) {
      // Lost to another program's transaction: a deadlock, a serialization failure, a lock or
      // statement timeout. Worth committing again (commit_with_retry).
      const char* state = r.r ? PQresultErrorField(r.r, PG_DIAG_SQLSTATE) : nullptr;
      std::string_view code = state ? state : "";
      bool conflict = code == "40P01" || code == "40001" || code == "55P03" || code == "57014";
      if (PQstatus(writer_conn) == CONNECTION_OK) {
        exec(writer_conn, "ROLLBACK");
      }
      return core::make_error(conflict ? "store.conflict" : "store.write_failed",
                              "PostgreSQL did not commit the write: " + trim(r.error()));
    };
    // The marker tells change capture that this transaction is Weir's own: its owner applied it
    // already, so the reader skips it (a transactional logical message, in the same round trip
    // as BEGIN; any role may emit one, and it costs a few bytes of WAL). It names this member.
    if (auto r = result_ptr{PQexec(writer_conn, begin_sql.c_str())}; !r.ok()) {
      if (!r.r) {
        r.why = PQerrorMessage(writer_conn);  // no result: the connection says why
      }
      return fail(r);
    }
    for (const auto& p : group) {
      if (p.batch.refused) {
        *p.batch.refused = {};  // a retried commit judges again
      }
    }
    key_text.clear();
    std::map<record_key, locked_row> stored;  // PATCHed rows as they are now (locked)
    if (auto r = lock_patched(group, stored); !r.ok()) {
      return fail(r);
    }
    std::deque<std::string> reapplied;  // owns the JSON of updates applied again
    std::map<record_key, std::pair<const std::string*, std::uint64_t>> records;
    std::map<std::pair<std::string_view, std::string_view>, unit_state> units;
    for (const auto& p : group) {
      const auto& b = p.batch;
      if (b.corrected) {
        b.corrected->clear();  // a retried commit starts over
      }
      for (const auto& w : b.writes) {
        if (b.captured) {
          break;  // already in the tables: another program wrote them (write_batch::captured)
        }
        record_key key{b.unit.space, b.unit.object, w.dataset, w.id};
        const std::string* json = &w.json;
        if (!w.update.empty()) {
          // What the row holds now: an earlier write of this group, else the locked row (or
          // nothing: another program deleted it).
          auto earlier = records.find(key);
          auto locked = stored.find(key);
          bool as_based_on = false;
          const std::string* now = nullptr;
          if (earlier != records.end()) {
            now = earlier->second.first;
            as_based_on = *now == w.based_on;
          } else if (locked != stored.end()) {
            as_based_on = locked->second.as_based_on;
            now = as_based_on ? &w.based_on : &locked->second.json;
          }
          if (!as_based_on) {
            auto version_id = core::encode_version_id(b.seq);
            reapplied.push_back(!now || now->empty() ? std::string{}
                                : stamped_with(*now, version_id)
                                    ? *now
                                    : apply_again(*now, w.update, w.id, version_id));
            json = &reapplied.back();
            if (b.corrected) {
              b.corrected->push_back({w.dataset, w.id, *json, {}, {}});
            }
          }
        }
        records[key] = {json, b.seq};
      }
      auto& u = units[{b.unit.space, b.unit.object}];
      u.seq = std::max(u.seq, b.seq);
      if (b.deleted) {
        u.deleted = b.deleted;
      }
    }
    columns upserts{6}, deletes{4}, seqs{3}, marks{4};
    for (const auto& [k, v] : records) {
      auto& [space, object, dataset, id] = k;
      if (v.first->empty()) {
        deletes.add({space, object, dataset, id});
      } else {
        upserts.add({space, object, dataset, id, *v.first, std::to_string(v.second)});
      }
    }
    for (const auto& [k, u] : units) {
      if (u.deleted) {
        marks.add({k.first, k.second, std::to_string(u.seq), *u.deleted ? "true" : "false"});
      } else {
        seqs.add({k.first, k.second, std::to_string(u.seq)});
      }
    }
    if (upserts.rows) {
      auto r = exec(writer_conn,
                    "INSERT INTO weir_records (space, object, dataset, id, doc, version) "
                    "SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], "
                    "$5::jsonb[], $6::bigint[]) "
                    "ON CONFLICT (space, object, dataset, id) "
                    "DO UPDATE SET doc = excluded.doc, version = excluded.version",
                    upserts.finish());
      if (!r.ok()) {
        return fail(r);
      }
    }
    if (deletes.rows) {
      auto r = exec(writer_conn,
                    "DELETE FROM weir_records r USING unnest($1::text[], $2::text[], $3::text[], "
                    "$4::text[]) AS d(space, object, dataset, id) "
                    "WHERE r.space = d.space AND r.object = d.object AND r.dataset = d.dataset "
                    "AND r.id = d.id",
                    deletes.finish());
      if (!r.ok()) {
        return fail(r);
      }
    }
    if (seqs.rows) {
      auto r = exec(writer_conn,
                    "INSERT INTO weir_units (space, object, seq) "
                    "SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) "
                    "ON CONFLICT (space, object) "
                    "DO UPDATE SET seq = greatest(weir_units.seq, excluded.seq)",
                    seqs.finish());
      if (!r.ok()) {
        return fail(r);
      }
    }
    if (marks.rows) {
      auto r = exec(writer_conn,
                    "INSERT INTO weir_units (space, object, seq, deleted) "
                    "SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[]) "
                    "ON CONFLICT (space, object) "
                    "DO UPDATE SET seq = greatest(weir_units.seq, excluded.seq), "
                    "deleted = excluded.deleted",
                    marks.finish());
      if (!r.ok()) {
        return fail(r);
      }
    }
    if (auto r = store_keys(group); !r.ok()) {
      return fail(r);
    }
    if (opts.fence) {
      // Last, so the lock is held only for the COMMIT that follows.
      auto owned = check_ownership(group);
      if (!owned) {
        exec(writer_conn, "ROLLBACK");
        return std::move(owned).error();
      }
      if (owned->size() < group.size()) {
        // Some units have another owner now: commit the others without them.
        exec(writer_conn, "ROLLBACK");
        return owned->empty() ? core::result<void>{} : commit(*owned);
      }
    }
    commit_sent = true;
    if (auto r = exec(writer_conn, "COMMIT"); !r.ok()) {
      return fail(r);
    }
    return {};
  }

  /// The group's idempotency keys, and the expired ones of the same units gone, and those
  /// their shards forgot (write_batch::forget_keys).
  result_ptr store_keys(const std::vector<group_commit_queue::pending>& group) {
    columns keys{6}, units{2}, forget{3};
    std::set<std::pair<std::string_view, std::string_view>> seen;
    for (const auto& p : group) {
      const auto& u = p.batch.unit;
      for (const auto& k : p.batch.forget_keys) {
        forget.add({u.space, u.object, k});
      }
      for (const auto& k : p.batch.keys) {
        keys.add({u.space, u.object, k.key, k.version_id, std::to_string(k.fingerprint),
                  std::to_string(k.expires_at_ms)});
        if (seen.insert({u.space, u.object}).second) {
          units.add({u.space, u.object});
        }
      }
    }
    if (forget.rows > 0) {
      auto r = exec(writer_conn,
                    "DELETE FROM weir_idempotency_keys k USING unnest($1::text[], $2::text[], "
                    "$3::text[]) AS f(space, object, key) WHERE k.space = f.space AND "
                    "k.object = f.object AND k.key = f.key",
                    forget.finish());
      if (!r.ok() || keys.rows == 0) {
        return r;
      }
    }
    if (keys.rows == 0) {
      return result_ptr{PQmakeEmptyPGresult(writer_conn, PGRES_COMMAND_OK)};
    }
    auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    auto u = units.finish();
    auto r = exec(writer_conn,
                  "DELETE FROM weir_idempotency_keys k USING unnest($1::text[], $2::text[]) "
                  "AS u(space, object) WHERE k.space = u.space AND k.object = u.object AND "
                  "k.expires_at_ms <= $3::bigint",
                  {u[0], u[1], std::to_string(now_ms)});
    if (!r.ok()) {
      return r;
    }
    return exec(writer_conn,
                "INSERT INTO weir_idempotency_keys "
                "(space, object, key, version_id, fingerprint, expires_at_ms) "
                "SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], "
                "$5::text[], $6::bigint[]) "
                "ON CONFLICT (space, object, key) DO UPDATE SET version_id = excluded.version_id, "
                "fingerprint = excluded.fingerprint, expires_at_ms = excluded.expires_at_ms",
                keys.finish());
  }

  /// Elastic membership's fence, the transaction's last statement before COMMIT: under a shared
  /// advisory lock (postgres_leases::fence_lock, taken exclusively by a change of owners, so
  /// the change waits for the commits that hold it and commits wait for a change), this
  /// member keeps only the batches of units the membership record names it the owner of, and
  /// only when its shard's state is not older than the record by more than one change (an
  /// epoch went by that the shard never saw: another member may have owned the unit
  /// meanwhile). The others are refused with cluster.not_owner; a member whose view lags
  /// cannot commit beside the unit's owner, and a new owner (which loads only once it saw the
  /// change) sees everything its predecessor committed.
  core::result<std::vector<group_commit_queue::pending>> check_ownership(
      const std::vector<group_commit_queue::pending>& group) {
    auto r = result_ptr{PQexec(writer_conn, fence_sql.c_str())};
    if (!r.ok()) {
      const char* state = PQresultErrorField(r.r, PG_DIAG_SQLSTATE);
      std::string_view code = state ? state : "";
      bool conflict = code == "40P01" || code == "40001" || code == "55P03" || code == "57014";
      return core::make_error(conflict ? "store.conflict" : "store.write_failed",
                              "PostgreSQL did not commit the write: " + trim(r.error()));
    }
    std::vector<std::string> owners;
    std::uint64_t epoch = 0;
    if (PQntuples(r.r) == 1) {
      epoch = std::stoull(PQgetvalue(r.r, 0, 0));
      std::string_view all = PQgetvalue(r.r, 0, 1);
      while (!all.empty()) {
        auto nl = all.find('\n');
        owners.emplace_back(all.substr(0, nl));
        all.remove_prefix(nl == std::string_view::npos ? all.size() : nl + 1);
      }
    }
    std::sort(owners.begin(), owners.end());
    std::vector<group_commit_queue::pending> owned;
    std::set<std::uint64_t> refused_origins;  // later batches of these built on a refused one
    for (const auto& p : group) {
      const auto& u = p.batch.unit;
      if (owners.empty()) {
        owned.push_back(p);  // no owners recorded yet
        continue;
      }
      const auto& owner =
          owners[core::rendezvous_owner(owners, core::unit_name(u.space, u.object))];
      bool current = p.batch.epoch == 0 || epoch <= p.batch.epoch + 1;
      bool after_refused = p.batch.origin != 0 && refused_origins.count(p.batch.origin) > 0;
      if (owner == opts.member && current && !after_refused) {
        owned.push_back(p);
      } else if (p.batch.refused) {
        if (p.batch.origin != 0) {
          refused_origins.insert(p.batch.origin);
        }
        *p.batch.refused = core::make_error(
            "cluster.not_owner",
            owner == opts.member && current
                ? "an earlier write of object '" + u.object + "' of space '" + u.space +
                      "' was refused (the cluster's owners changed) and this one was built on "
                      "it; nothing was applied: retry"
            : owner != opts.member
                ? "member '" + opts.member + "' no longer owns object '" + u.object +
                      "' of space '" + u.space + "' ('" + owner +
                      "' does now: the cluster's owners changed); nothing was applied: retry"
                : "member '" + opts.member +
                      "' missed a change of the cluster's owners while it held object '" +
                      u.object + "' of space '" + u.space + "'; nothing was applied: retry");
      }
    }
    return owned;
  }
};

}  // namespace weir::store

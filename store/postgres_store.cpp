// PostgreSQL-backed durable_store (see postgres_store.hpp). libpq's blocking calls run on the
// writer thread (commits) and under the reader's mutex (loads, called off the actor threads).
#include "store/postgres_store.hpp"

#include "store/postgres_store_impl.hpp"

namespace weir::store {

postgres_store::postgres_store(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

postgres_store::~postgres_store() {
  stop();
}

int postgres_store::schema_version() {
  return pg_schema::latest_version;
}

core::result<std::unique_ptr<postgres_store>> postgres_store::open(options opts) {
  auto p = std::make_unique<impl>();
  auto w = connect(opts.url);
  if (!w) {
    return std::move(w).error();
  }
  p->writer_conn = *w;
  {
    auto* lit = PQescapeLiteral(p->writer_conn, opts.member.data(), opts.member.size());
    p->begin_sql = std::string{"BEGIN; SELECT pg_logical_emit_message(true, 'weir', "} + lit + ")";
    PQfreemem(lit);
    p->fence_sql = "SELECT pg_advisory_xact_lock_shared(" +
                   std::to_string(postgres_leases::fence_lock) +
                   "); SELECT epoch, array_to_string(owners, E'\\n') FROM weir_membership";
  }
  auto r = connect(opts.url);
  if (!r) {
    return std::move(r).error();
  }
  p->reader_conn = *r;
  auto l = connect(opts.url);
  if (!l) {
    return std::move(l).error();
  }
  p->lookup_conn = *l;
  // Each session's time bounds (postgres_store_impl.hpp): set with a statement, not a startup
  // option (a pooler such as PgBouncer may refuse those), and again on every reconnect
  // (pg::heal, through setup_of).
  for (PGconn* c : {p->writer_conn, p->reader_conn, p->lookup_conn}) {
    if (auto t = exec(c, p->setup_of(c)); !t.ok()) {
      return core::make_error("store.open_failed", "PostgreSQL: " + trim(t.error()));
    }
  }
  if (auto m = pg_schema::migrate(p->writer_conn); !m) {
    return std::move(m).error();
  }
  p->opts = std::move(opts);
  auto* ip = p.get();
  p->writer = std::make_unique<group_commit_queue>(
      ip->opts.queue_capacity, [ip](const auto& group) { return ip->commit_with_retry(group); });
  return std::unique_ptr<postgres_store>(new postgres_store(std::move(p)));
}

core::result<unit_snapshot> postgres_store::load_unit(const unit_key& unit,
                                                      const record_visitor& visit) {
  std::lock_guard lock{impl_->reader_mu};
  bool visited = false;
  auto attempt = [&](PGconn* c) -> core::result<unit_snapshot> {
    auto fail = [&](const char* what, const result_ptr& r) {
      if (!pg::broken(c)) {
        exec(c, "ROLLBACK");
      }
      return core::make_error(
          "store.read_failed",
          std::string{"cannot read the unit from PostgreSQL ("} + what + "): " + trim(r.error()));
    };
    // The sequence and the records from one snapshot of the database.
    if (auto r = exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); !r.ok()) {
      return fail("begin", r);
    }
    unit_snapshot snap;
    {
      auto r = exec(c, "SELECT seq, deleted FROM weir_units WHERE space = $1 AND object = $2",
                    {unit.space, unit.object});
      if (!r.ok()) {
        return fail("its sequence", r);
      }
      if (PQntuples(r.r) == 1) {
        snap.seq = std::stoull(PQgetvalue(r.r, 0, 0));
        snap.deleted = PQgetvalue(r.r, 0, 1)[0] == 't';
      }
    }
    {
      auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
      auto r = exec(c,
                    "SELECT key, version_id, fingerprint, expires_at_ms FROM weir_idempotency_keys "
                    "WHERE space = $1 AND object = $2 AND expires_at_ms > $3::bigint",
                    {unit.space, unit.object, std::to_string(now_ms)});
      if (!r.ok()) {
        return fail("its idempotency keys", r);
      }
      for (int i = 0; i < PQntuples(r.r); ++i) {
        core::idempotency_entry e;
        e.key = PQgetvalue(r.r, i, 0);
        e.version_id = PQgetvalue(r.r, i, 1);
        e.fingerprint = std::strtoull(PQgetvalue(r.r, i, 2), nullptr, 10);
        e.expires_at_ms = std::strtoll(PQgetvalue(r.r, i, 3), nullptr, 10);
        snap.keys.push_back(std::move(e));
      }
    }
    // Row by row (single-row mode): a large unit is never held twice in memory.
    const char* params[] = {unit.space.c_str(), unit.object.c_str()};
    if (!PQsendQueryParams(c,
                           "SELECT dataset, id, doc::text FROM weir_records "
                           "WHERE space = $1 AND object = $2 ORDER BY dataset, id",
                           2, nullptr, params, nullptr, nullptr, 0) ||
        !PQsetSingleRowMode(c)) {
      std::string why = trim(PQerrorMessage(c));
      while (PGresult* rest = PQgetResult(c)) {
        PQclear(rest);  // the connection must be idle again before the ROLLBACK
      }
      if (!pg::broken(c)) {
        exec(c, "ROLLBACK");
      }
      return core::make_error("store.read_failed", "cannot read the unit from PostgreSQL: " + why);
    }
    std::string error;
    while (PGresult* raw = PQgetResult(c)) {
      result_ptr r{raw};
      if (r.status() == PGRES_SINGLE_TUPLE) {
        visited = true;
        visit(std::string_view{PQgetvalue(r.r, 0, 0)}, std::string_view{PQgetvalue(r.r, 0, 1)},
              pg_schema::compact(PQgetvalue(r.r, 0, 2),
                                 static_cast<std::size_t>(PQgetlength(r.r, 0, 2))));
      } else if (!r.ok() && error.empty()) {
        error = trim(r.error());
      }
    }
    if (!pg::broken(c)) {
      exec(c, "COMMIT");
    }
    if (!error.empty()) {
      return core::make_error("store.read_failed",
                              "cannot read the unit from PostgreSQL: " + error);
    }
    return snap;
  };
  // Read again on a fresh connection only while nothing reached the visitor (it would see rows
  // twice).
  return impl_->on_healed(impl_->reader_conn, attempt, [&] { return !visited; });
}

core::result<void> postgres_store::read_after_writes(const unit_key& unit,
                                                     const std::string& dataset,
                                                     std::vector<std::string> ids,
                                                     read_callback done) {
  auto rows = std::make_shared<core::result<std::vector<read_record>>>(std::vector<read_record>{});
  auto* ip = impl_.get();
  auto read = [ip, unit, dataset, ids = std::move(ids), rows] {
    // On the writer thread, between two groups: its connection is idle, and every batch queued
    // before this read is committed.
    columns wanted{1};
    for (const auto& id : ids) {
      wanted.add({id});
    }
    auto list = wanted.finish()[0];
    std::optional<result_ptr> got;
    auto read_rows = [&](PGconn* c) -> core::result<void> {
      got.emplace(exec(c,
                       "SELECT id, doc::text FROM weir_records WHERE space = $1 AND object = $2 "
                       "AND dataset = $3 AND id = ANY($4::text[])",
                       {unit.space, unit.object, dataset, list}));
      if (!got->ok()) {
        return core::make_error("store.read_failed",
                                "cannot read records from PostgreSQL: " + trim(got->error()));
      }
      return {};
    };
    if (auto ok = ip->on_healed(ip->writer_conn, read_rows); !ok) {
      *rows = std::move(ok).error();
      return;
    }
    auto& r = *got;
    std::map<std::string, std::string, std::less<>> found;
    for (int i = 0; i < PQntuples(r.r); ++i) {
      found.emplace(PQgetvalue(r.r, i, 0),
                    pg_schema::compact(PQgetvalue(r.r, i, 1),
                                       static_cast<std::size_t>(PQgetlength(r.r, i, 1))));
    }
    std::vector<read_record> out;
    out.reserve(ids.size());
    for (const auto& id : ids) {
      auto it = found.find(id);
      out.push_back({id, it == found.end() ? std::nullopt : std::optional{it->second}});
    }
    *rows = std::move(out);
  };
  return impl_->writer->submit_read(
      std::move(read), [rows, done = std::move(done)](core::result<void> r) {
        done(r ? std::move(*rows) : core::result<std::vector<read_record>>{r.error()});
      });
}

bool postgres_store::has_space(const std::string& space) const {
  // Called on an I/O thread: it waits a bounded time for the session, and the session's
  // lock_timeout bounds the statement. A lookup that cannot run answers "exists", as a failed
  // one does (below).
  std::unique_lock lock{impl_->lookup_mu, std::defer_lock};
  if (!lock.try_lock_for(lookup_wait)) {
    return true;
  }
  bool found = true;
  (void)impl_->on_healed(impl_->lookup_conn, [&](PGconn* c) -> core::result<void> {
    // Rows another program inserted with SQL make a space too (they have no weir_units row
    // until Weir writes the unit); both lookups use the tables' primary keys.
    auto r = exec(c,
                  "SELECT EXISTS (SELECT 1 FROM weir_units WHERE space = $1) OR "
                  "EXISTS (SELECT 1 FROM weir_records WHERE space = $1)",
                  {space});
    if (!r.ok()) {
      // A failed lookup answers "exists": the request goes on to the query, which reports the
      // store's error, rather than a 404 for a space that may well exist.
      found = true;
      return core::make_error("store.read_failed", trim(r.error()));
    }
    found = PQgetvalue(r.r, 0, 0)[0] == 't';
    return {};
  });
  return found;
}

std::vector<std::string> postgres_store::objects_with_dataset(const std::string& space,
                                                              const std::string& dataset) const {
  std::lock_guard lock{impl_->lookup_mu};
  std::vector<std::string> out;
  (void)impl_->on_healed(impl_->lookup_conn, [&](PGconn* c) -> core::result<void> {
    auto r = exec(c,
                  "SELECT DISTINCT object FROM weir_records "
                  "WHERE space = $1 AND dataset = $2 AND object <> '' ORDER BY object",
                  {space, dataset});
    if (!r.ok()) {
      return core::make_error("store.read_failed", trim(r.error()));
    }
    for (int i = 0; i < PQntuples(r.r); ++i) {
      out.emplace_back(PQgetvalue(r.r, i, 0));
    }
    return {};
  });
  return out;
}

core::result<void> postgres_store::submit(write_batch batch, commit_callback done) {
  // This batch may be refused alone while the rest of its group commits: by the fence (another
  // member owns its unit now), or when PostgreSQL refuses it and the group is committed again
  // batch by batch (commit_with_retry).
  auto refused = std::make_shared<core::error>();
  batch.refused = refused;
  return impl_->writer->submit(std::move(batch),
                               [refused, done = std::move(done)](core::result<void> r) {
                                 if (r && !refused->code.empty()) {
                                   done(*refused);
                                 } else {
                                   done(std::move(r));
                                 }
                               });
}

std::size_t postgres_store::queued() const {
  return impl_->writer->queued();
}

const core::count_histogram* postgres_store::group_sizes() const {
  return &impl_->writer->group_sizes();
}

void postgres_store::start_capture(std::string member, capture_sink sink) {
  if (!impl_->opts.change_capture) {
    return;
  }
  std::lock_guard lock{impl_->capture_mu};
  if (impl_->capture_reader || impl_->writer->stopped()) {
    return;
  }
  impl_->capture_reader = std::make_unique<postgres_change_reader>(
      postgres_change_reader::options{impl_->opts.url, std::move(member)}, std::move(sink));
}

capture_status postgres_store::capture() const {
  std::lock_guard lock{impl_->capture_mu};
  if (!impl_->capture_reader) {
    capture_status off;
    off.error = impl_->opts.change_capture ? "not started" : "off (store.postgres.changeCapture)";
    return off;
  }
  return impl_->capture_reader->status();
}

connection_health postgres_store::connections() const {
  connection_health h;
  h.reconnects = impl_->reconnects.load(std::memory_order_relaxed);
  std::lock_guard lock{impl_->health_mu};
  h.error = impl_->health_error;
  return h;
}

void postgres_store::stop_capture() {
  std::lock_guard lock{impl_->capture_mu};
  if (impl_->capture_reader) {
    impl_->capture_reader->stop();
  }
}

void postgres_store::stop() {
  if (impl_) {
    stop_capture();  // first: nothing new is handed to the owners while the writes drain
    impl_->writer->stop();
  }
}

}  // namespace weir::store

// The PostgreSQL schema's migrations and the stored JSON read back (postgres_schema.hpp).
#include "store/postgres_schema.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/document_check.hpp"
#include "core/record_rules.hpp"
#include "core/version_id.hpp"
#include "store/pg_support.hpp"

namespace weir::store::pg_schema {

using pg::exec;
using pg::result_ptr;
using pg::trim;

namespace {

/// One schema migration: applied in order, each in the transaction that records it.
struct migration {
  int version;
  const char* description;
  const char* sql;
};

constexpr migration migrations[] = {
    {1, "records and units",
     "CREATE TABLE weir_records ("
     "  space text NOT NULL,"
     "  object text NOT NULL,"
     "  dataset text NOT NULL,"
     "  id text NOT NULL,"
     "  doc jsonb NOT NULL,"
     "  version bigint NOT NULL,"
     "  PRIMARY KEY (space, object, dataset, id));"
     "CREATE INDEX weir_records_by_dataset ON weir_records (space, dataset, object);"
     "CREATE TABLE weir_units ("
     "  space text NOT NULL,"
     "  object text NOT NULL,"
     "  seq bigint NOT NULL,"
     "  deleted boolean NOT NULL DEFAULT false,"
     "  PRIMARY KEY (space, object));"},
    // Change capture reads the records' changes from a logical replication slot through this
    // publication (postgres_change_reader); deletes identify rows by the primary key.
    {2, "change capture publication", "CREATE PUBLICATION weir_changes FOR TABLE weir_records;"},
    // Elastic membership (postgres_leases): each member's lease, and which members own units
    // under which epoch.
    {3, "member leases and the membership record",
     "CREATE TABLE weir_members ("
     "  member text PRIMARY KEY,"
     "  peer text NOT NULL,"
     "  http text NOT NULL,"
     "  draining boolean NOT NULL DEFAULT false,"
     "  joined_at timestamptz NOT NULL DEFAULT now(),"
     "  lease_until timestamptz NOT NULL);"
     "CREATE TABLE weir_membership ("
     "  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),"
     "  epoch bigint NOT NULL,"
     "  owners text[] NOT NULL,"
     "  changed_at timestamptz NOT NULL DEFAULT now());"},
    // Idempotency keys of acknowledged writes, per unit, until they expire (write_batch::keys).
    // Not in the change-capture publication: they are Weir's own bookkeeping.
    {4, "idempotency keys",
     "CREATE TABLE weir_idempotency_keys ("
     "  space text NOT NULL,"
     "  object text NOT NULL,"
     "  key text NOT NULL,"
     "  version_id text NOT NULL,"
     "  fingerprint text NOT NULL,"
     "  expires_at_ms bigint NOT NULL,"
     "  PRIMARY KEY (space, object, key));"},
};

}  // namespace

core::result<void> migrate(PGconn* c) {
  auto fail = [](std::string what, const result_ptr& r) {
    return core::make_error("store.open_failed",
                            "PostgreSQL schema migration: " + what + ": " + trim(r.error()));
  };
  if (auto r = exec(c, "BEGIN"); !r.ok()) {
    return fail("begin", r);
  }
  // Members starting together: one migrates, the others wait here and find it done.
  if (auto r = exec(c, "SELECT pg_advisory_xact_lock(7316575811235112793)"); !r.ok()) {
    return fail("lock", r);
  }
  // Created only when missing: a role without CREATE on the schema can run on tables made
  // beforehand (PostgreSQL checks the privilege even for IF NOT EXISTS).
  auto exists = exec(c, "SELECT to_regclass('weir_schema_migrations') IS NOT NULL");
  if (!exists.ok()) {
    return fail("looking for the migrations table", exists);
  }
  if (PQgetvalue(exists.r, 0, 0)[0] != 't') {
    auto r = exec(c,
                  "CREATE TABLE weir_schema_migrations ("
                  "  version integer PRIMARY KEY,"
                  "  description text NOT NULL,"
                  "  applied_at timestamptz NOT NULL DEFAULT now())");
    if (!r.ok()) {
      return fail("the migrations table", r);
    }
  }
  auto current = exec(c, "SELECT coalesce(max(version), 0) FROM weir_schema_migrations");
  if (!current.ok()) {
    return fail("reading the version", current);
  }
  int have = std::atoi(PQgetvalue(current.r, 0, 0));
  if (have > latest_version) {
    exec(c, "ROLLBACK");
    return core::make_error("store.open_failed",
                            "the PostgreSQL schema is at version " + std::to_string(have) +
                                ", newer than this build's " + std::to_string(latest_version) +
                                ": run the newer weir");
  }
  for (const auto& m : migrations) {
    if (m.version <= have) {
      continue;
    }
    // Several statements: the simple query protocol (no parameters) runs them in order.
    if (auto r = result_ptr{PQexec(c, m.sql)}; !r.ok()) {
      exec(c, "ROLLBACK");
      return fail("version " + std::to_string(m.version), r);
    }
    if (auto r =
            exec(c, "INSERT INTO weir_schema_migrations (version, description) VALUES ($1, $2)",
                 {std::to_string(m.version), m.description});
        !r.ok()) {
      exec(c, "ROLLBACK");
      return fail("recording version " + std::to_string(m.version), r);
    }
  }
  if (auto r = exec(c, "COMMIT"); !r.ok()) {
    return fail("commit", r);
  }
  return {};
}

std::string compact(const char* text, std::size_t n) {
  boost::system::error_code ec;
  auto v = boost::json::parse(std::string_view{text, n}, ec, {}, core::document_parse_options());
  if (ec || !core::check_document(v, core::unbounded_sizes)) {
    // Left as it is for the reader's checks to refuse with the reason (re-encoded, a number
    // past the largest double would become a token no JSON parser reads).
    return std::string{text, n};
  }
  if (auto* o = v.if_object()) {
    const auto* ver = o->if_contains("_ver");
    const auto* vid = ver && ver->is_object() ? ver->as_object().if_contains("id") : nullptr;
    if (vid && vid->is_string()) {
      std::string id{vid->as_string()};
      core::stamp_version(*o, id);
    }
  }
  return boost::json::serialize(v);
}

}  // namespace weir::store::pg_schema

// weir::store PostgreSQL schema — the tables Weir keeps in PostgreSQL (weir_records and the
// rest, docs/operations.md#postgresql): their migrations, applied in order under an advisory
// lock so that members starting together migrate once, and how a stored record's jsonb text is
// read back as Weir writes records. Only store/ includes this.
#pragma once

#include <cstddef>
#include <string>

#include <libpq-fe.h>

#include "core/result.hpp"

namespace weir::store::pg_schema {

/// The schema version this build writes and reads.
inline constexpr int latest_version = 4;

/// Brings the database's tables to latest_version (creating them on an empty database);
/// store.open_failed when it cannot, or when the database is newer than this build.
core::result<void> migrate(PGconn* c);

/// jsonb's text form has blanks after `:` and `,`, and jsonb keeps an object's members in its
/// own order (shorter keys first), not the written one. Records travel compact with `id` first
/// and `_ver` last (protocols.md), so loads re-encode and put those two back in place; the
/// order of the other members is jsonb's.
std::string compact(const char* text, std::size_t n);

}  // namespace weir::store::pg_schema

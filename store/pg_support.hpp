// weir::store::pg — the few libpq helpers the PostgreSQL store and its change reader share:
// results that free themselves, parameterized statements, connections with bounded waits, and
// array literals for bulk statements' parameters.
// Only store/ includes this (it brings libpq's header).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <libpq-fe.h>

#include "core/result.hpp"

namespace weir::store::pg {

/// A PGresult that frees itself.
struct result_ptr {
  PGresult* r = nullptr;
  explicit result_ptr(PGresult* p) : r(p) {}
  result_ptr(const result_ptr&) = delete;
  result_ptr& operator=(const result_ptr&) = delete;
  result_ptr(result_ptr&& o) noexcept : r(o.r), why(std::move(o.why)) { o.r = nullptr; }
  ~result_ptr() {
    if (r) {
      PQclear(r);
    }
  }
  ExecStatusType status() const { return PQresultStatus(r); }
  bool ok() const {
    auto s = status();
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
  }
  std::string error() const {
    return r ? PQresultErrorMessage(r) : why.empty() ? "no result" : why;
  }
  /// The connection's message when libpq gave no result (set by exec).
  std::string why;
};

/// Makes `c` ready for a statement: reads what the server sent while the connection sat idle
/// (a server that restarted or ended the session left its goodbye there, which marks the
/// connection broken) and reconnects a broken one. True when `c` is usable; false when it is
/// still broken (the database is down): the statement then fails with libpq's reason.
/// A reconnect counts in `reconnects` (when given).
/// `setup_sql` runs on a fresh session (the settings the old one had, e.g. a statement timeout).
bool heal(PGconn* c, std::atomic<std::uint64_t>* reconnects = nullptr,
          const char* setup_sql = nullptr);

/// Whether a statement on `c` failed because the session broke (the server went away, or ended
/// it): running it again on a fresh connection may succeed.
inline bool broken(PGconn* c) {
  return PQstatus(c) != CONNECTION_OK;
}

/// `s` without its trailing newlines and blanks (libpq's messages end with one).
std::string trim(std::string s);

/// Runs `sql` with text parameters.
result_ptr exec(PGconn* c, const char* sql, const std::vector<std::string>& params = {});

/// The `options` a connection string sets itself (a search_path, say), so that settings a
/// connection adds can come after them instead of replacing them.
std::string url_options(const std::string& url);

/// Connects with bounded waits unless the URL says otherwise: a database that stops answering
/// must fail a connect or a statement within seconds, not hang a thread on TCP's two hours.
/// `extra` settings (a replication connection's, an application name) override the URL's.
/// Errors: store.open_failed.
core::result<PGconn*> connect(const std::string& url,
                              const std::vector<std::pair<std::string, std::string>>& extra = {});

/// PostgreSQL array literals being built, one per column: a bulk statement's parameters
/// (`unnest($1::text[], …)`), one row at a time.
struct columns {
  std::vector<std::string> arrays;
  std::size_t rows = 0;
  explicit columns(std::size_t n) : arrays(n, "{") {}
  /// Appends one row: a value per column, quoted, with `"` and `\` escaped.
  void add(std::initializer_list<std::string_view> values);
  /// The finished literals, one per column.
  std::vector<std::string> finish();
};

}  // namespace weir::store::pg

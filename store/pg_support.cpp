// libpq helpers shared by the PostgreSQL store and its change reader (see pg_support.hpp).
#include "store/pg_support.hpp"

#include <poll.h>

#include <cstdio>
#include <string_view>

#include "log/log.hpp"

namespace weir::store::pg {
namespace {

/// The server's notices: NOTICE and below are routine (a migration's "already exists"); the
/// rest is logged as a warning.
void on_notice(void*, const char* message) {
  std::string_view m{message};
  if (!m.starts_with("NOTICE") && !m.starts_with("DEBUG") && !m.starts_with("INFO") &&
      !m.starts_with("LOG")) {
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) {
      m.remove_suffix(1);
    }
    log::warn("postgres notice", {{"message", m}});
  }
}

}  // namespace

bool heal(PGconn* c, std::atomic<std::uint64_t>* reconnects, const char* setup_sql) {
  // Only an idle session has nothing of a statement's left to read. A server that ended the
  // session left an ErrorResponse (FATAL) and then EOF: PQconsumeInput takes the bytes there
  // are, PQisBusy parses them (an idle-time error becomes a notice), and the next
  // PQconsumeInput meets the EOF, which marks the connection broken. Bounded: a server that
  // keeps sending notices does not hold this up.
  for (int round = 0;
       round < 8 && PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_IDLE;
       ++round) {
    pollfd p{PQsocket(c), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) {
      break;  // nothing waiting: the session is as good as a check can tell
    }
    if (!PQconsumeInput(c)) {
      break;  // EOF or an error: the status says broken now
    }
    PQisBusy(c);
  }
  if (PQstatus(c) == CONNECTION_OK) {
    return true;
  }
  PQreset(c);
  if (PQstatus(c) != CONNECTION_OK) {
    return false;
  }
  if (setup_sql) {
    // Session settings do not survive a reset (a pooler in front may not take them as startup
    // options either): set them again.
    result_ptr{PQexec(c, setup_sql)};
  }
  if (reconnects) {
    reconnects->fetch_add(1, std::memory_order_relaxed);
  }
  log::info("reconnected to PostgreSQL", {{"database", std::string_view{PQdb(c)}}});
  return true;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
    s.pop_back();
  }
  return s;
}

result_ptr exec(PGconn* c, const char* sql, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) {
    values.push_back(p.c_str());
  }
  result_ptr r{PQexecParams(c, sql, static_cast<int>(values.size()), nullptr, values.data(),
                            nullptr, nullptr, 0)};
  if (!r.r) {
    r.why = PQerrorMessage(c);  // no result at all: the connection is broken and says why
  }
  return r;
}

core::result<PGconn*> connect(const std::string& url,
                              const std::vector<std::pair<std::string, std::string>>& extra) {
  // The defaults come first, so the URL's own settings win (libpq expands `dbname` in place);
  // `extra` comes after it and wins over both.
  std::vector<const char*> keys = {"connect_timeout",
                                   "keepalives_idle",
                                   "keepalives_interval",
                                   "keepalives_count",
                                   "tcp_user_timeout",
                                   "client_encoding",
                                   "dbname"};
  std::vector<const char*> values = {"10", "10", "5", "3", "30000", "UTF8", url.c_str()};
  for (const auto& [k, v] : extra) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* c = PQconnectdbParams(keys.data(), values.data(), 1);
  if (PQstatus(c) != CONNECTION_OK) {
    std::string why = trim(PQerrorMessage(c));
    PQfinish(c);
    return core::make_error("store.open_failed", "cannot connect to PostgreSQL: " + why);
  }
  PQsetNoticeProcessor(c, on_notice, nullptr);
  return c;
}

std::string url_options(const std::string& url) {
  std::string out;
  if (PQconninfoOption* opts = PQconninfoParse(url.c_str(), nullptr)) {
    for (auto* o = opts; o->keyword; ++o) {
      if (std::string_view{o->keyword} == "options" && o->val) {
        out = o->val;
      }
    }
    PQconninfoFree(opts);
  }
  return out;
}

namespace {

/// Appends one element of a PostgreSQL array literal: quoted, with `"` and `\` escaped.
void append_element(std::string& out, std::string_view v) {
  if (out.size() > 1) {
    out.push_back(',');
  }
  out.push_back('"');
  for (char ch : v) {
    if (ch == '"' || ch == '\\') {
      out.push_back('\\');
    }
    out.push_back(ch);
  }
  out.push_back('"');
}

}  // namespace

void columns::add(std::initializer_list<std::string_view> values) {
  std::size_t i = 0;
  for (auto v : values) {
    append_element(arrays[i++], v);
  }
  ++rows;
}

std::vector<std::string> columns::finish() {
  for (auto& a : arrays) {
    a.push_back('}');
  }
  return std::move(arrays);
}

}  // namespace weir::store::pg

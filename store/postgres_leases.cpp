// postgres_leases: lease rows and the membership record in PostgreSQL (see the header).
#include "store/postgres_leases.hpp"

#include <algorithm>
#include <charconv>

#include "store/pg_support.hpp"

namespace weir::store {

using pg::exec;
using pg::result_ptr;
using pg::trim;

namespace {

std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    auto nl = s.find('\n');
    auto part = s.substr(0, nl);
    if (!part.empty()) {
      out.emplace_back(part);
    }
    if (nl == std::string_view::npos) {
      break;
    }
    s.remove_prefix(nl + 1);
  }
  return out;
}

std::string join_lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) {
      out.push_back('\n');
    }
    out += s;
  }
  return out;
}

core::error unavailable(const std::string& what, const result_ptr& r) {
  return core::make_error("store.unavailable",
                          "PostgreSQL membership: " + what + ": " + trim(r.error()));
}

/// The membership on record over `c`.
core::result<std::pair<std::uint64_t, std::vector<std::string>>> read_record(PGconn* c) {
  auto r = exec(c, "SELECT epoch, array_to_string(owners, E'\\n') FROM weir_membership");
  if (!r.ok()) {
    return unavailable("reading the owners", r);
  }
  std::pair<std::uint64_t, std::vector<std::string>> out{0, {}};
  if (PQntuples(r.r) == 1) {
    out.first = std::stoull(PQgetvalue(r.r, 0, 0));
    out.second = split_lines(PQgetvalue(r.r, 0, 1));
    std::sort(out.second.begin(), out.second.end());
  }
  return out;
}

}  // namespace

struct postgres_leases::impl {
  options opts;
  PGconn* conn = nullptr;

  ~impl() { close(); }
  void close() {
    if (conn) {
      PQfinish(conn);
      conn = nullptr;
    }
  }
  core::result<PGconn*> connection() {
    // A session the server ended while it sat idle (a restart) is found here and replaced
    // before a round uses it.
    if (conn && pg::heal(conn)) {
      return conn;
    }
    close();
    // Bounded waits: a member frozen inside a change of owners (its session alive, its
    // transaction open) must not hold the record's row, and every other member's round, for
    // long; nor may a round outlast a lease.
    auto c = pg::connect(
        opts.url,
        {{"application_name", "weir membership:" + opts.member},
         {"options", pg::url_options(opts.url) + " -c lock_timeout=2000 -c statement_timeout=5000"
                                                 " -c idle_in_transaction_session_timeout=5000"}});
    if (!c) {
      return core::make_error("store.unavailable", c.error().message);
    }
    conn = *c;
    return conn;
  }

  /// Records `owners` as the membership after `seen`, unless another member changed it first
  /// (then the next round reads theirs). The logical message goes into the change stream in
  /// the same transaction, so the reader switches owners exactly at this commit.
  core::result<void> record(PGconn* c, std::uint64_t seen, const std::vector<std::string>& owners) {
    auto next = std::to_string(seen + 1);
    auto list = join_lines(owners);
    if (auto r = exec(c, "BEGIN"); !r.ok()) {
      return unavailable("starting a membership change", r);
    }
    // Exclusive against the fence of every write transaction (shared): the change waits for the
    // commits in progress. Should they hold it longer than lock_timeout, this round records
    // nothing (the lease itself was renewed); the next one tries again.
    auto lock_sql = "SELECT pg_advisory_xact_lock(" + std::to_string(fence_lock) + ")";
    if (auto l = exec(c, lock_sql.c_str()); !l.ok()) {
      const char* state = PQresultErrorField(l.r, PG_DIAG_SQLSTATE);
      exec(c, "ROLLBACK");
      if (state && std::string_view{state} == "55P03") {
        return {};
      }
      return unavailable("waiting for commits in progress", l);
    }
    auto r = exec(c,
                  "INSERT INTO weir_membership AS m (singleton, epoch, owners, changed_at) "
                  "VALUES (true, $1::bigint, string_to_array($2, E'\\n'), now()) "
                  "ON CONFLICT (singleton) DO UPDATE SET epoch = excluded.epoch, "
                  "owners = excluded.owners, changed_at = now() "
                  "WHERE m.epoch = $1::bigint - 1 RETURNING epoch",
                  {next, list});
    if (!r.ok() || PQntuples(r.r) != 1) {
      exec(c, "ROLLBACK");
      return r.ok() ? core::result<void>{} : core::result<void>{unavailable("changing owners", r)};
    }
    auto m = exec(c, "SELECT pg_logical_emit_message(true, $1, $2)",
                  {membership_message_prefix, next + "\n" + list});
    if (!m.ok()) {
      exec(c, "ROLLBACK");
      return unavailable("announcing the owners", m);
    }
    if (auto done = exec(c, "COMMIT"); !done.ok()) {
      return unavailable("committing the owners", done);
    }
    return {};
  }
};

postgres_leases::postgres_leases(options opts) : impl_(std::make_unique<impl>()) {
  impl_->opts = std::move(opts);
}

postgres_leases::~postgres_leases() = default;

core::result<membership_round> postgres_leases::renew(bool draining, bool may_record) {
  auto c = impl_->connection();
  if (!c) {
    return std::move(c).error();
  }
  const auto& o = impl_->opts;
  auto fail = [this](const std::string& what, const result_ptr& r) {
    auto e = unavailable(what, r);
    impl_->close();  // a broken session is opened again next round
    return e;
  };
  auto up =
      exec(*c,
           "INSERT INTO weir_members (member, peer, http, draining, lease_until) "
           "VALUES ($1, $2, $3, $4::boolean, now() + $5::bigint * interval '1 millisecond') "
           "ON CONFLICT (member) DO UPDATE SET peer = excluded.peer, http = excluded.http, "
           "draining = excluded.draining, lease_until = excluded.lease_until",
           {o.member, o.peer, o.http, draining ? "true" : "false", std::to_string(o.lease_ms)});
  if (!up.ok()) {
    return fail("renewing the lease", up);
  }
  // Rows of members long gone are forgotten (an hour after their lease ended), so a cluster
  // that scaled up and down does not list its past forever.
  exec(*c, "DELETE FROM weir_members WHERE lease_until < now() - interval '1 hour'");
  auto rows = exec(*c,
                   "SELECT member, peer, http, draining, lease_until > now(), "
                   "(extract(epoch FROM lease_until - now()) * 1000)::bigint "
                   "FROM weir_members ORDER BY member COLLATE \"C\"");
  if (!rows.ok()) {
    return fail("reading the leases", rows);
  }
  membership_round out;
  std::vector<std::string> wanted;
  for (int i = 0; i < PQntuples(rows.r); ++i) {
    member_lease l;
    l.id = PQgetvalue(rows.r, i, 0);
    l.peer = PQgetvalue(rows.r, i, 1);
    l.http = PQgetvalue(rows.r, i, 2);
    l.draining = PQgetvalue(rows.r, i, 3)[0] == 't';
    l.live = PQgetvalue(rows.r, i, 4)[0] == 't';
    l.expires_in_ms = std::stoll(PQgetvalue(rows.r, i, 5));
    if (l.live && !l.draining) {
      wanted.push_back(l.id);
    }
    out.leases.push_back(std::move(l));
  }
  auto take_record = [&]() -> core::result<void> {
    auto rec = read_record(*c);
    if (!rec) {
      impl_->close();
      return std::move(rec).error();
    }
    out.epoch = rec->first;
    out.owners = std::move(rec->second);
    return {};
  };
  if (auto r = take_record(); !r) {
    return std::move(r).error();
  }
  // Never no owners at all: while every member drains, the last owners stay on record.
  if (may_record && !wanted.empty() && wanted != out.owners) {
    if (auto r = impl_->record(*c, out.epoch, wanted); !r) {
      impl_->close();
      return std::move(r).error();
    }
    if (auto r = take_record(); !r) {
      return std::move(r).error();
    }
  }
  return out;
}

void postgres_leases::leave() {
  auto c = impl_->connection();
  if (!c) {
    return;
  }
  exec(*c, "DELETE FROM weir_members WHERE member = $1", {impl_->opts.member});
  // One more round without this member's lease, so the owners on record drop it now rather
  // than when another member's next round notices.
  auto rec = read_record(*c);
  if (!rec ||
      std::find(rec->second.begin(), rec->second.end(), impl_->opts.member) == rec->second.end()) {
    return;
  }
  auto rows = exec(*c,
                   "SELECT member FROM weir_members WHERE lease_until > now() AND NOT draining "
                   "ORDER BY member COLLATE \"C\"");
  if (!rows.ok() || PQntuples(rows.r) == 0) {
    return;
  }
  std::vector<std::string> wanted;
  for (int i = 0; i < PQntuples(rows.r); ++i) {
    wanted.emplace_back(PQgetvalue(rows.r, i, 0));
  }
  (void)impl_->record(*c, rec->first, wanted);
}

std::optional<std::pair<std::uint64_t, std::vector<std::string>>> postgres_leases::parse_message(
    std::string_view content) {
  auto nl = content.find('\n');
  auto head = content.substr(0, nl);
  std::uint64_t epoch = 0;
  auto [p, ec] = std::from_chars(head.data(), head.data() + head.size(), epoch);
  if (ec != std::errc{} || p != head.data() + head.size() || epoch == 0) {
    return std::nullopt;
  }
  auto owners = nl == std::string_view::npos ? std::vector<std::string>{}
                                             : split_lines(content.substr(nl + 1));
  std::sort(owners.begin(), owners.end());
  return std::pair{epoch, std::move(owners)};
}

core::result<std::pair<std::uint64_t, std::vector<std::string>>> postgres_leases::read_owners(
    PGconn* c) {
  return read_record(c);
}

}  // namespace weir::store

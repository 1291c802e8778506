// Change capture from PostgreSQL's logical replication (see postgres_change_reader.hpp).
#include "store/postgres_change_reader.hpp"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "log/log.hpp"
#include "store/captured_rows.hpp"
#include "store/pg_support.hpp"
#include "store/postgres_leases.hpp"

namespace weir::store {
namespace {

using clock_type = std::chrono::steady_clock;
using pg::exec;
using pg::result_ptr;
using pg::trim;

constexpr const char* slot_name = "weir_changes";
constexpr const char* publication_name = "weir_changes";
/// The session advisory lock whose holder reads the stream (next to the migrations' lock).
constexpr const char* reader_lock = "7316575811235112794";
/// Transactions handed to the sink and not yet applied, and the row keys they hold together;
/// at either bound reading pauses, and PostgreSQL keeps the rest in the slot. One transaction
/// holds at most captured_rows::bounds::total keys, so two of the largest fit.
constexpr std::size_t max_in_flight = 1024;
constexpr std::size_t max_in_flight_keys = 200000;
/// Prefix of Weir's application_name on the replication connection: how members find the
/// reader's name in pg_stat_replication.
constexpr std::string_view app_prefix = "weir:";

std::string lsn_text(std::uint64_t lsn) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%X/%X", static_cast<unsigned>(lsn >> 32),
                static_cast<unsigned>(lsn & 0xffffffffu));
  return buf;
}

/// Microseconds since 2000-01-01, the replication protocol's clock.
std::int64_t pg_now() {
  constexpr std::int64_t epoch_offset_s = 946684800;  // 2000-01-01 in Unix time
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  return us - epoch_offset_s * 1'000'000;
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    out.push_back(static_cast<char>((v >> (i * 8)) & 0xff));
  }
}

/// Big-endian reads over one message; any read past the end marks it malformed.
struct cursor {
  const unsigned char* p;
  const unsigned char* end;
  bool ok = true;

  cursor(const char* data, std::size_t n)
      : p(reinterpret_cast<const unsigned char*>(data)), end(p + n) {}
  bool need(std::size_t n) {
    if (!ok || static_cast<std::size_t>(end - p) < n) {
      ok = false;
      return false;
    }
    return true;
  }
  std::uint64_t uint(std::size_t n) {
    if (!need(n)) {
      return 0;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
      v = (v << 8) | *p++;
    }
    return v;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(uint(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(uint(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(uint(4)); }
  std::uint64_t u64() { return uint(8); }
  /// A NUL-terminated string.
  std::string_view str() {
    auto* z = std::find(p, end, '\0');
    if (!ok || z == end) {
      ok = false;
      return {};
    }
    std::string_view s{reinterpret_cast<const char*>(p), static_cast<std::size_t>(z - p)};
    p = z + 1;
    return s;
  }
  std::string_view bytes(std::size_t n) {
    if (!need(n)) {
      return {};
    }
    std::string_view s{reinterpret_cast<const char*>(p), n};
    p += n;
    return s;
  }
};

/// Where weir_records' key columns sit in its tuples (from pgoutput's Relation message).
struct relation {
  bool records = false;
  int space = -1, object = -1, dataset = -1, id = -1;
};

/// Transactions handed to the sink, in commit order; shared with the sink's callbacks, which
/// may run after a reading session ended (their generation then no longer counts).
struct in_flight {
  std::mutex mu;
  std::condition_variable cv;
  std::uint64_t generation = 0;
  struct entry {
    std::uint64_t end_lsn = 0;
    bool applied = false;
    bool failed = false;   // an owner did not take it: the session ends and reads it again
    std::size_t keys = 0;  // row keys it holds until applied
  };
  std::deque<entry> entries;
  std::size_t held_keys = 0;     // the entries' keys
  std::uint64_t next_index = 0;  // index of entries.front() since the session began
};

}  // namespace

struct postgres_change_reader::impl {
  options opts;
  capture_sink sink;
  std::atomic<bool> stopping{false};
  std::shared_ptr<in_flight> flight = std::make_shared<in_flight>();
  mutable std::mutex status_mu;
  capture_status st;
  std::mutex wake_mu;
  std::condition_variable wake;
  std::thread thread;

  // Reading state (the thread's own).
  std::map<std::uint32_t, relation> relations;
  bool in_txn = false;
  bool own_txn = false;
  // The owners in force (elastic membership): the record's at session start, then each
  // membership change the stream carries, in commit order.
  std::shared_ptr<const std::vector<std::string>> owners;
  std::uint64_t owners_epoch = 0;
  std::uint32_t txn_xid = 0;
  PGconn* session_conn = nullptr;  // the lock connection of the session that reads
  bool truncated = false;          // the transaction being read truncated weir_records
  captured_rows rows;  // the transaction being read (bounded: a huge one becomes whole datasets)
  std::uint64_t received = 0;    // the last WAL position received
  std::uint64_t server_end = 0;  // the server's WAL end as it last reported it
  std::uint64_t confirmed = 0;   // what was confirmed to the server
  std::uint64_t idle_end = 0;    // a keepalive's position, when nothing was in flight
  clock_type::time_point last_status{};
  bool status_due = false;

  impl(options o, capture_sink s) : opts(std::move(o)), sink(std::move(s)) {
    st.enabled = true;
    thread = std::thread{[this] { run(); }};
  }

  void stop() {
    stopping = true;
    wake.notify_all();
    flight->cv.notify_all();
    if (thread.joinable()) {
      thread.join();
    }
  }

  /// Sleeps up to `d`, or less when stop() is called.
  void pause(std::chrono::milliseconds d) {
    std::unique_lock lock{wake_mu};
    wake.wait_for(lock, d, [this] { return stopping.load(); });
  }

  void set_status(bool reading, std::string reader, std::string error) {
    std::lock_guard lock{status_mu};
    st.reading = reading;
    st.reader = std::move(reader);
    st.error = std::move(error);
    if (!reading) {
      st.lag_bytes = 0;
    }
  }

  void run() {
    // Sessions that keep failing soon after they start (the database restarting, an owner that
    // cannot take a transaction) retry after 1, 2, 4, then 8 s, not in a tight loop.
    int failing = 0;
    while (!stopping) {
      auto began = clock_type::now();
      auto why = lead_and_read();
      if (stopping) {
        break;
      }
      failing = why.empty() || clock_type::now() - began > std::chrono::seconds{30}
                    ? 0
                    : std::min(failing + 1, 4);
      auto wait = std::chrono::milliseconds{1000 << std::max(0, failing - 1)};
      if (!why.empty()) {
        // Shown in /cluster/health until a session reads again (or finds another member
        // reading): a stalled capture must not look healthy while its lag grows.
        set_status(false, "", why);
        log::warn("change capture paused", {{"reason", why}, {"retryInMs", wait.count()}});
      }
      pause(wait);
    }
    set_status(false, "", "stopped");
  }

  /// Who reads now, as the replication connection's application_name says ("" if nobody).
  static std::string current_reader(PGconn* c) {
    auto r = exec(c,
                  "SELECT coalesce(r.application_name, '') FROM pg_replication_slots s "
                  "LEFT JOIN pg_stat_replication r ON r.pid = s.active_pid "
                  "WHERE s.slot_name = $1",
                  {slot_name});
    if (!r.ok() || PQntuples(r.r) != 1) {
      return {};
    }
    std::string_view name = PQgetvalue(r.r, 0, 0);
    return name.starts_with(app_prefix) ? std::string{name.substr(app_prefix.size())}
                                        : std::string{name};
  }

  /// One session: wins the lock (or waits for it while another member reads), checks the
  /// server, opens the stream and reads it until it breaks or stop() is called. Returns why it
  /// ended ("" when stopped).
  std::string lead_and_read() {
    // The server side of both sessions must notice a member that vanished (the lock and the
    // slot are held by them): TCP keepalives and a user timeout on the server's sockets too,
    // not just ours. Statements on the lock connection (the slot's creation waits for running
    // transactions) are bounded, so stop() never waits on them for long.
    const std::string server_side =
        pg::url_options(opts.url) +
        " -c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3 "
        "-c tcp_user_timeout=30000";
    auto lock_conn =
        pg::connect(opts.url, {{"application_name", "weir capture lock"},
                               {"options", server_side + " -c statement_timeout=10000"}});
    if (!lock_conn) {
      set_status(false, "", lock_conn.error().message);
      return lock_conn.error().message;
    }
    PGconn* lc = *lock_conn;
    struct closer {
      PGconn*& c;
      ~closer() {
        if (c) {
          PQfinish(c);
        }
      }
    } close_lock{lc};
    for (;;) {
      if (stopping) {
        return {};
      }
      auto r = exec(lc, "SELECT pg_try_advisory_lock($1::bigint)", {reader_lock});
      if (!r.ok()) {
        return "cannot take the reader lock: " + trim(r.error());
      }
      if (PQgetvalue(r.r, 0, 0)[0] == 't') {
        break;
      }
      set_status(false, current_reader(lc), "");
      pause(std::chrono::milliseconds{1000});
    }
    if (auto why = check_server(lc); !why.empty()) {
      set_status(false, "", why);
      pause(std::chrono::milliseconds{4000});  // a configuration problem: retry, but slowly
      return why;
    }
    auto repl_conn =
        pg::connect(opts.url, {{"replication", "database"},
                               {"application_name", std::string{app_prefix} + opts.member},
                               {"options", server_side}});
    if (!repl_conn) {
      set_status(false, "", repl_conn.error().message);
      return repl_conn.error().message;
    }
    PGconn* rc = *repl_conn;
    closer close_repl{rc};
    std::string start = std::string{"START_REPLICATION SLOT "} + slot_name +
                        " LOGICAL 0/0 (proto_version '1', publication_names '" + publication_name +
                        "', messages 'true')";
    {
      result_ptr r{PQexec(rc, start.c_str())};
      if (r.status() != PGRES_COPY_BOTH) {
        auto why = "cannot start the replication stream: " + trim(r.error());
        set_status(false, "", why);
        return why;
      }
    }
    begin_session();
    // The owners on record now are at least as new as any transaction the stream replays
    // (routing an older transaction by newer owners only costs a re-read; the reverse could
    // miss a moved unit), and each membership change after this comes in the stream.
    auto rec = postgres_leases::read_owners(lc);
    if (!rec) {
      set_status(false, "", rec.error().message);
      return rec.error().message;
    }
    owners_epoch = rec->first;
    owners = rec->first == 0
                 ? nullptr
                 : std::make_shared<const std::vector<std::string>>(std::move(rec->second));
    session_conn = lc;
    set_status(true, opts.member, "");
    auto why = read_stream(rc, lc);
    session_conn = nullptr;
    return why;
  }

  /// What the stream needs from the server: wal_level = logical and the slot (created here,
  /// which takes the REPLICATION attribute). "" when all is there.
  std::string check_server(PGconn* c) {
    auto level = exec(c, "SHOW wal_level");
    if (!level.ok()) {
      return "cannot read wal_level: " + trim(level.error());
    }
    if (std::string_view{PQgetvalue(level.r, 0, 0)} != "logical") {
      return std::string{"the server's wal_level is '"} + PQgetvalue(level.r, 0, 0) +
             "': change capture needs wal_level = logical (postgresql.conf, then a restart), "
             "or set store.postgres.changeCapture: false";
    }
    auto slot = exec(c, "SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", {slot_name});
    if (!slot.ok()) {
      return "cannot look up the replication slot: " + trim(slot.error());
    }
    if (PQntuples(slot.r) == 0) {
      auto made = exec(c, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", {slot_name});
      if (!made.ok()) {
        return "cannot create the replication slot '" + std::string{slot_name} +
               "' (the role needs the REPLICATION attribute): " + trim(made.error());
      }
      log::info("change capture: created the replication slot", {{"slot", slot_name}});
    }
    return {};
  }

  void begin_session() {
    relations.clear();
    in_txn = false;
    rows.clear();
    received = server_end = confirmed = idle_end = 0;
    std::lock_guard lock{flight->mu};
    ++flight->generation;
    flight->entries.clear();
    flight->held_keys = 0;
    flight->next_index = 0;
  }

  std::string read_stream(PGconn* rc, PGconn* lc) {
    auto last_lock_check = clock_type::now();
    for (;;) {
      if (stopping) {
        advance();
        send_status(rc);  // what was applied is confirmed before the stream ends
        return {};
      }
      if (!advance()) {
        send_status(rc);
        return "an owner did not take a transaction's rows; reading again from " +
               lsn_text(confirmed);
      }
      if (status_due || clock_type::now() - last_status >= std::chrono::seconds{1}) {
        if (!send_status(rc)) {
          return "cannot report the position: " + trim(PQerrorMessage(rc));
        }
      }
      if (clock_type::now() - last_lock_check >= std::chrono::seconds{5}) {
        // The lock's session must still be alive: if it broke, another member may already be
        // waiting for the slot that this session holds.
        last_lock_check = clock_type::now();
        if (auto r = exec(lc, "SELECT 1"); !r.ok()) {
          return "lost the reader lock's connection: " + trim(r.error());
        }
      }
      bool full = false;
      {
        std::lock_guard lock{flight->mu};
        full = flight->entries.size() >= max_in_flight || flight->held_keys >= max_in_flight_keys;
      }
      if (full) {
        std::unique_lock lock{flight->mu};
        flight->cv.wait_for(lock, std::chrono::milliseconds{200});
        continue;
      }
      char* buf = nullptr;
      int n = PQgetCopyData(rc, &buf, 1);
      if (n > 0) {
        auto why = handle(buf, static_cast<std::size_t>(n));
        PQfreemem(buf);
        if (!why.empty()) {
          return why;
        }
        continue;
      }
      if (n == -1) {
        result_ptr r{PQgetResult(rc)};
        return "the server ended the replication stream: " + trim(r.error());
      }
      if (n == -2) {
        return "the replication connection failed: " + trim(PQerrorMessage(rc));
      }
      pollfd pfd{PQsocket(rc), POLLIN, 0};
      ::poll(&pfd, 1, 100);
      if (!PQconsumeInput(rc)) {
        return "the replication connection failed: " + trim(PQerrorMessage(rc));
      }
    }
  }

  /// One CopyData message from the server.
  std::string handle(const char* data, std::size_t n) {
    cursor c{data, n};
    auto kind = c.u8();
    if (kind == 'k') {
      auto end = c.u64();
      c.u64();  // the server's clock
      bool reply = c.u8() != 0;
      server_end = std::max(server_end, end);
      if (!in_txn) {
        idle_end = std::max(idle_end, end);
      }
      status_due = status_due || reply;
      return c.ok ? std::string{} : "a malformed keepalive from the server";
    }
    if (kind != 'w') {
      return {};  // nothing else is sent in COPY BOTH mode today
    }
    auto start = c.u64();
    server_end = std::max(server_end, c.u64());
    c.u64();  // send time
    received = std::max(received, start);
    if (!c.ok) {
      return "a malformed XLogData message";
    }
    return decode(c);
  }

  /// One pgoutput message.
  std::string decode(cursor& c) {
    auto tag = c.u8();
    switch (tag) {
      case 'B':
        c.u64();  // final LSN
        c.u64();  // commit time
        txn_xid = c.u32();
        in_txn = true;
        own_txn = false;
        truncated = false;
        rows.clear();
        break;
      case 'M': {
        auto flags = c.u8();
        c.u64();  // LSN
        auto prefix = c.str();
        auto len = c.u32();
        auto content = c.bytes(len);
        if ((flags & 1) && in_txn && prefix == "weir") {
          own_txn = true;  // its content names the member that wrote it
        } else if ((flags & 1) && prefix == membership_message_prefix) {
          if (auto m = postgres_leases::parse_message(content); m && m->first > owners_epoch) {
            owners_epoch = m->first;
            owners = std::make_shared<const std::vector<std::string>>(std::move(m->second));
          }
        }
        break;
      }
      case 'R': {
        auto id = c.u32();
        c.str();  // namespace
        auto name = c.str();
        c.u8();  // replica identity
        auto cols = c.u16();
        relation rel;
        rel.records = name == "weir_records";
        for (int i = 0; i < cols && c.ok; ++i) {
          c.u8();  // flags
          auto col = c.str();
          c.u32();  // type
          c.u32();  // typmod
          if (col == "space") {
            rel.space = i;
          } else if (col == "object") {
            rel.object = i;
          } else if (col == "dataset") {
            rel.dataset = i;
          } else if (col == "id") {
            rel.id = i;
          }
        }
        relations[id] = rel;
        break;
      }
      case 'I':
      case 'U':
      case 'D': {
        auto rel = relations.find(c.u32());
        // Each tuple of the change (an update that changed the key has the old one too) names
        // a row the owner must read again.
        while (c.ok && c.p < c.end) {
          auto which = c.u8();
          if (which != 'N' && which != 'K' && which != 'O') {
            return "an unexpected tuple marker in a change";
          }
          auto row = tuple(c, rel == relations.end() ? nullptr : &rel->second);
          if (row && in_txn && !own_txn) {
            rows.add(std::move(*row));
          }
        }
        break;
      }
      case 'T': {
        auto count = c.u32();
        c.u8();  // options
        for (std::uint32_t i = 0; i < count && c.ok; ++i) {
          auto rel = relations.find(c.u32());
          if (rel != relations.end() && rel->second.records && in_txn && !own_txn) {
            // A TRUNCATE names no rows: every member reads every unit it holds again whole,
            // which turns what the units held into removals.
            log::warn("change capture: weir_records was truncated; every held unit is read again");
            rows.add_everything();
            truncated = true;
          }
        }
        break;
      }
      case 'C': {
        c.u8();   // flags
        c.u64();  // commit LSN
        auto end = c.u64();
        c.u64();  // commit time
        if (!c.ok) {
          break;
        }
        if (auto why = committed(end); !why.empty()) {
          return why;
        }
        in_txn = false;
        break;
      }
      default:
        break;  // Type, Origin: nothing to do
    }
    return c.ok ? std::string{} : "a malformed pgoutput message";
  }

  /// The key of a weir_records tuple; nullopt for other tables or a column that is not text.
  std::optional<captured_row> tuple(cursor& c, const relation* rel) {
    auto cols = c.u16();
    captured_row row;
    int found = 0;
    for (int i = 0; i < cols && c.ok; ++i) {
      auto kind = c.u8();
      if (kind != 't' && kind != 'b') {
        continue;  // null, or an unchanged TOASTed value (never a key column)
      }
      auto value = c.bytes(c.u32());
      if (!rel || !rel->records) {
        continue;
      }
      std::string* into = i == rel->space     ? &row.space
                          : i == rel->object  ? &row.object
                          : i == rel->dataset ? &row.dataset
                          : i == rel->id      ? &row.id
                                              : nullptr;
      if (into) {
        into->assign(value);
        ++found;
      }
    }
    if (!rel || !rel->records || found != 4) {
      return std::nullopt;
    }
    return row;
  }

  /// Waits until transaction `xid` is visible to new snapshots. Its commit reaches the WAL, and
  /// so this stream, a moment before other sessions see it: an owner reading its rows at once
  /// could read them as they were before. False when it does not become visible within 5 s.
  bool wait_visible(std::uint32_t xid) {
    // The 64-bit transaction id from the 32-bit one of the stream: the one nearest to the
    // snapshot's xmax (within 2^31 either way). A transaction committed in the WAL but not yet
    // visible may lie above xmax while an older one is still open, so neither "the current
    // epoch" nor "the epoch before" would do.
    const char* sql =
        "SELECT txid_visible_in_snapshot(x + ((((($1::bigint - (x & 4294967295)) % 4294967296) "
        "+ 4294967296 + 2147483648) % 4294967296) - 2147483648), s) "
        "FROM (SELECT txid_current_snapshot() AS s) q, "
        "LATERAL (SELECT txid_snapshot_xmax(q.s) AS x) m";
    auto deadline = clock_type::now() + std::chrono::seconds{5};
    while (clock_type::now() < deadline && !stopping) {
      auto r = exec(session_conn, sql, {std::to_string(xid)});
      if (!r.ok()) {
        return false;
      }
      if (PQgetvalue(r.r, 0, 0)[0] == 't') {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{1});
    }
    return false;
  }

  /// A transaction ended at `end`: its rows go to the sink (others' only), once it is visible,
  /// and its position is confirmed once they are applied — in order, after every earlier one.
  std::string committed(std::uint64_t end) {
    received = std::max(received, end);
    if (own_txn || rows.empty()) {
      std::lock_guard lock{flight->mu};
      flight->entries.push_back({end, true});
      rows.clear();
      return {};
    }
    if (!wait_visible(txn_xid)) {
      return "transaction " + std::to_string(txn_xid) + " did not become visible";
    }
    // Each row once, whatever the transaction did to it; or, past the bounds, whole datasets.
    auto keys = rows.keys();
    auto txn = rows.take();
    if ((txn.everything && !truncated) || !txn.whole.empty()) {
      log::info(
          "change capture: a transaction changed more rows than the reader keeps the keys "
          "of; their units are read again whole",
          {{"datasets", txn.whole.size()}, {"everyHeldUnit", txn.everything}});
    }
    txn.owners = owners;
    std::uint64_t generation = 0, index = 0;
    {
      std::lock_guard lock{flight->mu};
      generation = flight->generation;
      index = flight->next_index + flight->entries.size();
      flight->entries.push_back({end, false, false, keys});
      flight->held_keys += keys;
    }
    auto applied = [f = flight, generation, index](bool taken) {
      std::lock_guard lock{f->mu};
      if (f->generation != generation || index < f->next_index) {
        return;  // a session that ended: the next one reads it again
      }
      auto& e = f->entries[index - f->next_index];
      (taken ? e.applied : e.failed) = true;
      f->cv.notify_all();
    };
    {
      std::lock_guard lock{status_mu};
      ++st.transactions;
      st.whole_datasets += txn.whole.size();
      st.whole_nodes += txn.everything ? 1 : 0;
    }
    sink(std::move(txn), std::move(applied));
    return {};
  }

  /// Moves the confirmed position past every applied transaction at the front. False when a
  /// transaction was not taken: the session must end, so that it is read again.
  bool advance() {
    std::uint64_t to = confirmed;
    bool empty = false;
    bool failed = false;
    {
      std::lock_guard lock{flight->mu};
      while (!flight->entries.empty() && flight->entries.front().applied) {
        to = std::max(to, flight->entries.front().end_lsn);
        flight->held_keys -= flight->entries.front().keys;
        flight->entries.pop_front();
        ++flight->next_index;
      }
      empty = flight->entries.empty();
      failed = std::any_of(flight->entries.begin(), flight->entries.end(),
                           [](const auto& e) { return e.failed; });
    }
    // With nothing in flight, a keepalive's position is safe to confirm: the server sent every
    // transaction that committed before it.
    if (empty && !in_txn) {
      to = std::max(to, idle_end);
    }
    if (to > confirmed) {
      confirmed = to;
      status_due = true;
    }
    std::lock_guard lock{status_mu};
    st.applied_lsn = lsn_text(confirmed);
    st.lag_bytes = server_end > confirmed ? server_end - confirmed : 0;
    return !failed;
  }

  /// A Standby Status Update: received, and flushed = applied = confirmed.
  bool send_status(PGconn* rc) {
    std::string m;
    m.push_back('r');
    put_u64(m, std::max(received, confirmed));
    put_u64(m, confirmed);
    put_u64(m, confirmed);
    put_u64(m, static_cast<std::uint64_t>(pg_now()));
    m.push_back(0);
    last_status = clock_type::now();
    status_due = false;
    // The connection blocks: PQflush returns once the message is sent (0) or failed (-1).
    return PQputCopyData(rc, m.data(), static_cast<int>(m.size())) == 1 && PQflush(rc) == 0;
  }
};

postgres_change_reader::postgres_change_reader(options opts, capture_sink sink)
    : impl_(std::make_unique<impl>(std::move(opts), std::move(sink))) {}

postgres_change_reader::~postgres_change_reader() {
  stop();
}

void postgres_change_reader::stop() {
  impl_->stop();
}

capture_status postgres_change_reader::status() const {
  std::lock_guard lock{impl_->status_mu};
  return impl_->st;
}

}  // namespace weir::store

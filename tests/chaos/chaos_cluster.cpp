// The harness's cluster and its faults (see chaos_cluster.hpp).
#include "chaos_cluster.hpp"

#include <signal.h>
#include <sys/types.h>

#include <fstream>
#include <thread>

#include <libpq-fe.h>

namespace weir::chaos {

using namespace std::chrono_literals;

namespace {

constexpr const char* peer_token = "chaos-peer-token-0123456789abcdef0123456789";

/// Runs `sql` on a fresh session of the harness's own; false when the database refused or was
/// unreachable. `rows` gets the first column of each row.
bool run_sql(const std::string& url, const std::string& sql,
             std::vector<std::string>* rows = nullptr) {
  PGconn* c = PQconnectdb((url + " connect_timeout=5").c_str());
  bool ok = PQstatus(c) == CONNECTION_OK;
  if (ok) {
    PGresult* r = PQexec(c, sql.c_str());
    ok = PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK;
    if (ok && rows && PQresultStatus(r) == PGRES_TUPLES_OK) {
      for (int i = 0; i < PQntuples(r); ++i) {
        rows->emplace_back(PQgetvalue(r, i, 0));
      }
    }
    PQclear(r);
  }
  PQfinish(c);
  return ok;
}

}  // namespace

chaos_cluster::chaos_cluster(int members) {
  if (!pg_.ok()) {
    error_ = "PostgreSQL did not start: " + pg_.error();
    return;
  }
  members_.resize(static_cast<std::size_t>(members));
  for (int i = 0; i < members; ++i) {
    auto& m = members_[i];
    m.http = test::free_port();
    m.grpc = test::free_port();
    m.peer = test::free_port();
    m.config = dir_.path() + "/" + id(i) + ".yaml";
    m.data = dir_.path() + "/" + id(i);
    write_config(i);
  }
  for (int i = 0; i < members; ++i) {
    if (!start(i)) {
      error_ = "member " + id(i) + " did not start: " + member_log_tail(members_[i]);
      return;
    }
  }
}

chaos_cluster::~chaos_cluster() {
  std::lock_guard lock{mu_};
  for (auto& m : members_) {
    if (m.proc && m.paused && m.proc->pid() > 0) {
      ::kill(m.proc->pid(), SIGCONT);
    }
    m.proc.reset();
  }
}

void chaos_cluster::write_config(int i) {
  auto& m = members_[i];
  std::ofstream f{m.config};
  f << "node:\n  http: \"127.0.0.1:" << m.http << "\"\n  grpc: \"127.0.0.1:" << m.grpc
    << "\"\n  peer: \"127.0.0.1:" << m.peer << "\"\ncluster:\n  nodeId: " << id(i)
    << "\n  advertise: { peer: \"127.0.0.1:" << m.peer << "\", http: \"127.0.0.1:" << m.http
    << "\" }\n  token: \"" << peer_token
    << "\"\n  heartbeatIntervalMs: 100\n  suspectAfterMs: 400\n  downAfterMs: 1000\n"
    << "  leaseMs: " << lease.count() << "\n  leaseRenewMs: 200\n"
    << "query:\n  observableShutdownTimeoutMs: 3000\n"
    << pg_.store_yaml() << test::default_queries_yaml();
}

bool chaos_cluster::serving(int i) const {
  std::lock_guard lock{mu_};
  const auto& m = members_[i];
  return m.proc && m.proc->pid() > 0 && !m.paused;
}

bool chaos_cluster::kill(int i) {
  std::lock_guard lock{mu_};
  auto& m = members_[i];
  if (!m.proc || m.proc->pid() <= 0) {
    return false;
  }
  if (m.paused) {
    ::kill(m.proc->pid(), SIGCONT);
    m.paused = false;
  }
  m.proc->kill();
  m.stopped_by_fault = true;
  return true;
}

bool chaos_cluster::pause(int i) {
  std::lock_guard lock{mu_};
  auto& m = members_[i];
  if (!m.proc || m.proc->pid() <= 0 || m.paused) {
    return false;
  }
  ::kill(m.proc->pid(), SIGSTOP);
  m.paused = true;
  return true;
}

bool chaos_cluster::resume(int i) {
  std::lock_guard lock{mu_};
  auto& m = members_[i];
  if (!m.proc || m.proc->pid() <= 0 || !m.paused) {
    return false;
  }
  ::kill(m.proc->pid(), SIGCONT);
  m.paused = false;
  return true;
}

bool chaos_cluster::terminate(int i) {
  std::unique_lock lock{mu_};
  auto& m = members_[i];
  if (!m.proc || m.proc->pid() <= 0 || m.paused) {
    return false;
  }
  m.stopped_by_fault = true;
  auto* p = m.proc.get();
  lock.unlock();  // a drain takes seconds; writers keep asking about the others meanwhile
  p->terminate(20s);
  return true;
}

bool chaos_cluster::start(int i) {
  std::unique_lock lock{mu_};
  auto& m = members_[i];
  if (m.proc && m.proc->running()) {
    return false;
  }
  lock.unlock();
  auto p = std::make_unique<test::weir_process>(
      std::vector<std::string>{"--config", m.config, "--data-dir", m.data});
  lock.lock();
  bool ok = p->started();
  m.proc = std::move(p);
  m.paused = false;
  m.stopped_by_fault = !ok;
  return ok;
}

bool chaos_cluster::pg_restart(bool immediate) {
  pg_.stop(immediate);
  return pg_.start();
}

int chaos_cluster::pg_terminate_sessions() {
  std::vector<std::string> rows;
  run_sql(pg_url(),
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'weir' AND "
          "pid <> pg_backend_pid() AND backend_type IN ('client backend', 'walsender')",
          &rows);
  return static_cast<int>(rows.size());
}

bool chaos_cluster::pg_terminate_capture() {
  std::vector<std::string> rows;
  run_sql(pg_url(),
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
          "WHERE slot_name = 'weir_changes' AND active_pid IS NOT NULL",
          &rows);
  return !rows.empty();
}

void chaos_cluster::heal() {
  if (!run_sql(pg_url(), "SELECT 1")) {
    pg_.start();
  }
  for (int i = 0; i < size(); ++i) {
    resume(i);
    bool down = false;
    {
      std::lock_guard lock{mu_};
      auto& m = members_[i];
      down = !m.proc || !m.proc->running();
    }
    if (down) {
      start(i);
    }
  }
}

std::optional<std::int64_t> chaos_cluster::wait_ready(std::chrono::milliseconds bound) {
  auto t0 = std::chrono::steady_clock::now();
  auto deadline = t0 + bound;
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (int i = 0; i < size() && all; ++i) {
      try {
        all = test::http(http_port(i), "GET", "/readyz").status == 200;
      } catch (const std::exception&) {
        all = false;
      }
    }
    if (all) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - t0)
          .count();
    }
    std::this_thread::sleep_for(50ms);
  }
  return std::nullopt;
}

std::vector<std::string> chaos_cluster::unexpected_exits() {
  std::vector<std::string> out;
  std::lock_guard lock{mu_};
  for (std::size_t i = 0; i < members_.size(); ++i) {
    auto& m = members_[i];
    if (m.proc && !m.stopped_by_fault && !m.paused && !m.proc->running()) {
      out.push_back("member " + id(static_cast<int>(i)) + " exited on its own:\n" +
                    member_log_tail(m));
      m.stopped_by_fault = true;  // reported once
    }
  }
  return out;
}

std::string chaos_cluster::member_log_tail(member& m) {
  if (!m.proc) {
    return "(not started)";
  }
  auto log = m.proc->log();
  return log.size() > 4000 ? log.substr(log.size() - 4000) : log;
}

}  // namespace weir::chaos

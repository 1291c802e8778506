// A real PostgreSQL for a test (see pg_instance.hpp).
#include "pg_instance.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "process_support.hpp"

namespace weir::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* pg_bin = "/usr/lib/postgresql/15/bin";
constexpr const char* pg_user = "weir-pg";

/// Runs argv (as uid/gid when `drop`), optionally capturing stdout+stderr; its exit status.
int run(const std::vector<std::string>& argv, bool drop, uid_t uid, gid_t gid,
        std::string* output) {
  // Everything the child needs is built before the fork: the test process has threads, and
  // only async-signal-safe calls are allowed between fork and exec.
  std::vector<char*> args;
  for (auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return -1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    if (drop && (setgid(gid) != 0 || setuid(uid) != 0)) {
      _exit(126);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) {
    out.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (output) {
    *output = std::move(out);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

pg_instance::pg_instance() : bin_(pg_bin) {
  if (geteuid() == 0) {
    auto* pw = getpwnam(pg_user);
    if (!pw) {
      error_ = std::string{"PostgreSQL refuses to run as root and there is no user '"} + pg_user +
               "': run scripts/setup";
      return;
    }
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
  }
  char tmpl[] = "/tmp/weir-pg-XXXXXX";
  if (!mkdtemp(tmpl)) {
    error_ = "mkdtemp failed";
    return;
  }
  dir_ = tmpl;
  if (geteuid() == 0 && chown(dir_.c_str(), uid_, gid_) != 0) {
    error_ = "chown of the PostgreSQL directory failed";
    return;
  }
  std::string out;
  if (!run_as_owner({bin_ + "/initdb", "-D", dir_ + "/data", "-U", "weir", "--auth=trust", "-E",
                     "UTF8", "--no-sync", "--no-instructions"},
                    &out)) {
    error_ = "initdb failed: " + out;
    return;
  }
  port_ = free_port();
  if (start_server() && run({bin_ + "/psql", "-h", "127.0.0.1", "-p", std::to_string(port_), "-U",
                             "weir", "-d", "postgres", "-qAt", "-c", "create database weir"},
                            false, 0, 0, &out) != 0) {
    error_ = "create database failed: " + out;
  }
}

bool pg_instance::start_server() {
  std::vector<std::string> argv{bin_ + "/postgres",
                                "-D",
                                dir_ + "/data",
                                "-p",
                                std::to_string(port_),
                                "-k",
                                dir_,
                                "-h",
                                "127.0.0.1",
                                "-c",
                                "wal_level=logical",
                                "-c",
                                "max_wal_senders=10",
                                "-c",
                                "max_replication_slots=10",
                                "-c",
                                "shared_buffers=32MB",
                                "-c",
                                "max_connections=200"};
  std::vector<char*> args;
  for (auto& a : argv) {
    args.push_back(a.data());
  }
  args.push_back(nullptr);
  auto log_path = dir_ + "/server.log";
  bool drop = geteuid() == 0;
  pid_ = fork();
  if (pid_ == 0) {
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    dup2(log, 1);
    dup2(log, 2);
    // The server must not hold the test's own sockets open, nor root's groups.
    close_range(3, ~0U, 0);
    if (drop && (setgroups(0, nullptr) != 0 || setgid(gid_) != 0 || setuid(uid_) != 0)) {
      _exit(126);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (run({bin_ + "/pg_isready", "-q", "-h", "127.0.0.1", "-p", std::to_string(port_)}, false, 0,
            0, nullptr) == 0) {
      return true;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = "postgres exited at start; see " + dir_ + "/server.log";
      return false;
    }
    std::this_thread::sleep_for(50ms);
  }
  error_ = "postgres did not accept connections within 30 s";
  return false;
}

pg_instance::~pg_instance() {
  stop_server();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

bool pg_instance::restart() {
  stop_server();
  return start_server();
}

void pg_instance::stop_server(bool immediate) {
  if (pid_ <= 0) {
    return;
  }
  // A fast shutdown waits for walsenders to send what is left, which a replication client that
  // stopped reading (a SIGSTOPped member) holds up until wal_sender_timeout: after 10 s it
  // becomes an immediate shutdown. A SIGKILL of the postmaster would leave its children behind
  // and the next start would fail, so it is the last resort.
  auto wait_exit = [this](std::chrono::milliseconds bound) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return true;
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  };
  kill(pid_, immediate ? SIGQUIT : SIGINT);
  if (wait_exit(10s)) {
    return;
  }
  kill(pid_, SIGQUIT);
  if (wait_exit(10s)) {
    return;
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string pg_instance::url() const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " user=weir dbname=weir";
}

std::string pg_instance::store_yaml() const {
  return "store: { backend: postgres, postgres: { url: \"" + url() + "\" } }\n";
}

std::string pg_instance::sql(const std::string& statement) const {
  std::string out;
  int rc = run({bin_ + "/psql", "-h", "127.0.0.1", "-p", std::to_string(port_), "-U", "weir", "-d",
                "weir", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", statement},
               false, 0, 0, &out);
  EXPECT_EQ(rc, 0) << statement << ": " << out;
  while (!out.empty() && out.back() == '\n') {
    out.pop_back();
  }
  return out;
}

bool pg_instance::run_as_owner(const std::vector<std::string>& argv, std::string* output) const {
  return run(argv, geteuid() == 0, uid_, gid_, output) == 0;
}

}  // namespace weir::test

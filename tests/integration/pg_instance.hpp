// weir::test::pg_instance — a real PostgreSQL 15 for a test: initdb in a temporary directory,
// the server on a free loopback port with wal_level=logical, a database `weir`, stopped and
// removed when the object goes. PostgreSQL refuses to run as root: when the tests run as root
// the server runs as the unprivileged user scripts/setup creates (`weir-pg`).
#pragma once

#include <sys/types.h>
#include <cstdint>
#include <string>

#include <vector>

namespace weir::test {

class pg_instance {
 public:
  /// Starts the server; check ok() (and error() for why not).
  pg_instance();
  ~pg_instance();
  pg_instance(const pg_instance&) = delete;
  pg_instance& operator=(const pg_instance&) = delete;

  bool ok() const { return pid_ > 0 && error_.empty(); }
  const std::string& error() const { return error_; }
  std::uint16_t port() const { return port_; }
  /// A libpq connection string for the `weir` database.
  std::string url() const;
  /// The `store:` section of a node that keeps its data here.
  std::string store_yaml() const;
  /// Stops the server (fast shutdown: connections are cut) and starts it again on the same port
  /// and data; true when it accepts connections again.
  bool restart();
  /// Stops the server until start(): the database is down. `immediate`: PostgreSQL's
  /// immediate shutdown (no checkpoint; crash recovery at the next start), else a fast one.
  void stop(bool immediate = false) { stop_server(immediate); }
  /// Starts a stopped server again on the same port and data; true when it accepts connections.
  bool start() { return start_server(); }
  /// Runs one SQL statement through psql and returns its unaligned, tuples-only output
  /// (fails the test when psql fails).
  std::string sql(const std::string& statement) const;

 private:
  bool start_server();
  void stop_server(bool immediate = false);
  bool run_as_owner(const std::vector<std::string>& argv, std::string* output = nullptr) const;
  std::string bin_, dir_, error_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

}  // namespace weir::test

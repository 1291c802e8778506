// weir::chaos::chaos_cluster — what the fault-injection harness runs and breaks: a real
// PostgreSQL (pg_instance) and N `weir serve` members with elastic membership on it, each on
// fixed loopback ports so that a member restarted after a fault comes back where it was. The
// faults themselves are here too (kill, pause, drain, database restarts, ended sessions); the
// nemesis (chaos_run) decides when. Thread-safe: writers and subscribers ask for ports while
// the nemesis changes members.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pg_instance.hpp"
#include "process_support.hpp"
#include "test_support.hpp"

namespace weir::chaos {

class chaos_cluster {
 public:
  /// Starts PostgreSQL and `members` members; check error() (empty when all started).
  explicit chaos_cluster(int members);
  ~chaos_cluster();

  const std::string& error() const { return error_; }
  int size() const { return static_cast<int>(members_.size()); }
  /// Member `i`'s HTTP port (fixed for the run) and gRPC port.
  std::uint16_t http_port(int i) const { return members_[i].http; }
  std::uint16_t grpc_port(int i) const { return members_[i].grpc; }
  std::string id(int i) const { return std::string(1, static_cast<char>('a' + i)); }
  /// Whether member `i` runs and is not paused (what writers prefer).
  bool serving(int i) const;
  /// The lease the members are configured with.
  static constexpr std::chrono::milliseconds lease{2000};

  // Faults. Each returns false when it did not apply (the member is already down, say).
  bool kill(int i);       ///< SIGKILL
  bool pause(int i);      ///< SIGSTOP
  bool resume(int i);     ///< SIGCONT
  bool terminate(int i);  ///< SIGTERM, waits for the drain to end (bounded)
  bool start(int i);      ///< starts a member that is down again
  bool pg_restart(bool immediate);
  /// Ends every session Weir holds on the database (pg_terminate_backend); how many.
  int pg_terminate_sessions();
  /// Ends change capture's replication session; whether there was one.
  bool pg_terminate_capture();

  /// Brings everything back: the database up, paused members resumed, stopped ones started.
  void heal();
  /// Milliseconds until every member answers /readyz 200, or nullopt after `bound`.
  std::optional<std::int64_t> wait_ready(std::chrono::milliseconds bound);
  /// Members that exited although no fault stopped them (their last log lines, for the report).
  std::vector<std::string> unexpected_exits();

  test::pg_instance& pg() { return pg_; }
  /// A libpq connection string to the database (the harness's own sessions).
  std::string pg_url() const { return pg_.url(); }

 private:
  struct member {
    std::uint16_t http = 0, grpc = 0, peer = 0;
    std::string config, data;
    std::unique_ptr<test::weir_process> proc;
    bool paused = false;
    bool stopped_by_fault = false;
  };
  void write_config(int i);
  std::string member_log_tail(member& m);

  test::temp_dir dir_;
  test::pg_instance pg_;
  mutable std::mutex mu_;
  std::vector<member> members_;
  std::string error_;
};

}  // namespace weir::chaos

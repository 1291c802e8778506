// weir::chaos::run_chaos — one fault-injection run: a PostgreSQL-backed elastic cluster under
// the workload and the subscribers, a seeded nemesis injecting faults in phases, and the checker
// at each quiet point between phases (everything healed, /readyz 200 on every member, writers
// paused) and at the end. The same seed replays the same choices of faults, members and
// writes (timing still varies: the cluster is real).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace weir::chaos {

struct chaos_options {
  std::uint64_t seed = 1;
  std::chrono::seconds duration{60};
  int members = 3;
  int http_writers = 4;
  /// Faults are injected for this long, then a quiet point checks everything.
  std::chrono::seconds phase{20};
  /// Where the fault log goes as it happens (may be null).
  std::ostream* log = nullptr;
};

struct chaos_report {
  std::uint64_t seed = 0;
  double seconds = 0;
  std::map<std::string, int> faults;  ///< by kind
  std::uint64_t acked = 0, refused = 0, unknown = 0, sql_acked = 0, grpc_acked = 0, incs_acked = 0;
  int quiet_points = 0;
  int streams_checked = 0;  ///< stream checks over all quiet points
  int streams_opened = 0;
  std::map<std::string, int> stream_endings;
  /// Longest span without an acknowledged write that began within 10 s after a fault of each
  /// kind (milliseconds).
  std::map<std::string, std::int64_t> longest_unavailability_ms;
  std::int64_t longest_recovery_ms = 0;  ///< heal → every member's /readyz 200
  std::vector<std::string> fault_log;
  std::vector<std::string> divergences;
  bool ok() const { return divergences.empty(); }
  /// A human-readable summary (the seed and fault log included when it failed).
  std::string text() const;
};

chaos_report run_chaos(const chaos_options& opts);

}  // namespace weir::chaos

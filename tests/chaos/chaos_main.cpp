// `chaos_run`: the fault-injection harness by hand, for minutes or hours.
//   build/tests/chaos/chaos_run [--seed N] [--seconds S | --minutes M] [--members K]
//                               [--phase-seconds P]
// Prints the fault log as it goes and the report at the end; the last line is `chaos: PASS` or
// `chaos: FAIL` (exit status 0 or 1). A failure names its seed: the same seed replays the same
// faults, members and writes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "chaos_run.hpp"

int main(int argc, char** argv) {
  weir::chaos::chaos_options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    auto v = std::strtoull(argv[i + 1], nullptr, 10);
    if (k == "--seed") {
      o.seed = v;
    } else if (k == "--seconds") {
      o.duration = std::chrono::seconds(v);
    } else if (k == "--minutes") {
      o.duration = std::chrono::seconds(v * 60);
    } else if (k == "--members") {
      o.members = static_cast<int>(v);
    } else if (k == "--phase-seconds") {
      o.phase = std::chrono::seconds(v);
    } else {
      std::cerr << "chaos_run: unknown option " << k << "\n";
      return 2;
    }
  }
  // The test clients report timeouts and refused connections as test failures; here those are
  // the faults working. Only the checker's verdict counts.
  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  o.log = &std::cout;
  std::cout << "chaos: seed " << o.seed << ", " << o.duration.count() << " s, " << o.members
            << " members" << std::endl;
  auto report = weir::chaos::run_chaos(o);
  std::cout << report.text() << (report.ok() ? "chaos: PASS" : "chaos: FAIL") << std::endl;
  return report.ok() ? 0 : 1;
}

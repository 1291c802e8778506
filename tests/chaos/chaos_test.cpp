// The fault-injection harness in CI: one short seeded run of `chaos_run` (a process of its own,
// so that the clients' expected timeouts are not this test's failures). The seed is fixed, or
// WEIR_CHAOS_SEED; WEIR_CHAOS_SECONDS lengthens it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "process_support.hpp"

namespace weir::test {
namespace {

TEST(Chaos, AShortSeededRunWithEveryFaultKindIsClean) {
  std::string seed = std::getenv("WEIR_CHAOS_SEED") ? std::getenv("WEIR_CHAOS_SEED") : "23";
  std::string seconds =
      std::getenv("WEIR_CHAOS_SECONDS") ? std::getenv("WEIR_CHAOS_SECONDS") : "75";
  child_process run{
      {WEIR_CHAOS_BINARY, "--seed", seed, "--seconds", seconds, "--phase-seconds", "25"}};
  std::string out;
  auto verdict = run.wait_line(
      [&](const std::string& l) {
        out += l + "\n";
        return l.rfind("chaos: PASS", 0) == 0 || l.rfind("chaos: FAIL", 0) == 0;
      },
      std::chrono::seconds(std::stoi(seconds) + 300));
  ASSERT_TRUE(verdict.has_value()) << "no verdict; output:\n" << out << run.stderr_text();
  EXPECT_EQ(*verdict, "chaos: PASS") << out;
}

}  // namespace
}  // namespace weir::test

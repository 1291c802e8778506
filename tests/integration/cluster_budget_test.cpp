// Per-caller budgets in a cluster (arc-hub §9.1): a caller spreading its connections over the
// members gets the configured per-caller limit in all, not that many per member.
#include <gtest/gtest.h>

#include "cluster_support.hpp"

namespace weir::test {
namespace {

TEST(ClusterBudget, ACallersConnectionsAcrossMembersNeverExceedItsLimit) {
  // 4 hub connections per caller in a cluster of 3: shares of 2, 1 and 1 (a, b, c by id).
  cluster3 cl{"query:\n  maxObservableHubConnectionsPerCaller: 4\n"};
  std::vector<std::unique_ptr<ws_client>> open;
  int admitted = 0;
  int refused = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < cluster3::n; ++i) {
      auto ws = std::make_unique<ws_client>(cl.port(i));
      auto first = ws->read(5s);
      if (first && first->find("\"Connected\"") != std::string::npos) {
        ++admitted;
        open.push_back(std::move(ws));
      } else {
        ASSERT_TRUE(ws->close_status());
        EXPECT_EQ(*ws->close_status(), (std::pair<int, std::string>{1013, "Hub capacity reached"}));
        ++refused;
      }
    }
  }
  EXPECT_EQ(admitted, 4);  // not 12
  EXPECT_EQ(refused, 5);
}

}  // namespace
}  // namespace weir::test

// Per-caller budgets in a cluster (arc-hub §9.1): a signed-in caller spreading its connections
// over the members gets the configured per-caller limit in all, not that many per member;
// anonymous callers (told apart by address or connection, not one identity) keep their caps.
#include <gtest/gtest.h>

#include "cluster_support.hpp"
#include "tests/support/token_signer.hpp"

namespace weir::test {
namespace {

struct budget_cluster {
  budget_cluster()
      : cl{"query:\n  maxObservableHubConnectionsPerCaller: 4\nauth:\n  jwt:\n    secret: \"" +
           signer.secret() + "\"\n"} {}
  token_signer signer{token_signer::alg::hs256};
  cluster3 cl;
};

/// Opens `rounds` hub connections on every member; returns how many were admitted (the others
/// must have been refused with 503 during the upgrade).
int admitted(cluster3& cl, int rounds, const std::map<std::string, std::string>& headers,
             std::vector<std::unique_ptr<ws_client>>& open) {
  int n = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < cluster3::n; ++i) {
      auto ws = std::make_unique<ws_client>(cl.port(i), "/.cratis/queries/ws", headers);
      auto first = ws->read(5s);
      if (first && first->find("\"Connected\"") != std::string::npos) {
        ++n;
        open.push_back(std::move(ws));
      } else {
        EXPECT_EQ(ws->upgrade_status(), 503u);
      }
    }
  }
  return n;
}

TEST(ClusterBudget, ASignedInCallersConnectionsAcrossMembersNeverExceedItsLimit) {
  // 4 hub connections per caller in a cluster of 3: shares of 2, 1 and 1 (a, b, c by id).
  budget_cluster b;
  auto token = b.signer.sign({{"sub", "ada"}, {"exp", token_signer::now() + 600}});
  std::vector<std::unique_ptr<ws_client>> open;
  EXPECT_EQ(admitted(b.cl, 3, {{"Authorization", "Bearer " + token}}, open), 4);  // not 12
  // Another principal has its own budget.
  auto bob = b.signer.sign({{"sub", "bob"}, {"exp", token_signer::now() + 600}});
  EXPECT_EQ(admitted(b.cl, 1, {{"Authorization", "Bearer " + bob}}, open), 3);
  // Anonymous connections are keyed by client address on each member: the full cap there.
  EXPECT_EQ(admitted(b.cl, 2, {}, open), 6);
}

}  // namespace
}  // namespace weir::test

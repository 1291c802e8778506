// The `patch` transfer mode through a remote owner: the gateway derives each patch from the
// document versions the owner sends (once per change, for every subscriber), and a follower
// that applies them holds what a `full` subscriber and a fresh query see after random writes.
#include <gtest/gtest.h>

#include "cluster_support.hpp"
#include "patch_follower.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

TEST(PatchCluster, AFollowerThroughARemoteOwnerHoldsWhatAFreshQueryReturns) {
  cluster3 cl;
  int owner = cl.owner_of("t", "");
  int gateway = (owner + 1) % cluster3::n;
  int other = (owner + 2) % cluster3::n;
  ws_client ws{cl.port(gateway)};
  ws.expect_connected();
  random_document_writer writer{cl.port(other), "doc1", 77};
  expect_patch_follower_converges(ws, cl.port(gateway), writer, 80);
}

}  // namespace
}  // namespace weir::test

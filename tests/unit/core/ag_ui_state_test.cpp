// core::ag_ui_state — AG-UI state events exactly as AG-UI's encoder writes them.
#include "core/ag_ui_state.hpp"

#include <gtest/gtest.h>

namespace weir::core {
namespace {

TEST(AgUiState, SnapshotAndDeltaShapes) {
  EXPECT_EQ(encode_state_snapshot(R"({"id":"o1","n":1})"),
            R"({"type":"STATE_SNAPSHOT","snapshot":{"id":"o1","n":1}})");
  EXPECT_EQ(encode_state_snapshot(std::nullopt), R"({"type":"STATE_SNAPSHOT","snapshot":{}})");
  EXPECT_EQ(encode_state_delta(R"([{"op":"replace","path":"/n","value":2}])"),
            R"({"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":2}]})");
}

}  // namespace
}  // namespace weir::core

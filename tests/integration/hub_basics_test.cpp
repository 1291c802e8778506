// The Arc WebSocket hub's first contract: Connected first, a subscription's snapshot, and a
// write reaching the subscriber as a delta.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace weir::test {

TEST(HubBasics, ConnectedThenSnapshotThenDelta) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1,"color":"red"})");
  ws_client ws{port};
  auto conn_id = ws.expect_connected();
  EXPECT_EQ(conn_id.size(), 36u);
  ws.subscribe("q1", "T.Items.All", {{"obj", "o1"}}, 1, "delta");
  auto snap = ws.read_json();
  EXPECT_EQ(snap["type"], "QueryResult");
  EXPECT_EQ(snap["queryId"], "q1");
  EXPECT_EQ(snap["revision"], 1);
  auto& p = snap["payload"].as_object();
  ASSERT_TRUE(p.contains("data"));
  EXPECT_FALSE(p.contains("changeSet"));
  EXPECT_EQ(p.at("data").as_array().size(), 1u);
  put_record(port, "t", "o1", "items", "b", R"({"n":2,"color":"blue"})");
  auto delta = ws.read_json();
  auto& dp = delta["payload"].as_object();
  EXPECT_FALSE(dp.contains("data"));
  ASSERT_TRUE(dp.contains("changeSet"));
  auto& added = dp.at("changeSet").as_object().at("added").as_array();
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].as_object().at("id"), "b");
}

}  // namespace weir::test

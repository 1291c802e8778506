// The direct per-query WebSocket on a query's route (arc-hub §10): Data frames with full
// QueryResults, Ping → Pong, and a malformedRequest Data frame then a close for bad arguments.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "test_support.hpp"

namespace weir::test {

TEST(DirectWs, DataFramesCarryFullResults) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1,"color":"red"})");
  ws_client ws{port, "/api/t/items/by-color?obj=o1&color=red"};
  auto first = ws.read_json();  // no Connected on a direct socket
  EXPECT_EQ(first["type"], "Data");
  auto& qr = first["data"].as_object();
  EXPECT_TRUE(qr.contains("correlationId"));
  EXPECT_EQ(qr.at("isSuccess"), true);
  ASSERT_EQ(qr.at("data").as_array().size(), 1u);
  EXPECT_FALSE(qr.contains("changeSet"));
  ws.send(R"({"type":"Ping","timestamp":42})");
  auto pong = ws.read_json();
  EXPECT_EQ(pong, boost::json::parse(R"({"type":"Pong","timestamp":42})").as_object());
  ws.send(R"({"type":"Subscribe","queryId":"x","payload":{}})");  // ignored, not an error
  put_record(port, "t", "o1", "items", "b", R"({"n":2,"color":"red"})");
  auto next = ws.read_json();
  EXPECT_EQ(next["type"], "Data");
  auto& d2 = next["data"].as_object();
  EXPECT_FALSE(d2.contains("changeSet"));  // full snapshots only
  ASSERT_EQ(d2.at("data").as_array().size(), 2u);
  EXPECT_EQ(d2.at("correlationId"), qr.at("correlationId"));
}

TEST(DirectWs, UnbindableArgumentsGetAMalformedRequestThenClose) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  ws_client ws{node->http_port(), "/api/t/items/by-color?obj=o1"};  // color missing
  auto f = ws.read_json();
  EXPECT_EQ(f["type"], "Data");
  auto& qr = f["data"].as_object();
  EXPECT_EQ(qr.at("isValid"), false);
  EXPECT_EQ(qr.at("validationResults").as_array()[0].as_object().at("reason"), "malformedRequest");
  EXPECT_FALSE(ws.read(3s).has_value());
  ASSERT_TRUE(ws.close_status().has_value());
  EXPECT_EQ(ws.close_status()->first, 1000);
}

}  // namespace weir::test

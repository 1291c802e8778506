// Edges found in review: empty object ids, HEAD probes, duplicate delete ids, and idle units
// releasing their memory (and coming back intact from the store).
#include <gtest/gtest.h>

#include <thread>

#include <boost/json.hpp>

#include "actors/runtime.hpp"
#include "test_support.hpp"

namespace weir::test {

TEST(NodeEdges, EmptyObjectIdIsRefusedAndChangesNothing) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  ASSERT_EQ(http(port, "PUT", "/v1/spaces/t/objects/o1", R"({"name":"one"})").status, 200u);
  for (auto [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"DELETE", "/v1/spaces/t/objects/"},
           {"PUT", "/v1/spaces/t/objects/"},
           {"PUT", "/v1/spaces/t/objects//datasets/items/records/x"},
           {"POST", "/v1/spaces/t/objects//datasets/items/records"}}) {
    auto r = http(port, method, target, method == "DELETE" ? "" : R"({"id":"x"})");
    EXPECT_EQ(r.status, 400u) << method << " " << target << " " << r.body;
    EXPECT_EQ(r.json().as_object()["error"].as_object()["code"], "request.invalid_field");
  }
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q", "T.Objects.All", {}, 1, "full");
  auto snap = ws.read_json();
  auto& data = snap["payload"].as_object()["data"].as_array();
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].as_object()["name"], "one");
}

TEST(NodeEdges, HeadAnswersHeadersWithoutBody) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  auto live = http(port, "HEAD", "/livez");
  EXPECT_EQ(live.status, 200u);
  EXPECT_TRUE(live.body.empty());
  auto probe = http(port, "HEAD", "/.cratis/queries/ws");
  EXPECT_EQ(probe.status, 200u);
  EXPECT_TRUE(probe.body.empty());
  EXPECT_EQ(probe.headers["content-type"], "text/event-stream; charset=utf-8");
  EXPECT_EQ(probe.headers["cache-control"], "no-cache");
  EXPECT_EQ(probe.headers["x-accel-buffering"], "no");
  EXPECT_EQ(node->runtime().stats().hub_connections, 0u);  // a probe allocates no connection
  auto post = http(port, "POST", "/.cratis/queries/ws", "{}");
  EXPECT_EQ(post.status, 405u);
  EXPECT_EQ(post.headers["allow"], "GET, HEAD");
  // The same connection keeps working after a HEAD (no stray body bytes on the wire).
  EXPECT_EQ(http(port, "GET", "/livez").status, 200u);
}

TEST(NodeEdges, RepeatedDeleteIdIsDuplicateNotConflict) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  auto r = http(port, "POST", "/v1/spaces/t/objects/o1/datasets/items/records",
                R"({"delete":["a","a"]})");
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.json().as_object()["error"].as_object()["code"], "batch.duplicate_id");
  r = http(port, "POST", "/v1/spaces/t/objects/o1/datasets/items/records",
           R"({"upsert":[{"id":"a","n":2}],"delete":["a"]})");
  EXPECT_EQ(r.json().as_object()["error"].as_object()["code"], "batch.conflict");
}

TEST(NodeEdges, IdleUnitsReleaseMemoryAndReloadIntact) {
  temp_dir dir;
  auto node = start_node(dir.path(), "store: { unitIdleMs: 50 }");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "keep", "items", "a", R"({"n":1})");
  {
    ws_client ws{port};
    ws.expect_connected();
    // Subscriptions on units that hold nothing: each one would pin a unit forever without
    // retirement.
    for (int i = 0; i < 20; ++i) {
      ws.subscribe("q" + std::to_string(i), "T.Items.All", {{"obj", "empty" + std::to_string(i)}});
      ws.read_json();
    }
    EXPECT_GE(node->runtime().stats().units, 20u);
  }
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (node->runtime().stats().units > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(node->runtime().stats().units, 0u);
  EXPECT_EQ(node->runtime().stats().query_keys, 0u);
  // A retired unit comes back from the store with its data and its sequence.
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q", "T.Items.All", {{"obj", "keep"}}, 1, "full");
  auto snap = ws.read_json();
  auto& data = snap["payload"].as_object()["data"].as_array();
  ASSERT_EQ(data.size(), 1u);
  auto before = std::string{data[0].as_object()["_ver"].as_object()["id"].as_string()};
  auto after = put_record(port, "t", "keep", "items", "b", R"({"n":2})");
  EXPECT_GT(after, before);
}

}  // namespace weir::test

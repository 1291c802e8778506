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

namespace weir::test {

// Review finding M1: a late idle notice from a retired query actor must not stop the newer
// actor of the same key. Churn one key (subscribe, unsubscribe, drop the socket) and check that
// a fresh subscriber always keeps receiving changes.
TEST(NodeEdges, QueryKeyChurnNeverStrandsANewSubscriber) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  for (int round = 0; round < 15; ++round) {
    {
      ws_client old{port};
      old.expect_connected();
      old.subscribe("q", "T.Items.All", {{"obj", "o1"}}, 1, "delta");
      old.read_json();
      old.unsubscribe("q", 1);
    }  // socket dropped right after the unsubscribe: an unsubscribe and a down both reach Q
    ws_client fresh{port};
    fresh.expect_connected();
    fresh.subscribe("q", "T.Items.All", {{"obj", "o1"}}, 1, "delta");
    fresh.read_json();
    put_record(port, "t", "o1", "items", "r" + std::to_string(round), R"({"n":2})");
    auto delta = fresh.read_json(3s);
    ASSERT_TRUE(delta.contains("payload")) << "round " << round << ": no delta";
    auto& added = delta["payload"].as_object()["changeSet"].as_object()["added"].as_array();
    ASSERT_EQ(added.size(), 1u) << "round " << round;
  }
}

TEST(NodeEdges, StopClosesHubClientsWithGoingAway) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  ws_client a{port};
  a.expect_connected();
  a.subscribe("q", "T.Items.All", {{"obj", "o1"}});
  a.read_json();
  ws_client b{port};
  b.expect_connected();
  // The clients wait for their close on a helper thread; the node is stopped from the thread
  // that started it, as `weir serve` does (CAF 0.17's actor system must be torn down there).
  std::thread readers{[&] {
    EXPECT_FALSE(a.read(5s).has_value());
    EXPECT_FALSE(b.read(5s).has_value());
  }};
  auto started = std::chrono::steady_clock::now();
  node->stop();
  readers.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  ASSERT_TRUE(a.close_status().has_value());
  EXPECT_EQ(a.close_status()->first, 1001);
  EXPECT_EQ(a.close_status()->second, "Server shutting down");
  ASSERT_TRUE(b.close_status().has_value());
  EXPECT_EQ(b.close_status()->first, 1001);
}

}  // namespace weir::test

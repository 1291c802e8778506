// The HTTP snapshot on a named query's route and GET /.cratis/queries (arc-hub §1, §10).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "actors/runtime.hpp"
#include "test_support.hpp"

namespace weir::test {

TEST(QueryRoutes, SnapshotAnswersTheCurrentResult) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":2,"color":"red"})");
  put_record(port, "t", "o1", "items", "b", R"({"n":1,"color":"blue"})");
  auto r = http(port, "GET", "/api/t/items?obj=o1");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.headers["cache-control"], "no-store");
  EXPECT_EQ(r.headers["content-type"], "application/json");
  auto body = r.json().as_object();
  EXPECT_EQ(body["correlationId"], boost::json::value(r.headers["x-correlation-id"]));
  EXPECT_EQ(body["isSuccess"], true);
  EXPECT_FALSE(body.contains("changeSet"));
  auto& data = body["data"].as_array();
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0].as_object()["id"], "b");  // sorted by n
  // The same as a hub subscription's full snapshot.
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q", "T.Items.All", {{"obj", "o1"}}, 1, "full");
  auto snap = ws.read_json();
  EXPECT_EQ(snap["payload"].as_object()["data"], body["data"]);
  // Filtered, paged, sorted by the client, and an inbound correlation id reused.
  auto uuid = std::string{"3f2504e0-4f89-41d3-9a0c-0305e82c3301"};
  auto p = http(port, "GET", "/api/t/items?obj=o1&pageSize=1&page=0&sortBy=n&sortDirection=desc",
                "", {{"X-Correlation-ID", uuid}});
  ASSERT_EQ(p.status, 200u) << p.body;
  EXPECT_EQ(p.headers["x-correlation-id"], uuid);
  auto pb = p.json().as_object();
  EXPECT_EQ(pb["correlationId"], boost::json::value(uuid));
  ASSERT_EQ(pb["data"].as_array().size(), 1u);
  EXPECT_EQ(pb["data"].as_array()[0].as_object()["id"], "a");
  EXPECT_EQ(pb["paging"],
            boost::json::parse(R"({"page":0,"size":1,"totalItems":2,"totalPages":2})"));
  // A snapshot leaves no subscription behind.
  EXPECT_EQ(node->runtime().stats().subscriptions, 1u);  // the WS one
}

TEST(QueryRoutes, BadArgumentsAnswer400WithAValidationResult) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  auto r = http(port, "GET", "/api/t/items/by-color?obj=o1");
  EXPECT_EQ(r.status, 400u);
  auto b = r.json().as_object();
  EXPECT_EQ(b["isValid"], false);
  EXPECT_EQ(b["isSuccess"], false);
  auto& v = b["validationResults"].as_array();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].as_object()["reason"], "malformedRequest");
  EXPECT_EQ(v[0].as_object()["severity"], 3);
  EXPECT_EQ(http(port, "GET", "/api/t/items?obj=o1&pageSize=5000").status, 400u);
  EXPECT_EQ(http(port, "GET", "/api/t/items?obj=o1&page=-1").status, 400u);
  EXPECT_EQ(http(port, "GET", "/api/t/items?obj=o1&extra=1").status, 400u);
}

TEST(QueryRoutes, SingleDocumentSnapshot) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  ASSERT_EQ(http(port, "PUT", "/v1/spaces/t/objects/o7", R"({"name":"seven"})").status, 200u);
  auto r = http(port, "GET", "/api/t/objects/one?obj=o7");
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.json().as_object()["data"].as_object()["name"], "seven");
}

TEST(QueryRoutes, IntrospectionListsEveryQuery) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto r = http(node->http_port(), "GET", "/.cratis/queries");
  ASSERT_EQ(r.status, 200u);
  auto list = r.json().as_array();
  ASSERT_EQ(list.size(), 5u);  // the four configured queries, then the built-in health feed
  EXPECT_EQ(list[4].as_object()["fullyQualifiedName"], "QueryHealth.ObserveHealth");
  auto& first = list[0].as_object();
  EXPECT_EQ(first["fullyQualifiedName"], "T.Items.All");
  EXPECT_EQ(first["name"], "All");
  EXPECT_EQ(first["namespace"], "T.Items");
  EXPECT_EQ(first["route"], "/api/t/items");
  EXPECT_EQ(first["isEnumerable"], true);
  EXPECT_EQ(first["argumentsSchema"],
            boost::json::parse(
                R"({"type":"object","properties":{"obj":{"type":"string"}},"required":["obj"]})"));
  EXPECT_EQ(list[2].as_object()["isEnumerable"], false);  // T.Objects.One: a single document
}

}  // namespace weir::test

namespace weir::test {
namespace {

// A direct subscription (the snapshot) leaving a query key that hub subscribers also hold: the
// query actor once hashed the direct one's null connection address and crashed.
TEST(QueryRoutes, SnapshotOnAKeyHubClientsAlsoWatch) {
  temp_dir dir;
  auto node = start_node(dir.path());
  auto port = node->http_port();
  put_record(port, "t", "shared", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q", "T.Items.All", {{"obj", "shared"}});
  ws.read_json();
  for (int i = 0; i < 3; ++i) {
    auto r = http(port, "GET", "/api/t/items?obj=shared");
    ASSERT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.json().as_object()["data"].as_array().size(), 1u);
  }
  put_record(port, "t", "shared", "items", "b", R"({"n":2})");
  auto f = ws.read_json();
  EXPECT_EQ(f["type"], "QueryResult");
}

}  // namespace
}  // namespace weir::test

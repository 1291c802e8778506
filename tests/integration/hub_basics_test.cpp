// The Arc WebSocket hub's first contract: Connected first, a subscription's snapshot, and a
// write reaching the subscriber as a delta.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <boost/json.hpp>

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

TEST(HubBasics, SubscribesAndAnUnsubscribeSentTogetherAreAppliedInOrder) {
  // Frames read in one wake-up of the node's I/O thread: subscribes, and an unsubscribe of one
  // of them whose message may reach its unit after the subscribe's (unsubscribes of one wake-up
  // go together, actors/unsubscribe_batch). Each subscription gets its snapshot and later
  // changes; the one ended in the same burst gets nothing once its Unsubscribe is read. Its
  // snapshot may still come (the node may have read its Subscribe in a wake-up of its own and
  // answered it first), but never a change made after the burst.
  int q3_frames = 0;
  auto allow_q3_snapshot = [&](const boost::json::object& f) {
    ++q3_frames;
    EXPECT_EQ(q3_frames, 1) << "a second frame of the subscription ended in the same burst";
    EXPECT_EQ(boost::json::serialize(f).find(R"("id":"b")"), std::string::npos)
        << "a change after the burst reached the subscription ended in it: "
        << boost::json::serialize(f);
  };
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  put_record(port, "t", "o2", "items", "a", R"({"n":2})");
  ws_client ws{port};
  ws.expect_connected();
  const int n = 12;
  auto obj = [](int i) { return i % 2 == 0 ? "o1" : "o2"; };
  for (int i = 0; i < n; ++i) {
    // Two keys per unit: the unbounded query and a page of it.
    boost::json::object extra;
    if (i % 4 >= 2) {
      extra = {{"page", 0}, {"pageSize", 10}};
    }
    ws.subscribe("q" + std::to_string(i), "T.Items.All", {{"obj", obj(i)}}, 1, "delta", extra);
  }
  ws.unsubscribe("q3", 1);
  std::set<std::string> snapshots;
  while (snapshots.size() < n - 1) {
    auto f = ws.read_json();
    ASSERT_EQ(f["type"], "QueryResult") << boost::json::serialize(f);
    std::string qid{f["queryId"].as_string()};
    if (qid == "q3") {
      allow_q3_snapshot(f);
      continue;
    }
    EXPECT_TRUE(snapshots.insert(qid).second) << qid << ": a second snapshot";
  }
  put_record(port, "t", "o1", "items", "b", R"({"n":3})");
  put_record(port, "t", "o2", "items", "b", R"({"n":4})");
  std::set<std::string> changed;
  while (changed.size() < n - 1) {
    auto f = ws.read_json();
    std::string qid{f["queryId"].as_string()};
    if (qid == "q3") {
      allow_q3_snapshot(f);
      continue;
    }
    EXPECT_TRUE(changed.insert(qid).second) << qid << ": a second change";
  }
  EXPECT_TRUE(ws.silent_for(200ms));
}

}  // namespace weir::test

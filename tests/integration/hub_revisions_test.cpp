// Arc hub §4 over the wire: revisions, duplicates and stale operations, replacement with a fresh
// baseline, unsubscribe tombstones, the legacy → revision-aware upgrade of the stock client (§12),
// and the wire rule for a revision (a JSON integer 1..2^53-1, anything else malformed).
//
// Silence is asserted with a witness where possible: a second subscription to the same query key
// goes through the same query actor after the operation under test, so any frame the operation
// wrongly caused would arrive before the witness's frame.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

constexpr std::string_view malformed = R"({"type":"Error","payload":"Malformed query control"})";

const json::object items_o1{{"obj", "o1"}};

bool is_result(const json::object& f, std::string_view query_id) {
  auto* t = f.if_contains("type");
  auto* q = f.if_contains("queryId");
  return t && t->is_string() && t->get_string() == "QueryResult" && q && q->is_string() &&
         q->get_string() == query_id;
}

/// Reads frames until one satisfies `pred`; returns every frame read, the match last.
std::vector<json::object> read_through(ws_client& ws,
                                       const std::function<bool(const json::object&)>& pred) {
  std::vector<json::object> out;
  for (int i = 0; i < 100; ++i) {
    auto t = ws.read(5s);
    if (!t) {
      ADD_FAILURE() << "no matching frame within 5 s";
      return out;
    }
    auto v = json::parse(*t);
    if (!v.is_object()) {
      ADD_FAILURE() << "frame is not an object: " << *t;
      return out;
    }
    out.push_back(v.as_object());
    if (pred(out.back())) {
      return out;
    }
  }
  ADD_FAILURE() << "too many frames without a match";
  return out;
}

/// Sends a Ping and requires the very next frame to be its Pong: every frame the connection
/// actor produced synchronously for earlier controls (an Error, say) would come first.
void expect_ping_pong(ws_client& ws, long long ts) {
  ws.send(R"({"type":"Ping","timestamp":)" + std::to_string(ts) + "}");
  auto t = ws.read(5s);
  ASSERT_TRUE(t) << "no Pong";
  EXPECT_EQ(*t, R"({"type":"Pong","timestamp":)" + std::to_string(ts) + "}");
}

const json::array& data_of(const json::object& f) {
  return f.at("payload").as_object().at("data").as_array();
}

std::vector<std::string> ids_of(const json::array& items) {
  std::vector<std::string> out;
  for (auto& v : items) {
    out.emplace_back(v.as_object().at("id").as_string());
  }
  return out;
}

using ids = std::vector<std::string>;

using HubRevisions = single_node;

TEST_F(HubRevisions, SubscribeWithRevisionAnswersSnapshotEchoingIt) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "full");
  auto f = ws.read_json();
  EXPECT_EQ(f.size(), 4u) << json::serialize(f);  // type, queryId, revision, payload
  EXPECT_EQ(f["type"], "QueryResult");
  EXPECT_EQ(f["queryId"], "q1");
  ASSERT_TRUE(f.contains("revision"));
  EXPECT_TRUE(f["revision"].is_int64() || f["revision"].is_uint64());
  EXPECT_EQ(f["revision"], 1);
  EXPECT_EQ(ids_of(data_of(f)), ids{"a"});
}

TEST_F(HubRevisions, DuplicateSubscribeSendsNoFrameAndKeepsTheSubscription) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  auto snap = ws.read_json();
  ASSERT_TRUE(is_result(snap, "q1"));
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  // No Error for the duplicate, and the connection still answers.
  expect_ping_pong(ws, 41);
  // A witness on the same query key: a restarted q1 would have its snapshot sent first.
  ws.subscribe("w", "T.Items.All", items_o1, 1, "delta");
  auto seen = read_through(ws, [](auto& f) { return is_result(f, "w"); });
  ASSERT_EQ(seen.size(), 1u) << json::serialize(seen.front());
  // The original subscription lives on: the next write reaches q1 as a delta of revision 1, not
  // as a fresh snapshot.
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto d = ws.read_until([](auto& f) { return is_result(f, "q1"); });
  EXPECT_EQ(d["revision"], 1);
  auto& p = d["payload"].as_object();
  EXPECT_FALSE(p.contains("data")) << json::serialize(d);
  ASSERT_TRUE(p.contains("changeSet"));
  EXPECT_EQ(ids_of(p.at("changeSet").at("added").as_array()), ids{"b"});
  ws.read_until([](auto& f) { return is_result(f, "w"); });
  EXPECT_TRUE(ws.silent_for(300ms));
}

TEST_F(HubRevisions, StaleSubscribeIsIgnoredAndRevisionZeroIsMalformed) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 3, "full");
  EXPECT_EQ(ws.read_json()["revision"], 3);
  // Revision 0 breaks the wire rule: malformed, no queryId, connection open.
  ws.send(
      R"({"type":"Subscribe","queryId":"q1","revision":0,"payload":{"queryName":"T.Items.All","arguments":{"obj":"o1"}}})");
  auto t = ws.read();
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, malformed);
  // Revisions 2 and 3 are stale or duplicate for q1 now: no frame at all.
  ws.subscribe("q1", "T.Items.All", items_o1, 2, "full");
  ws.subscribe("q1", "T.Items.All", items_o1, 3, "full");
  expect_ping_pong(ws, 42);
  ws.subscribe("w", "T.Items.All", items_o1, 1, "full");
  auto seen = read_through(ws, [](auto& f) { return is_result(f, "w"); });
  EXPECT_EQ(seen.size(), 1u) << json::serialize(seen.front());
  // q1 is still revision 3.
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto d = ws.read_until([](auto& f) { return is_result(f, "q1"); });
  EXPECT_EQ(d["revision"], 3);
  EXPECT_EQ(ids_of(data_of(d)), (ids{"a", "b"}));
}

TEST_F(HubRevisions, HigherRevisionReplacesWithAFreshSnapshotAndOnlyItsFrames) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  auto s1 = ws.read_json();
  EXPECT_EQ(s1["revision"], 1);
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto d1 = ws.read_json();
  EXPECT_EQ(d1["revision"], 1);
  EXPECT_TRUE(d1["payload"].as_object().contains("changeSet"));

  ws.subscribe("q1", "T.Items.All", items_o1, 2, "delta");
  auto s2 = ws.read_json();
  EXPECT_EQ(s2["queryId"], "q1");
  EXPECT_EQ(s2["revision"], 2);
  // A fresh baseline: the whole snapshot in data, no change set (delta's first emission).
  auto& p2 = s2["payload"].as_object();
  EXPECT_FALSE(p2.contains("changeSet")) << json::serialize(s2);
  EXPECT_EQ(ids_of(data_of(s2)), (ids{"a", "b"}));

  put_record(port, "t", "o1", "items", "c", R"({"n":3})");
  auto d2 = ws.read_json();
  EXPECT_EQ(d2["queryId"], "q1");
  EXPECT_EQ(d2["revision"], 2);
  auto& cs = d2["payload"].as_object().at("changeSet").as_object();
  EXPECT_EQ(ids_of(cs.at("added").as_array()), ids{"c"});
  EXPECT_TRUE(cs.at("replaced").as_array().empty());
  EXPECT_TRUE(cs.at("removed").as_array().empty());
  // Exactly one frame per write: nothing of revision 1 follows.
  EXPECT_TRUE(ws.silent_for(300ms));
}

TEST_F(HubRevisions, UnsubscribeStopsFrames) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 2, "delta");
  EXPECT_EQ(ws.read_json()["revision"], 2);
  ws.subscribe("w", "T.Items.All", items_o1, 1, "delta");
  EXPECT_TRUE(is_result(ws.read_json(), "w"));
  ws.unsubscribe("q1", 2);
  expect_ping_pong(ws, 43);  // the unsubscribe is processed (same actor, in order)
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  // Both subscriptions hang off the same query actor, which sends to both in one pass.
  auto seen = read_through(ws, [](auto& f) { return is_result(f, "w"); });
  for (auto& f : seen) {
    EXPECT_FALSE(is_result(f, "q1")) << json::serialize(f);
  }
  EXPECT_TRUE(ws.silent_for(300ms));
}

TEST_F(HubRevisions, StaleUnsubscribeDoesNotTearDownNewerRevision) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  EXPECT_EQ(ws.read_json()["revision"], 1);
  ws.subscribe("q1", "T.Items.All", items_o1, 2, "delta");
  EXPECT_EQ(ws.read_json()["revision"], 2);
  ws.unsubscribe("q1", 1);  // stale
  expect_ping_pong(ws, 44);
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto d = ws.read_json();
  EXPECT_EQ(d["queryId"], "q1");
  EXPECT_EQ(d["revision"], 2);
}

TEST_F(HubRevisions, UnsubscribeBeforeSubscribeLeavesATombstone) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.unsubscribe("q1", 5);                                 // never subscribed: tombstone at 5
  ws.subscribe("q1", "T.Items.All", items_o1, 5, "full");  // the delayed subscribe: ignored
  ws.subscribe("q1", "T.Items.All", items_o1, 4, "full");  // older still: ignored
  expect_ping_pong(ws, 45);
  ws.subscribe("w", "T.Items.All", items_o1, 1, "full");
  auto seen = read_through(ws, [](auto& f) { return is_result(f, "w"); });
  ASSERT_EQ(seen.size(), 1u) << json::serialize(seen.front());
  // A newer revision revives the id.
  ws.subscribe("q1", "T.Items.All", items_o1, 6, "full");
  auto f = ws.read_json();
  EXPECT_EQ(f["queryId"], "q1");
  EXPECT_EQ(f["revision"], 6);
  EXPECT_EQ(ids_of(data_of(f)), ids{"a"});
}

TEST_F(HubRevisions, LegacyResultsCarryNoRevisionAndLegacyUnsubscribeCancels) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, -1, "full");
  auto f = ws.read_json();
  EXPECT_TRUE(is_result(f, "q1"));
  EXPECT_FALSE(f.contains("revision")) << json::serialize(f);
  EXPECT_EQ(f.size(), 3u);  // type, queryId, payload
  // A second legacy subscribe replaces the first: a fresh snapshot.
  ws.subscribe("q1", "T.Items.All", items_o1, -1, "full");
  auto g = ws.read_json();
  EXPECT_TRUE(is_result(g, "q1"));
  EXPECT_FALSE(g.contains("revision"));
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto h = ws.read_json();
  EXPECT_TRUE(is_result(h, "q1"));
  EXPECT_FALSE(h.contains("revision"));
  EXPECT_EQ(ids_of(data_of(h)), (ids{"a", "b"}));
  // Legacy unsubscribe cancels the legacy subscription.
  ws.unsubscribe("q1", -1);
  ws.subscribe("w", "T.Items.All", items_o1, 1, "full");
  EXPECT_TRUE(is_result(ws.read_json(), "w"));
  put_record(port, "t", "o1", "items", "c", R"({"n":3})");
  auto seen = read_through(ws, [](auto& fr) { return is_result(fr, "w"); });
  for (auto& fr : seen) {
    EXPECT_FALSE(is_result(fr, "q1")) << json::serialize(fr);
  }
  EXPECT_TRUE(ws.silent_for(300ms));
}

TEST_F(HubRevisions, StockClientUpgradeFromLegacyToRevisions) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  // The revision-aware client sends legacy Subscribes as soon as the socket opens, before it has
  // seen Connected (§12).
  ws.subscribe("q1", "T.Items.All", items_o1, -1);
  auto c = ws.read_json();
  EXPECT_EQ(c["type"], "Connected");
  EXPECT_EQ(c["supportsSubscriptionRevisions"], true);
  auto legacy = ws.read_json();
  EXPECT_TRUE(is_result(legacy, "q1"));
  EXPECT_FALSE(legacy.contains("revision"));
  // Legacy mode (no transferMode): data and a change set with everything added.
  auto& lp = legacy["payload"].as_object();
  ASSERT_TRUE(lp.contains("changeSet"));
  EXPECT_EQ(ids_of(lp.at("changeSet").at("added").as_array()), ids{"a"});

  // On Connected{supportsSubscriptionRevisions:true} it re-sends with a revision: that replaces
  // the legacy subscription with a fresh snapshot carrying the revision.
  ws.subscribe("q1", "T.Items.All", items_o1, 1);
  auto up = ws.read_json();
  EXPECT_TRUE(is_result(up, "q1"));
  EXPECT_EQ(up["revision"], 1);
  auto& up_p = up["payload"].as_object();
  EXPECT_EQ(ids_of(up_p.at("data").as_array()), ids{"a"});
  EXPECT_EQ(ids_of(up_p.at("changeSet").at("added").as_array()), ids{"a"});

  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto d = ws.read_json();
  EXPECT_TRUE(is_result(d, "q1"));
  EXPECT_EQ(d["revision"], 1);
  EXPECT_EQ(ids_of(d["payload"].at("changeSet").at("added").as_array()), ids{"b"});
  // The legacy subscription is gone: no revisionless frame for the write.
  EXPECT_TRUE(ws.silent_for(300ms));
}

TEST_F(HubRevisions, LegacyControlsCannotTouchARevisionAwareId) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  EXPECT_EQ(ws.read_json()["revision"], 1);
  ws.subscribe("q1", "T.Items.All", items_o1, -1, "delta");  // ignored
  ws.unsubscribe("q1", -1);                                  // ignored
  expect_ping_pong(ws, 46);
  ws.subscribe("w", "T.Items.All", items_o1, 1, "delta");
  auto seen = read_through(ws, [](auto& f) { return is_result(f, "w"); });
  ASSERT_EQ(seen.size(), 1u) << json::serialize(seen.front());
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto d = ws.read_until([](auto& f) { return is_result(f, "q1"); });
  EXPECT_EQ(d["revision"], 1);
  EXPECT_FALSE(d["payload"].as_object().contains("data"));
  ws.read_until([](auto& f) { return is_result(f, "w"); });
  EXPECT_TRUE(ws.silent_for(300ms));
}

TEST_F(HubRevisions, RevisionsBreakingTheWireRuleAreMalformed) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  const std::string payload =
      R"("payload":{"queryName":"T.Items.All","arguments":{"obj":"o1"},"transferMode":"full"})";
  for (std::string rev : {R"("1")", "1.5", "0", "-1", "1e0", "1.0", "9007199254740992",
                          "18446744073709551616", "true", "[1]", "{}"}) {
    SCOPED_TRACE("revision " + rev);
    ws.send(R"({"type":"Subscribe","queryId":"q1","revision":)" + rev + "," + payload + "}");
    auto t = ws.read();
    ASSERT_TRUE(t) << "no Error frame";
    EXPECT_EQ(*t, malformed);
    ws.send(R"({"type":"Unsubscribe","queryId":"q1","revision":)" + rev + "}");
    t = ws.read();
    ASSERT_TRUE(t) << "no Error frame for the Unsubscribe";
    EXPECT_EQ(*t, malformed);
  }
  expect_ping_pong(ws, 47);
  // None of those touched q1: revision 1 is still free, and the largest safe integer is fine.
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "full");
  auto f = ws.read_json();
  EXPECT_TRUE(is_result(f, "q1"));
  EXPECT_EQ(f["revision"], 1);
  ws.subscribe("q2", "T.Items.All", items_o1, 9007199254740991LL, "full");
  auto g = ws.read_json();
  EXPECT_TRUE(is_result(g, "q2"));
  EXPECT_EQ(g["revision"], 9007199254740991LL);
}

TEST_F(HubRevisions, NullRevisionMeansLegacy) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.send(
      R"({"type":"Subscribe","queryId":"q1","revision":null,"payload":{"queryName":"T.Items.All","arguments":{"obj":"o1"},"transferMode":"full"}})");
  auto f = ws.read_json();
  EXPECT_TRUE(is_result(f, "q1"));
  EXPECT_FALSE(f.contains("revision")) << json::serialize(f);
}

TEST_F(HubRevisions, RevisionStateIsPerConnection) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client a{port};
  a.expect_connected();
  a.subscribe("q1", "T.Items.All", items_o1, 5, "full");
  EXPECT_EQ(a.read_json()["revision"], 5);
  // Another connection (e.g. after a reconnect) starts with empty state: revision 1 is new there.
  ws_client b{port};
  b.expect_connected();
  b.subscribe("q1", "T.Items.All", items_o1, 1, "full");
  auto f = b.read_json();
  EXPECT_TRUE(is_result(f, "q1"));
  EXPECT_EQ(f["revision"], 1);
}

}  // namespace
}  // namespace weir::test

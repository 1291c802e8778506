// Windowed subscriptions on a live node (windowed-subscribe §4–§9): the frames in order and
// their exact shapes, includeTotal, each window transition on its own (an insert and the row it
// displaces, an update across the window's edge, a delete and the row that backfills it, a
// filter-out, an object deletion, an arrival before an offset window), projections on the
// snapshot, docs and ops, keepalive comments, overflow with a reader that stopped and the close
// deadline that cuts such a reader off, HTTP/1.0 streams, and the space-wide dataset's ids,
// versionIds and totals.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <boost/json.hpp>

#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

struct node_with {
  explicit node_with(const std::string& extra = "") : node(start_node(dir.path(), extra)) {
    port = node->http_port();
  }
  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

/// PUT and return the versionId.
std::string put(std::uint16_t port, const std::string& object, const std::string& id,
                const std::string& body, const std::string& dataset = "msgs") {
  return put_record(port, "t", object, dataset, id, body);
}

std::string del(std::uint16_t port, const std::string& object, const std::string& id) {
  auto r = http(port, "DELETE", "/v1/spaces/t/objects/" + object + "/datasets/msgs/records/" + id);
  EXPECT_EQ(r.status, 200u) << r.body;
  return std::string{r.json().as_object()["versionId"].as_string()};
}

std::string patch(std::uint16_t port, const std::string& object, const std::string& id,
                  const std::string& body) {
  auto r = http(port, "PATCH", "/v1/spaces/t/objects/" + object + "/datasets/msgs/records/" + id,
                body, {{"Content-Type", "application/json"}});
  EXPECT_EQ(r.status, 200u) << r.body;
  return std::string{r.json().as_object()["versionId"].as_string()};
}

std::vector<std::string> ids_of(const json::value& records) {
  std::vector<std::string> out;
  for (auto& r : records.as_array()) {
    out.emplace_back(r.as_object().at("id").as_string());
  }
  return out;
}

/// The single event of the next `changes` frame.
json::object next_event(windowed_stream& s) {
  auto f = s.next();
  if (!f) {
    ADD_FAILURE() << "no changes frame";
    return {};
  }
  EXPECT_EQ(f->event, "changes") << f->raw;
  s.apply(*f);
  EXPECT_EQ(f->data.as_array().size(), 1u) << f->raw;
  return f->data.as_array().front().as_object();
}

json::array list(const json::object& ev, const char* name) {
  auto* l = ev.if_contains(name);
  return l ? l->as_array() : json::array{};
}

TEST(WindowedStream, FramesInOrderWithExactShapes) {
  node_with n;
  auto v1 = put(n.port, "c", "m1", R"({"text":"one"})");
  auto v2 = put(n.port, "c", "m2", R"({"text":"two"})");
  windowed_stream s{n.port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["-_ver.id"],"limit":5})"};
  ASSERT_EQ(s.status(), 200u);
  EXPECT_EQ(s.client().header("content-type"), "text/event-stream");  // §4, to the letter
  EXPECT_EQ(s.client().header("x-content-type-options"), "nosniff");
  EXPECT_EQ(s.client().header("cache-control"), "no-cache");
  EXPECT_EQ(s.client().header("x-accel-buffering"), "no");
  auto ready = s.next();
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->raw, "event: ready\ndata: {}");
  auto snap = s.next();
  ASSERT_TRUE(snap);
  s.apply(*snap);
  EXPECT_EQ(
      snap->raw,
      "event: snapshot\ndata: {\"records\":[{\"id\":\"m2\",\"text\":\"two\",\"_ver\":{\"id\":\"" +
          v2 + "\"}},{\"id\":\"m1\",\"text\":\"one\",\"_ver\":{\"id\":\"" + v1 + "\"}}]}");
  // A create: added with its doc and the root multi-set op; nothing else in the event.
  auto v3 = put(n.port, "c", "m3", R"({"text":"three","n":3})");
  auto f = s.next();
  ASSERT_TRUE(f);
  s.apply(*f);
  EXPECT_EQ(f->raw, "event: changes\ndata: [{\"versionId\":\"" + v3 +
                        "\",\"added\":[{\"id\":\"m3\",\"doc\":{\"id\":\"m3\",\"text\":\"three\","
                        "\"n\":3,\"_ver\":{\"id\":\"" +
                        v3 +
                        "\"}},\"ops\":[{\"type\":\"$set\",\"path\":[],\"payload\":{\"text\":"
                        "\"three\",\"n\":3}}]}]}]");
  // A PATCH: updated, with $set/$unset and $inc collapsed to the resulting $set.
  auto v4 = patch(n.port, "c", "m3", R"({"$set":{"a.b":1},"$unset":{"text":true},"$inc":{"n":2}})");
  auto ev = next_event(s);
  EXPECT_EQ(ev.at("versionId"), json::value(v4));
  EXPECT_FALSE(ev.contains("added"));
  EXPECT_FALSE(ev.contains("removed"));
  auto up = list(ev, "updated");
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].as_object().at("ops"),
            json::parse(R"([{"type":"$set","path":["a","b"],"payload":1},)"
                        R"({"type":"$unset","path":["text"]},)"
                        R"({"type":"$set","path":["n"],"payload":5}])"));
  EXPECT_EQ(up[0].as_object().at("doc"),
            json::parse(R"({"id":"m3","n":5,"a":{"b":1},"_ver":{"id":")" + v4 + R"("}})"));
  // The snapshot twin answers the same window.
  auto q = windowed_query(n.port, "t", "object",
                          R"({"objectId":"c","dataset":"msgs","sort":["-_ver.id"],"limit":5})");
  ASSERT_EQ(q.status, 200u) << q.body;
  EXPECT_EQ(by_record_id(q.json().as_object().at("records")), s.window());
  EXPECT_FALSE(q.json().as_object().contains("total"));
}

TEST(WindowedStream, IncludeTotalAddsTotalAndHasNextToTheSnapshotOnly) {
  node_with n;
  for (int i = 0; i < 7; ++i) {
    put(n.port, "c", "m" + std::to_string(i), R"({"n":)" + std::to_string(i) + "}");
  }
  windowed_stream s{n.port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":3,"offset":2,)"
                    R"("includeTotal":true,"filter":{"n":{"$gte":1}}})"};
  auto snap = s.open();
  EXPECT_EQ(ids_of(snap.at("records")), (std::vector<std::string>{"m3", "m4", "m5"}));
  EXPECT_EQ(snap.at("total"), 6);
  EXPECT_EQ(snap.at("hasNext"), true);
  put(n.port, "c", "m9", R"({"n":9})");  // past the window: no frame
  put(n.port, "c", "m0", R"({"n":0})");  // filtered out: no frame
  EXPECT_FALSE(s.next(300ms));
  // The last page: hasNext false.
  windowed_stream last{n.port, "t", "object",
                       R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":10,"offset":4,)"
                       R"("includeTotal":true,"filter":{"n":{"$gte":1}}})"};
  auto snap2 = last.open();
  EXPECT_EQ(snap2.at("total"), 7);
  EXPECT_EQ(snap2.at("hasNext"), false);
  auto q = windowed_query(n.port, "t", "object",
                          R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":2,)"
                          R"("includeTotal":true})");
  EXPECT_EQ(q.json(), json::parse(q.body));
  EXPECT_EQ(q.json().as_object().at("total"), 8);
  EXPECT_EQ(q.json().as_object().at("hasNext"), true);
}

TEST(WindowedStream, AnInsertInsideTheWindowDisplacesTheLastRow) {
  node_with n;
  for (int i : {1, 3, 5}) {
    put(n.port, "c", "m" + std::to_string(i), R"({"n":)" + std::to_string(i) + "}");
  }
  windowed_stream s{n.port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":2})"};
  EXPECT_EQ(ids_of(s.open().at("records")), (std::vector<std::string>{"m1", "m3"}));
  auto v = put(n.port, "c", "m2", R"({"n":2})");
  auto ev = next_event(s);
  EXPECT_EQ(ev.at("versionId"), json::value(v));
  auto added = list(ev, "added");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].as_object().at("id"), "m2");
  EXPECT_TRUE(added[0].as_object().contains("ops"));
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"m3","reason":"displaced"}])"));
  EXPECT_EQ(s.window().size(), 2u);
}

TEST(WindowedStream, AnUpdateAcrossTheEdgeMovesRowsBothWays) {
  node_with n;
  for (int i : {1, 2, 3, 4}) {
    put(n.port, "c", "m" + std::to_string(i), R"({"n":)" + std::to_string(i) + "}");
  }
  windowed_stream s{n.port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":2})"};
  s.open();
  // m1 leaves the window by its own sort change: displaced; m3 comes in without ops.
  patch(n.port, "c", "m1", R"({"$set":{"n":10}})");
  auto ev = next_event(s);
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"m1","reason":"displaced"}])"));
  auto added = list(ev, "added");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].as_object().at("id"), "m3");
  EXPECT_FALSE(added[0].as_object().contains("ops"));
  // m4 jumps in front: added with the PATCH's ops, and m3 is displaced again.
  patch(n.port, "c", "m4", R"({"$set":{"n":0}})");
  ev = next_event(s);
  added = list(ev, "added");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].as_object().at("id"), "m4");
  EXPECT_EQ(added[0].as_object().at("ops"),
            json::parse(R"([{"type":"$set","path":["n"],"payload":0}])"));
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"m3","reason":"displaced"}])"));
  EXPECT_EQ(s.window().size(), 2u);
  EXPECT_TRUE(s.window().count("m4") && s.window().count("m2"));
}

TEST(WindowedStream, ADeleteInsideTheWindowIsBackfilledFromTheData) {
  node_with n;
  for (int i = 1; i <= 6; ++i) {
    put(n.port, "c", "m" + std::to_string(i), R"({"n":)" + std::to_string(i) + "}");
  }
  windowed_stream s{n.port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":3})"};
  s.open();
  // More departures than any one-row look-ahead could cover: every one is backfilled.
  for (int i = 1; i <= 4; ++i) {
    auto v = del(n.port, "c", "m" + std::to_string(i));
    auto ev = next_event(s);
    EXPECT_EQ(ev.at("versionId"), json::value(v));
    EXPECT_EQ(list(ev, "removed"),
              json::parse(R"([{"id":"m)" + std::to_string(i) + R"(","reason":"deleted"}])"));
    auto added = list(ev, "added");
    if (i + 3 <= 6) {
      ASSERT_EQ(added.size(), 1u) << json::serialize(ev);
      EXPECT_EQ(added[0].as_object().at("id"), json::value("m" + std::to_string(i + 3)));
      EXPECT_FALSE(added[0].as_object().contains("ops"));  // a backfill carries no ops
    } else {
      EXPECT_TRUE(added.empty());
    }
  }
  EXPECT_EQ(s.window().size(), 2u);
}

TEST(WindowedStream, AFilterOutIsRemovedWithItsReason) {
  node_with n;
  put(n.port, "c", "a", R"({"n":1,"color":"red"})");
  put(n.port, "c", "b", R"({"n":2,"color":"red"})");
  windowed_stream s{n.port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":5,)"
                    R"("filter":{"color":"red"}})"};
  s.open();
  patch(n.port, "c", "a", R"({"$set":{"color":"blue"}})");
  auto ev = next_event(s);
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"a","reason":"filtered-out"}])"));
  patch(n.port, "c", "a", R"({"$set":{"color":"red"}})");
  ev = next_event(s);
  ASSERT_EQ(list(ev, "added").size(), 1u);
}

TEST(WindowedStream, DeletingTheObjectSendsASyntheticRemovalThenClosed) {
  node_with n;
  put(n.port, "c", "a", R"({"n":1})");
  put(n.port, "c", "b", R"({"n":2})");
  put(n.port, "c", "x", R"({"n":9})", "other");
  windowed_stream s{n.port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":5})"};
  s.open();
  auto r = http(n.port, "DELETE", "/v1/spaces/t/objects/c");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto ev = next_event(s);
  EXPECT_EQ(ev.at("versionId"), "");
  EXPECT_EQ(list(ev, "removed"),
            json::parse(R"([{"id":"a","reason":"deleted"},{"id":"b","reason":"deleted"}])"));
  auto closed = s.next();
  ASSERT_TRUE(closed);
  EXPECT_EQ(closed->raw, "event: closed\ndata: {\"reason\":\"object_deleted\"}");
  EXPECT_TRUE(s.client().saw_last_chunk() || !s.next(1s));
}

TEST(WindowedStream, AnArrivalBeforeAnOffsetWindowShiftsItExactly) {
  node_with n;
  for (int i : {10, 20, 30, 40, 50}) {
    put(n.port, "c", "m" + std::to_string(i), R"({"n":)" + std::to_string(i) + "}");
  }
  windowed_stream s{n.port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":2,"offset":2})"};
  EXPECT_EQ(ids_of(s.open().at("records")), (std::vector<std::string>{"m30", "m40"}));
  // n=5 sorts before the offset: the window becomes [m20, m30] (a fresh query's answer).
  put(n.port, "c", "m5", R"({"n":5})");
  auto ev = next_event(s);
  auto added = list(ev, "added");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].as_object().at("id"), "m20");
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"m40","reason":"displaced"}])"));
  // A departure before the offset shifts it back.
  del(n.port, "c", "m10");
  ev = next_event(s);
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"m20","reason":"displaced"}])"));
  EXPECT_EQ(list(ev, "added").size(), 1u);
  auto q = windowed_query(n.port, "t", "object",
                          R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":2,"offset":2})");
  EXPECT_EQ(by_record_id(q.json().as_object().at("records")), s.window());
}

TEST(WindowedStream, ProjectionShapesSnapshotDocsAndOps) {
  node_with n;
  put(n.port, "c", "a", R"({"n":1,"title":"A","secret":"x","meta":{"k":1,"hidden":2}})");
  windowed_stream s{n.port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["n"],"limit":5,)"
                    R"("projection":{"title":1,"meta":1,"meta.hidden":0}})"};
  auto snap = s.open();
  auto& rec = snap.at("records").as_array().at(0).as_object();
  EXPECT_EQ(rec.at("title"), "A");
  EXPECT_EQ(rec.at("meta"), json::parse(R"({"k":1})"));
  EXPECT_FALSE(rec.contains("secret"));
  EXPECT_FALSE(rec.contains("n"));  // sorted by n, yet not shown
  EXPECT_TRUE(rec.contains("_ver"));
  patch(n.port, "c", "a", R"({"$set":{"secret":"y","title":"B","meta.hidden":3}})");
  auto ev = next_event(s);
  auto up = list(ev, "updated");
  ASSERT_EQ(up.size(), 1u);
  auto& u = up[0].as_object();
  EXPECT_FALSE(u.at("doc").as_object().contains("secret"));
  EXPECT_EQ(u.at("ops"), json::parse(R"([{"type":"$set","path":["title"],"payload":"B"}])"));
  // A write wholly outside the projection: the doc changed (_ver), the ops went.
  patch(n.port, "c", "a", R"({"$set":{"secret":"z"}})");
  ev = next_event(s);
  up = list(ev, "updated");
  ASSERT_EQ(up.size(), 1u);
  EXPECT_FALSE(up[0].as_object().contains("ops"));
  // A create's root multi-set is filtered per key.
  put(n.port, "c", "b", R"({"n":2,"title":"T","secret":"s"})");
  ev = next_event(s);
  auto added = list(ev, "added");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].as_object().at("ops"),
            json::parse(R"([{"type":"$set","path":[],"payload":{"title":"T"}}])"));
}

TEST(WindowedStream, KeepaliveCommentsInSilence) {
  node_with n{"windowed: { keepAliveMs: 150 }"};
  put(n.port, "c", "a", R"({"n":1})");
  windowed_stream s{n.port, "t", "object", R"({"objectId":"c","dataset":"msgs"})"};
  s.open();
  auto c = s.next(2s, true);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->raw, ": keepalive");
  EXPECT_EQ(c->event, "");
}

// Object c's top record by -n, after a seed record, with a mailbox of 16 events.
windowed_stream open_top_one_with_a_small_mailbox(std::uint16_t port) {
  put(port, "c", "seed", R"({"n":0})");
  windowed_stream s{port, "t", "object",
                    R"({"objectId":"c","dataset":"msgs","sort":["-n"],"limit":1,)"
                    R"("mailboxCapacity":16})"};
  s.open();
  return s;
}

// 120 records of 200 KiB into object c, r1..r120 with n = i, by four writers at once (the group
// commit shares their fsyncs): enough to fill the socket buffers of a client that reads nothing.
void write_120_big_records(std::uint16_t port) {
  const std::string blob(200 * 1024, 'x');
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 1 + w; i <= 120; i += 4) {
        put(port, "c", "r" + std::to_string(i),
            R"({"n":)" + std::to_string(i) + R"(,"blob":")" + blob + "\"}");
      }
    });
  }
  for (auto& t : writers) {
    t.join();
  }
}

TEST(WindowedStream, AStalledReaderOverflowsItsMailboxAndIsClosedWithOverflow) {
  node_with n;
  windowed_stream s = open_top_one_with_a_small_mailbox(n.port);
  // The client reads nothing while big writes pile up: the socket buffers fill, then the
  // mailbox (16 events).
  write_120_big_records(n.port);
  // Now read on: what the buffers held, then `closed{overflow}` and the end.
  std::optional<std::string> reason;
  int frames = 0;
  while (auto f = s.next(5s)) {
    s.apply(*f);
    ++frames;
    if (f->event == "closed") {
      reason = s.closed_reason();
      break;
    }
  }
  ASSERT_TRUE(reason) << "no closed frame after " << frames << " frames";
  EXPECT_EQ(*reason, "overflow");
  EXPECT_LT(frames, 120);
  // The node is fine: a new subscription starts from a fresh snapshot.
  windowed_stream again{n.port, "t", "object",
                        R"({"objectId":"c","dataset":"msgs","sort":["-n"],"limit":1})"};
  EXPECT_EQ(ids_of(again.open().at("records")), (std::vector<std::string>{"r120"}));
}

/// The node's windowed streams, from its /metrics.
int windowed_connections(std::uint16_t port) {
  auto body = http(port, "GET", "/metrics").body;
  const std::string name = "weir_connections{transport=\"windowed\"} ";
  auto at = body.find("\n" + name);
  return at == std::string::npos ? -1 : std::stoi(body.substr(at + 1 + name.size()));
}

TEST(WindowedStream, AClientThatStopsReadingIsCutOffAfterTheCloseDeadline) {
  // Once `closed` is decided the stream has windowed.closeDeadlineMs to deliver it; a client
  // that reads nothing cannot hold the session (or a draining node) longer.
  node_with n{"windowed:\n  closeDeadlineMs: 300\n"};
  windowed_stream s = open_top_one_with_a_small_mailbox(n.port);
  write_120_big_records(n.port);
  // The mailbox overflowed while the writers ran; the client reads nothing until the node has
  // dropped the stream (its gauge says so), which the deadline bounds.
  const auto start = std::chrono::steady_clock::now();
  while (windowed_connections(n.port) != 0 && std::chrono::steady_clock::now() - start < 10s) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(windowed_connections(n.port), 0) << "the stream outlived its close deadline by 10 s";
  int frames = 0;
  while (auto f = s.next(5s)) {
    ++frames;
    EXPECT_NE(f->event, "closed") << "the closed frame was still delivered";
  }
  EXPECT_TRUE(s.client().ended()) << "the connection is still open after " << frames << " frames";
  EXPECT_FALSE(s.client().saw_last_chunk());
}

TEST(WindowedStream, ObjectsRowsCarryModifiedAtAndSortByIt) {
  node_with n;
  for (auto o : {"p1", "p2", "p3"}) {
    auto r = http(n.port, "PUT", std::string{"/v1/spaces/t/objects/"} + o, R"({"kind":"page"})");
    ASSERT_EQ(r.status, 200u);
  }
  windowed_stream s{n.port, "t", "objects",
                    R"({"sort":["-modifiedAt"],"limit":2,"filter":{"kind":"page"}})"};
  auto snap = s.open();
  EXPECT_EQ(ids_of(snap.at("records")), (std::vector<std::string>{"p3", "p2"}));
  for (auto& r : snap.at("records").as_array()) {
    EXPECT_TRUE(r.as_object().at("modifiedAt").is_int64());
  }
  // Writing p1 makes it the most recently changed object.
  http(n.port, "PUT", "/v1/spaces/t/objects/p1", R"({"kind":"page","title":"new"})");
  auto ev = next_event(s);
  auto added = list(ev, "added");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].as_object().at("id"), "p1");
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"p2","reason":"displaced"}])"));
  // Deleting an object: a synthetic removal on the objects stream, which stays open.
  http(n.port, "DELETE", "/v1/spaces/t/objects/p1");
  ev = next_event(s);
  EXPECT_EQ(ev.at("versionId"), "");
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"p1","reason":"deleted"}])"));
  EXPECT_EQ(list(ev, "added").size(), 1u);  // p2 backfills
  EXPECT_FALSE(s.closed_reason());
}

TEST(WindowedStream, SpaceWideDatasetMergesEveryObjectsRows) {
  node_with n;
  put(n.port, "a", "1", R"({"n":1})");
  put(n.port, "b", "1", R"({"n":5})");
  windowed_stream s{n.port, "t", "datasets",
                    R"({"dataset":"msgs","sort":["-n"],"limit":2,"includeTotal":true})"};
  auto snap = s.open();
  EXPECT_EQ(ids_of(snap.at("records")), (std::vector<std::string>{"b/1", "a/1"}));
  EXPECT_EQ(snap.at("total"), 2);
  // A new object joins the merge with its first record.
  put(n.port, "c", "1", R"({"n":3})");
  auto ev = next_event(s);
  auto added = list(ev, "added");
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].as_object().at("id"), "c/1");
  EXPECT_EQ(added[0].as_object().at("doc").as_object().at("id"), "c/1");
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"a/1","reason":"displaced"}])"));
  // Deleting an object: its rows leave with versionId "", the stream stays, the window refills.
  http(n.port, "DELETE", "/v1/spaces/t/objects/b");
  ev = next_event(s);
  EXPECT_EQ(ev.at("versionId"), "");
  EXPECT_EQ(list(ev, "removed"), json::parse(R"([{"id":"b/1","reason":"deleted"}])"));
  ASSERT_EQ(list(ev, "added").size(), 1u);
  EXPECT_FALSE(s.closed_reason());
  auto q = windowed_query(n.port, "t", "datasets", R"({"dataset":"msgs","sort":["-n"],"limit":2})");
  EXPECT_EQ(by_record_id(q.json().as_object().at("records")), s.window());
}

// A space-wide window loads and holds every object's unit it merges: past
// windowed.maxObjectsPerSpaceWindow it is refused before any is loaded, and an open one whose
// dataset grows past it ends.
TEST(WindowedStream, ASpaceWideWindowMergesNoMoreObjectsThanTheNodeAllows) {
  node_with n{"windowed: { maxObjectsPerSpaceWindow: 3 }"};
  for (const char* o : {"a", "b", "c"}) {
    put(n.port, o, "1", R"({"n":1})");
  }
  const std::string body = R"({"dataset":"msgs","sort":["n"],"limit":10})";
  windowed_stream s{n.port, "t", "datasets", body};
  EXPECT_EQ(s.open().at("records").as_array().size(), 3u);
  put(n.port, "d", "1", R"({"n":1})");  // a fourth object joins: past the bound
  for (auto until = std::chrono::steady_clock::now() + 5s;
       !s.closed_reason() && std::chrono::steady_clock::now() < until;) {
    if (auto f = s.next(500ms)) {
      s.apply(*f);
    }
  }
  EXPECT_EQ(s.closed_reason(), std::optional<std::string>{"server_shutdown"});
  // Subscribing again, and the snapshot twin: refused, naming the bound.
  for (bool stream : {true, false}) {
    SCOPED_TRACE(stream ? "subscribe" : "query");
    unsigned status = 0;
    json::value err;
    for (auto until = std::chrono::steady_clock::now() + 5s;
         status != 503u && std::chrono::steady_clock::now() < until;) {
      if (stream) {
        windowed_stream again{n.port, "t", "datasets", body};
        status = again.status();
        err = status == 503u ? again.error_body() : json::value{};
      } else {
        auto q = windowed_query(n.port, "t", "datasets", body);
        status = q.status;
        err = status == 503u ? q.json() : json::value{};
      }
    }
    ASSERT_EQ(status, 503u);
    EXPECT_EQ(err.at("error").at("code"), "query.too_many_objects") << json::serialize(err);
    EXPECT_NE(std::string{err.at("error").at("message").as_string()}.find(
                  "windowed.maxObjectsPerSpaceWindow"),
              std::string::npos);
  }
  // One object's own dataset is not bounded by it.
  auto one = windowed_query(n.port, "t", "object", R"({"objectId":"d","dataset":"msgs"})");
  EXPECT_EQ(one.status, 200u);
}

TEST(WindowedStream, SpaceWideIdsEscapeObjectIdsVersionIdsGrowAndTotalsStayExact) {
  node_with n;
  put(n.port, "a%2Fb", "c", R"({"n":1})");  // object "a/b", record "c"
  put(n.port, "a", "b%2Fc", R"({"n":2})");  // object "a", record "b/c"
  const std::string body = R"({"dataset":"msgs","sort":["n"],"includeTotal":true})";
  windowed_stream s{n.port, "t", "datasets", body};
  auto snap = s.open();
  EXPECT_EQ(ids_of(snap.at("records")), (std::vector<std::string>{"a%2Fb/c", "a/b/c"}));
  EXPECT_EQ(snap.at("total"), 2);
  put(n.port, "z", "1", R"({"n":3})");
  auto first = next_event(s);
  EXPECT_EQ(list(first, "added").size(), 1u);
  put(n.port, "a", "x", R"({"n":4})");  // a second record of an object already merged
  auto second = next_event(s);
  EXPECT_EQ(list(second, "added").size(), 1u);
  // The merged stream's own sequence: non-empty, and growing in byte order.
  auto v1 = std::string{first.at("versionId").as_string()};
  auto v2 = std::string{second.at("versionId").as_string()};
  EXPECT_FALSE(v1.empty());
  EXPECT_LT(v1, v2);
  // The snapshot twin shares the live view: its total counts every write so far.
  auto q = windowed_query(n.port, "t", "datasets", body);
  ASSERT_EQ(q.status, 200u) << q.body;
  EXPECT_EQ(q.json().as_object().at("total"), 4);
  EXPECT_EQ(by_record_id(q.json().as_object().at("records")), s.window());
}

TEST(WindowedStream, Http10StreamIsNotChunkedAndEndsWithTheConnection) {
  node_with n;
  put(n.port, "c", "m1", R"({"text":"one"})");
  const std::string body = R"({"objectId":"c","dataset":"msgs"})";
  raw_connection c{n.port};
  c.send_all(
      "POST /v1/spaces/t/query/subscribe HTTP/1.0\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (c.pending().find("event: snapshot") == std::string::npos ||
         !c.pending().ends_with("\n\n")) {
    ASSERT_TRUE(c.fill(deadline)) << c.pending();
  }
  auto end_of_head = c.pending().find("\r\n\r\n");
  ASSERT_NE(end_of_head, std::string::npos);
  auto head = c.pending().substr(0, end_of_head);
  EXPECT_TRUE(head.starts_with("HTTP/1.0 200")) << head;
  EXPECT_EQ(head.find("chunked"), std::string::npos) << head;
  EXPECT_EQ(head.find("keep-alive"), std::string::npos) << head;
  // The body is the frames themselves, no chunk-size lines.
  EXPECT_TRUE(c.pending().substr(end_of_head + 4).starts_with("event: ready\ndata: {}\n\n"))
      << c.pending();
  // Deleting the object closes the stream: `closed`, then the connection ends.
  http(n.port, "DELETE", "/v1/spaces/t/objects/c");
  deadline = std::chrono::steady_clock::now() + 5s;
  while (!c.eof()) {
    c.fill(deadline);
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << c.pending();
  }
  EXPECT_TRUE(c.pending().ends_with("event: closed\ndata: {\"reason\":\"object_deleted\"}\n\n"))
      << c.pending();
}

// Registration and snapshot are atomic against the write path (windowed-subscribe §4): streams
// opened while writes are being applied neither miss a write nor see one twice. A doubled event
// shows as an `added` for a row the window already holds (or a `removed` for one it does not);
// a missed one as an `updated` for a row it does not hold, or as a window that differs from a
// fresh query once the writes are done.
TEST(WindowedStream, StreamsOpenedDuringWritesMissAndDoubleNothing) {
  node_with n;
  put(n.port, "c", "seed", R"({"n":-1,"v":0})");  // the space exists before the first stream
  constexpr int writes = 240;
  std::atomic<bool> writing{true};
  std::thread writer{[&] {
    for (int i = 0; i < writes; ++i) {
      put(n.port, "c", "m" + std::to_string(i), R"({"n":)" + std::to_string(i) + R"(,"v":0})");
      if (i % 3 == 2) {
        // An update of an earlier row: it reaches windows as `updated` (or moves a bounded one).
        patch(n.port, "c", "m" + std::to_string(i / 2), R"({"$inc":{"v":1}})");
      }
    }
    writing = false;
  }};
  const std::vector<std::string> bodies = {
      R"({"objectId":"c","dataset":"msgs","sort":["n"]})",
      R"({"objectId":"c","dataset":"msgs","sort":["-n"],"limit":5})",
      R"({"objectId":"c","dataset":"msgs","sort":["-v","n"],"limit":7,"offset":2})",
  };
  std::vector<std::unique_ptr<windowed_stream>> streams;
  std::vector<std::string> stream_body;
  // Streams open while the writer runs, each on its own connection, a few milliseconds apart.
  for (int k = 0; writing && k < 12; ++k) {
    const auto& body = bodies[k % bodies.size()];
    streams.push_back(std::make_unique<windowed_stream>(n.port, "t", "object", body));
    stream_body.push_back(body);
    streams.back()->open();
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
  }
  writer.join();
  ASSERT_GE(streams.size(), 3u) << "the writes ended before the streams opened; nothing tested";
  for (std::size_t k = 0; k < streams.size(); ++k) {
    auto& s = *streams[k];
    auto fresh = windowed_query(n.port, "t", "object", stream_body[k]);
    ASSERT_EQ(fresh.status, 200u) << fresh.body;
    auto expect = by_record_id(fresh.json().as_object().at("records"));
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (s.window() != expect && std::chrono::steady_clock::now() < deadline) {
      auto f = s.next(1s);
      if (!f) {
        continue;
      }
      ASSERT_EQ(f->event, "changes") << f->raw;
      for (const auto& ev : f->data.as_array()) {
        const auto& e = ev.as_object();
        for (const auto& r : list(e, "added")) {
          EXPECT_FALSE(s.window().contains(std::string{r.as_object().at("id").as_string()}))
              << "stream " << k << " got an add twice: " << f->raw;
        }
        for (const auto& r : list(e, "updated")) {
          EXPECT_TRUE(s.window().contains(std::string{r.as_object().at("id").as_string()}))
              << "stream " << k << " missed a row it now updates: " << f->raw;
        }
        for (const auto& r : list(e, "removed")) {
          EXPECT_TRUE(s.window().contains(std::string{r.as_object().at("id").as_string()}))
              << "stream " << k << " removes a row it never had: " << f->raw;
        }
      }
      s.apply(*f);
    }
    EXPECT_EQ(s.window(), expect) << "stream " << k << " (" << stream_body[k] << ")";
    // Nothing follows: no event was left over to arrive late (a doubled one would).
    auto extra = s.next(200ms);
    EXPECT_FALSE(extra) << "stream " << k << ": " << extra->raw;
  }
}

}  // namespace
}  // namespace weir::test

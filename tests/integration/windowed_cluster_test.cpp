// Windowed streams in a three-node cluster (windowed-subscribe Decision 5): a gateway holds only
// the window it serves, never the owner's rows; a stream whose owner dies ends with
// `closed{server_shutdown}` at once and a new one is refused with 503 while it stays down; the
// space-wide dataset ends the same way when any member's share is lost; a draining node closes
// its own streams with `server_shutdown`; and an object deleted on its owner is refused (410)
// through any member.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "cluster_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;
using clock_type = std::chrono::steady_clock;

std::int64_t held_bytes(cluster3& cl, int i) {
  auto m = cl.member(i, i);
  auto* v = m.if_contains("heldRowBytes");
  return v && v->is_number() ? v->to_number<std::int64_t>() : -1;
}

TEST(WindowedCluster, AGatewayHoldsOnlyTheWindowItServes) {
  cluster3 cl;
  const int gw = 0, owner = 2;
  auto obj = cl.object_owned_by(owner, "big");
  // 3000 rows on the owner, written through the batch API on the gateway.
  for (int b = 0; b < 3; ++b) {
    json::array up;
    for (int i = 0; i < 1000; ++i) {
      json::object r;
      r["id"] = "r" + std::to_string(b * 1000 + i);
      r["n"] = b * 1000 + i;
      r["text"] = std::string(40, 'x');
      up.push_back(std::move(r));
    }
    json::object body;
    body["upsert"] = std::move(up);
    auto res = http(cl.port(gw), "POST", "/v1/spaces/t/objects/" + obj + "/datasets/msgs/records",
                    json::serialize(body), {{"Content-Type", "application/json"}});
    ASSERT_EQ(res.status, 200u) << res.body;
  }
  auto before = held_bytes(cl, gw);
  windowed_stream s{cl.port(gw), "t", "object",
                    R"({"objectId":")" + obj + R"(","dataset":"msgs","sort":["-n"],"limit":10})"};
  auto snap = s.open();
  ASSERT_EQ(snap.at("records").as_array().size(), 10u);
  EXPECT_EQ(snap.at("records").as_array()[0].as_object().at("id"), "r2999");
  // The gateway's held rows: the window of 10 (about 80 bytes each), not the owner's 3000.
  std::int64_t gateway = -1;
  ASSERT_TRUE(cl.wait_member(gw, gw, [&](const json::object&) {
    gateway = held_bytes(cl, gw) - before;
    return gateway > 0;
  }));
  std::printf("[ windowed ] gateway holds %lld bytes for a window of 10 over 3000 rows\n",
              static_cast<long long>(gateway));
  EXPECT_LT(gateway, 10 * 200);
  // The window follows a write through the owner: backfilled exactly, still 10 rows.
  auto r =
      http(cl.port(1), "DELETE", "/v1/spaces/t/objects/" + obj + "/datasets/msgs/records/r2995");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto f = s.next();
  ASSERT_TRUE(f);
  s.apply(*f);
  EXPECT_EQ(s.window().size(), 10u);
  EXPECT_TRUE(s.window().count("r2989"));
}

TEST(WindowedCluster, AMemberWhosePartIsPastTheObjectBoundRefusesTheWindowWithItsReason) {
  // Each member counts its own objects: the gateway holds none, a member holds three with a
  // bound of two, and the gateway's window is refused with that member's reason and code.
  cluster3 cl{"", true, "windowed: { maxObjectsPerSpaceWindow: 2 }\n"};
  const int gw = 0, owner = 1;
  for (const char* name : {"a", "b", "c"}) {
    put_record(cl.port(gw), "t", cl.object_owned_by(owner, name), "msgs", "r", R"({"n":1})");
  }
  const std::string body = R"({"dataset":"msgs","sort":["n"],"limit":5})";
  windowed_stream merged{cl.port(gw), "t", "datasets", body};
  ASSERT_EQ(merged.status(), 503u) << merged.client().response().body;
  auto err = merged.error_body().as_object()["error"].as_object();
  EXPECT_EQ(err["code"], "query.too_many_objects") << json::serialize(err);
  // Two objects on a member are within it.
  for (const char* name : {"a", "b"}) {
    put_record(cl.port(gw), "t", cl.object_owned_by(owner, name), "pair", "r", R"({"n":1})");
  }
  windowed_stream pair{cl.port(gw), "t", "datasets",
                       R"({"dataset":"pair","sort":["n"],"limit":5})"};
  ASSERT_EQ(pair.status(), 200u) << pair.client().response().body;
  EXPECT_EQ(pair.open().at("records").as_array().size(), 2u);
}

TEST(WindowedCluster, AStreamWhoseOwnerDiesEndsWithServerShutdown) {
  cluster3 cl;
  const int gw = 0, owner = 2;
  auto obj = cl.object_owned_by(owner, "o");
  put_record(cl.port(gw), "t", obj, "msgs", "a", R"({"n":1})");
  auto other = cl.object_owned_by(1, "p");
  put_record(cl.port(gw), "t", other, "msgs", "b", R"({"n":2})");
  windowed_stream s{cl.port(gw), "t", "object",
                    R"({"objectId":")" + obj + R"(","dataset":"msgs","sort":["n"],"limit":5})"};
  s.open();
  windowed_stream merged{cl.port(gw), "t", "datasets",
                         R"({"dataset":"msgs","sort":["n"],"limit":5})"};
  EXPECT_EQ(merged.open().at("records").as_array().size(), 2u);
  auto killed = clock_type::now();
  cl.kill(owner);
  for (auto* stream : {&s, &merged}) {
    std::optional<windowed_frame> f;
    while ((f = stream->next(10s)) && f->event != "closed") {
      stream->apply(*f);
    }
    ASSERT_TRUE(f) << "no closed frame";
    EXPECT_EQ(f->raw, "event: closed\ndata: {\"reason\":\"server_shutdown\"}");
  }
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - killed);
  std::printf("[ windowed ] streams of a dead owner closed after %lld ms\n",
              static_cast<long long>(took.count()));
  EXPECT_LT(took, 5s);
  // While it is down a new stream is refused before it opens, and the client retries.
  ASSERT_TRUE(cl.wait_state(gw, owner, "down", 5s));
  windowed_stream again{cl.port(gw), "t", "object",
                        R"({"objectId":")" + obj + R"(","dataset":"msgs","sort":["n"],"limit":5})"};
  EXPECT_EQ(again.status(), 503u);
  EXPECT_EQ(again.error_body().at("error").at("code"), "cluster.owner_unavailable");
  // Back up: a new stream opens on the owner's data.
  cl.start(owner);
  ASSERT_TRUE(cl.wait_state(gw, owner, "up", 15s));
  auto deadline = clock_type::now() + 10s;
  for (;;) {
    windowed_stream back{
        cl.port(gw), "t", "object",
        R"({"objectId":")" + obj + R"(","dataset":"msgs","sort":["n"],"limit":5})"};
    if (back.status() == 200) {
      EXPECT_EQ(back.open().at("records").as_array().size(), 1u);
      break;
    }
    ASSERT_LT(clock_type::now(), deadline) << back.client().response().body;
    std::this_thread::sleep_for(100ms);
  }
}

TEST(WindowedCluster, ADrainingNodeClosesItsStreamsWithServerShutdown) {
  cluster3 cl;
  auto obj = cl.object_owned_by(1, "d");
  put_record(cl.port(0), "t", obj, "msgs", "a", R"({"n":1})");
  windowed_stream s{cl.port(0), "t", "object", R"({"objectId":")" + obj + R"(","dataset":"msgs"})"};
  s.open();
  std::thread term{[&] { cl.proc(0).terminate(15s); }};
  std::optional<windowed_frame> f;
  while ((f = s.next(10s)) && f->event != "closed") {
  }
  term.join();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->raw, "event: closed\ndata: {\"reason\":\"server_shutdown\"}");
}

TEST(WindowedCluster, ADeletedObjectIsRefusedThroughAnyMember) {
  cluster3 cl;
  auto obj = cl.object_owned_by(2, "g");
  put_record(cl.port(0), "t", obj, "msgs", "a", R"({"n":1})");
  windowed_stream s{cl.port(1), "t", "object", R"({"objectId":")" + obj + R"(","dataset":"msgs"})"};
  s.open();
  auto r = http(cl.port(0), "DELETE", "/v1/spaces/t/objects/" + obj);
  ASSERT_EQ(r.status, 200u) << r.body;
  std::optional<windowed_frame> f;
  while ((f = s.next()) && f->event != "closed") {
    s.apply(*f);
  }
  ASSERT_TRUE(f);
  s.apply(*f);
  ASSERT_TRUE(s.closed_reason());
  EXPECT_EQ(*s.closed_reason(), "object_deleted");
  EXPECT_TRUE(s.window().empty());
  for (int i = 0; i < 3; ++i) {
    auto q = windowed_query(cl.port(i), "t", "object",
                            R"({"objectId":")" + obj + R"(","dataset":"msgs"})");
    EXPECT_EQ(q.status, 410u) << q.body;
    EXPECT_EQ(q.json().at("error").at("code"), "object.deleted");
  }
  // A space that nothing was ever written to is unknown on every member; "t" is known on all.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(windowed_query(cl.port(i), "nowhere", "objects", "{}").status, 404u);
    EXPECT_EQ(windowed_query(cl.port(i), "t", "objects", "{}").status, 200u);
  }
}

}  // namespace
}  // namespace weir::test

// A window on a sort the dataset has no index for, over enough records that the index is built
// on a loader thread (from 16,384 records): the unit's writes are answered while it builds,
// and the window that opens on it is exact — the writes published during the build are in the
// index, and its changes go on from there.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <boost/json.hpp>

#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

constexpr int seeded = 40000;

void seed(std::uint16_t port) {
  constexpr int per_batch = 10000;
  for (int from = 0; from < seeded; from += per_batch) {
    json::array upsert;
    for (int i = from; i < from + per_batch; ++i) {
      upsert.push_back(json::object{{"id", "r" + std::to_string(i)}, {"n", i}});
    }
    auto r = http(port, "POST", "/v1/spaces/t/objects/c/datasets/items/records",
                  json::serialize(json::object{{"upsert", std::move(upsert)}}),
                  {{"Content-Type", "application/json"}});
    ASSERT_EQ(r.status, 200u) << r.body;
  }
}

std::vector<std::string> ids_of(const std::map<std::string, json::value>& window) {
  std::vector<std::string> out;
  for (auto& [id, doc] : window) {
    out.push_back(id);
  }
  return out;
}

TEST(IndexBuild, WritesDuringABuildAreAnsweredAndInTheWindowThatOpensOnIt) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  seed(port);

  // The writer keeps writing from before the subscribe until after its window opened, so writes
  // are published while the index builds (the build lies between the two).
  std::atomic<bool> go{false}, opened{false};
  int written = 0;
  std::thread writer([&] {
    while (!go) {
      std::this_thread::yield();
    }
    for (int extra = 0; extra < 5; ++written) {
      put_record(port, "t", "c", "items", "w" + std::to_string(written),
                 R"({"n":)" + std::to_string(100000 + written) + "}");
      if (opened) {
        ++extra;
      }
    }
    auto last = "w" + std::to_string(written - 1);
    auto d = http(port, "DELETE", "/v1/spaces/t/objects/c/datasets/items/records/" + last);
    EXPECT_EQ(d.status, 200u) << d.body;
    put_record(port, "t", "c", "items", "w" + std::to_string(written - 2),
               R"({"n":-1})");  // moves to the other end
  });
  go = true;
  windowed_stream s{port, "t", "object",
                    R"({"objectId":"c","dataset":"items","sort":["-n"],"limit":3})"};
  ASSERT_EQ(s.status(), 200u) << s.client().response().body;
  s.open(30s);
  opened = true;
  writer.join();
  std::vector<std::string> top;  // in id order, as ids_of gives them
  for (int i = written - 5; i <= written - 3; ++i) {
    top.push_back("w" + std::to_string(i));
  }
  std::sort(top.begin(), top.end());
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       ids_of(s.window()) != top && std::chrono::steady_clock::now() < deadline;) {
    if (auto f = s.next(500ms)) {
      s.apply(*f);
    }
  }
  EXPECT_EQ(ids_of(s.window()), top);
  // Every write is in the index, those published during the build included: a count over it
  // (a new window with a filter counts by walking the index) finds them all.
  auto fresh = windowed_query(
      port, "t", "object",
      R"({"objectId":"c","dataset":"items","sort":["-n"],"limit":3,"includeTotal":true,)"
      R"("filter":{"n":{"$gte":100000}}})");
  ASSERT_EQ(fresh.status, 200u) << fresh.body;
  auto body = fresh.json().as_object();
  EXPECT_EQ(ids_of(by_record_id(body["records"])), top);
  EXPECT_EQ(body["total"].to_number<int>(), written - 2) << written << " writes";
  // The other end of the same order: w(written-2) moved there.
  auto low = windowed_query(port, "t", "object",
                            R"({"objectId":"c","dataset":"items","sort":["-n"],"offset":)" +
                                std::to_string(seeded + written - 4) + R"(,"limit":5})");
  ASSERT_EQ(low.status, 200u) << low.body;
  std::vector<std::string> bottom{"r0", "r1", "w" + std::to_string(written - 2)};
  std::sort(bottom.begin(), bottom.end());
  EXPECT_EQ(ids_of(by_record_id(low.json().as_object()["records"])), bottom);
  // A second sort is built from the first one's index (not the record set): every record,
  // those the first build journaled included, is in it.
  auto asc = windowed_query(
      port, "t", "object",
      R"({"objectId":"c","dataset":"items","sort":["n"],"limit":2,"includeTotal":true})");
  ASSERT_EQ(asc.status, 200u) << asc.body;
  auto asc_body = asc.json().as_object();
  std::vector<std::string> first_two{"r0", "w" + std::to_string(written - 2)};
  std::sort(first_two.begin(), first_two.end());
  EXPECT_EQ(ids_of(by_record_id(asc_body["records"])), first_two);
  EXPECT_EQ(asc_body["total"].to_number<int>(), seeded + written - 1);
}

}  // namespace
}  // namespace weir::test

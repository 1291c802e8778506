// The number of matches of a paged query's filter (Arc paging's totalItems) is kept by the unit
// after the page's window closes, so the next page opens without counting every record again.
// What is kept must stay exact: every write after it (a new match, a match that stops matching,
// a delete, a record that never matched) moves it as a fresh count would.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

/// totalItems of a by-color page (an HTTP snapshot: its window closes once answered).
std::uint64_t total_items(std::uint16_t port, const std::string& color, int page) {
  auto r = http(
      port, "GET",
      "/api/t/items/by-color?obj=o1&color=" + color + "&pageSize=2&page=" + std::to_string(page));
  EXPECT_EQ(r.status, 200u) << r.body;
  auto body = r.json().as_object();
  return body["paging"].as_object()["totalItems"].to_number<std::uint64_t>();
}

void put_item(std::uint16_t port, const std::string& id, const std::string& color, int n) {
  put_record(port, "t", "o1", "items", id,
             R"({"color":")" + color + R"(","n":)" + std::to_string(n) + "}");
}

TEST(PagedCount, AKeptCountFollowsEveryWriteAfterItsWindowClosed) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  for (int i = 0; i < 5; ++i) {
    put_item(port, "r" + std::to_string(i), i % 2 ? "blue" : "red", i);
  }
  EXPECT_EQ(total_items(port, "red", 0), 3u);  // r0 r2 r4: counted, then kept
  put_item(port, "r5", "red", 5);              // a new match
  EXPECT_EQ(total_items(port, "red", 1), 4u);
  put_item(port, "r0", "blue", 0);  // a match that stops matching
  EXPECT_EQ(total_items(port, "red", 0), 3u);
  put_item(port, "r1", "green", 1);  // never matched
  EXPECT_EQ(total_items(port, "red", 1), 3u);
  auto d = http(port, "DELETE", "/v1/spaces/t/objects/o1/datasets/items/records/r2");
  ASSERT_EQ(d.status, 200u) << d.body;
  EXPECT_EQ(total_items(port, "red", 0), 2u);
  put_item(port, "r1", "red", 1);  // starts matching
  EXPECT_EQ(total_items(port, "red", 1), 3u);
  // Another filter's count is its own.
  EXPECT_EQ(total_items(port, "blue", 0), 2u);  // r0 r3
  put_item(port, "r3", "red", 3);
  EXPECT_EQ(total_items(port, "blue", 0), 1u);
  EXPECT_EQ(total_items(port, "red", 0), 4u);
  // After the object's deletion nothing matches until written again.
  auto del = http(port, "DELETE", "/v1/spaces/t/objects/o1");
  ASSERT_EQ(del.status, 200u) << del.body;
  put_item(port, "z", "red", 9);
  EXPECT_EQ(total_items(port, "red", 0), 1u);
}

TEST(PagedCount, ACountTakenOnALoaderThreadCountsTheWritesMadeMeanwhile) {
  // From 16,384 records a filter's first count runs on a loader thread while the unit goes on
  // taking writes; what they publish meanwhile must move the count it brings back.
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  constexpr int records = 40000;
  int red = 0;
  for (int b = 0; b < records / 5000; ++b) {
    json::array upsert;
    for (int i = b * 5000; i < (b + 1) * 5000; ++i) {
      bool is_red = i % 2 == 0;
      red += is_red ? 1 : 0;
      upsert.push_back(json::object{
          {"id", "r" + std::to_string(i)}, {"color", is_red ? "red" : "blue"}, {"n", i}});
    }
    auto r = http(port, "POST", "/v1/spaces/t/objects/o1/datasets/items/records",
                  json::serialize(json::object{{"upsert", upsert}}));
    ASSERT_EQ(r.status, 200u) << r.body;
  }
  // Blue records turn red, pipelined on one connection, while the first page is counted: every
  // write only adds matches, so a count that missed some of them would be short.
  constexpr int flips = 3000;
  std::string burst;
  for (int k = 0; k < flips; ++k) {
    int i = 2 * k + 1;
    burst += build_request(
        port, "PUT", "/v1/spaces/t/objects/o1/datasets/items/records/r" + std::to_string(i),
        {{"Content-Type", "application/json"}}, R"({"color":"red","n":)" + std::to_string(i) + "}");
  }
  raw_connection c{port};
  ASSERT_TRUE(c.connected());
  std::thread writer{[&] {
    c.send_all(burst);
    for (int k = 0; k < flips; ++k) {
      auto r = read_response(c, false, 30s);
      ASSERT_EQ(r.status, 200u) << r.body;
    }
  }};
  auto during = total_items(port, "red", 0);  // counted while the flips arrive
  writer.join();
  EXPECT_GE(during, static_cast<std::uint64_t>(red));
  EXPECT_LE(during, static_cast<std::uint64_t>(red + flips));
  // The kept count, with every flip in it.
  EXPECT_EQ(total_items(port, "red", 1), static_cast<std::uint64_t>(red + flips));
  std::printf("counted %llu red while %d flips arrived (from %d)\n",
              static_cast<unsigned long long>(during), flips, red);
}

}  // namespace
}  // namespace weir::test

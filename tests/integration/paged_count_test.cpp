// The number of matches of a paged query's filter (Arc paging's totalItems) is kept by the unit
// after the page's window closes, so the next page opens without counting every record again.
// What is kept must stay exact: every write after it (a new match, a match that stops matching,
// a delete, a record that never matched) moves it as a fresh count would.
#include <gtest/gtest.h>

#include <string>

#include <boost/json.hpp>

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

}  // namespace
}  // namespace weir::test

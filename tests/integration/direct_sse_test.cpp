// The direct per-query SSE stream on a query's route (arc-hub §10): bare QueryResult events,
// full data on every emission, the stream headers, and 400 for arguments that do not bind.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {

TEST(DirectSse, StreamsBareFullQueryResults) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  sse_client::options o;
  o.target = "/api/t/items?obj=o1";
  o.headers = {{"Accept", "text/event-stream"}};
  sse_client stream{port, o};
  ASSERT_EQ(stream.status(), 200u);
  EXPECT_EQ(stream.header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_EQ(stream.header("cache-control"), "no-cache");
  EXPECT_EQ(stream.header("x-accel-buffering"), "no");
  auto first = stream.read_json();  // a bare QueryResult: no hub envelope, no Connected
  EXPECT_FALSE(first.contains("type"));
  EXPECT_EQ(first["correlationId"], boost::json::value(stream.header("x-correlation-id")));
  ASSERT_EQ(first["data"].as_array().size(), 1u);
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto next = stream.read_json();
  EXPECT_FALSE(next.contains("changeSet"));
  ASSERT_EQ(next["data"].as_array().size(), 2u);
  EXPECT_EQ(next["data"].as_array()[1].as_object()["id"], "b");
}

TEST(DirectSse, AClientThatStopsReadingIsCutOffAndCountedOnce) {
  temp_dir dir;
  auto node = start_node(dir.path(),
                         "query: { maxObservableOutboundFrames: 4, "
                         "maxObservableOutboundFrameBytes: 1048576, "
                         "maxOutboundQueueBytes: 1048576 }");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "r0", R"({"n":0})");
  sse_client::options o;
  o.target = "/api/t/items?obj=o1";
  o.headers = {{"Accept", "text/event-stream"}};
  sse_client stream{port, o};
  ASSERT_EQ(stream.status(), 200u);
  stream.read_json();
  // It reads nothing more; every write sends the whole (growing) result, far more than the
  // socket buffers and the queue bound hold.
  const std::string blob(100 * 1024, 'x');
  for (int i = 1; i <= 40; ++i) {
    put_record(port, "t", "o1", "items", "r" + std::to_string(i),
               R"({"n":)" + std::to_string(i) + R"(,"blob":")" + blob + "\"}");
  }
  // One connection cut off at its bound: counted once, however many frames found it full.
  const std::string series = R"(weir_closes_total{code="1013",reason="outbound_queue_full"} )";
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  do {
    auto m = http(port, "GET", "/metrics").body;
    auto at = m.find("\n" + series);
    ASSERT_NE(at, std::string::npos) << m;
    line = m.substr(at + 1 + series.size(), m.find('\n', at + 1) - at - 1 - series.size());
  } while (line == "0" && std::chrono::steady_clock::now() < deadline &&
           (std::this_thread::sleep_for(std::chrono::milliseconds(50)), true));
  EXPECT_EQ(line, "1");
}

TEST(DirectSse, UnbindableArgumentsAnswer400) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto r = http(node->http_port(), "GET", "/api/t/items/by-color?obj=o1", "",
                {{"Accept", "text/event-stream"}});
  EXPECT_EQ(r.status, 400u);
  auto b = r.json().as_object();
  EXPECT_EQ(b["isValid"], false);
  EXPECT_EQ(b["validationResults"].as_array()[0].as_object()["reason"], "malformedRequest");
}

}  // namespace weir::test

// Frames far larger than a fresh socket's send buffer (~400 KiB each, 3.2 MB left unread for a
// while) arrive whole and in order over WebSocket and SSE: one gather write per batch with
// shared bodies (gateway/write_now). Loopback's socket buffers grow to take these, so the
// kernel rarely takes less than all here; the partial-write fallback itself is driven by the
// slow-client tests (HubLimits.AClientThatStopsReadingIsClosedWithOutboundQueueFull over WS,
// StateStreamLag over SSE), which fail when the unwritten rest is mis-trimmed.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <boost/json/serialize.hpp>

#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

struct LargeFrames : single_node {};

constexpr std::size_t pad_bytes = 400 * 1024;  // well past a fresh socket's ~16 KiB buffer
// 3.2 MB unread: more than loopback's socket buffers hold, under the 4 MiB outbound bound.
constexpr int frames = 8;

std::string big_record(int n) {
  return R"({"n":)" + std::to_string(n) + R"(,"pad":")" + std::string(pad_bytes, 'a' + n % 26) +
         R"("})";
}

/// The record `id` in a delta's change set or a snapshot's data, with its pad intact.
void expect_intact(const boost::json::object& frame, int n) {
  auto text = boost::json::serialize(frame);
  std::string pad(pad_bytes, 'a' + n % 26);
  EXPECT_NE(text.find(R"("n":)" + std::to_string(n)), std::string::npos) << text.substr(0, 200);
  EXPECT_NE(text.find(pad), std::string::npos) << "record " << n << " arrived cut or mixed";
}

TEST_F(LargeFrames, WebSocketFramesLargerThanTheSendBufferArriveWhole) {
  put_record(port, "t", "big", "items", "r0", big_record(0));
  ws_client hub{port};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", "big"}}, 1, "delta");
  expect_intact(hub.read_json(), 0);  // the snapshot: one ~400 KiB frame
  for (int n = 1; n <= frames; ++n) {
    put_record(port, "t", "big", "items", "r" + std::to_string(n), big_record(n));
  }
  // Read late: the frames wait in the kernel's buffers meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  for (int n = 1; n <= frames; ++n) {
    expect_intact(hub.read_json(), n);
  }
}

TEST_F(LargeFrames, SseEventsLargerThanTheSendBufferArriveWhole) {
  put_record(port, "t", "big", "items", "r0", big_record(0));
  sse_client s{port};
  ASSERT_EQ(s.status(), 200u);
  auto id = s.expect_connected();
  auto r = sse_control_post(
      port, "subscribe",
      control_body(id, "q", 1, subscription_request("T.Items.All", {{"obj", "big"}}, "delta")));
  ASSERT_EQ(r.status, 200u) << r.body;
  expect_intact(s.read_json(), 0);
  for (int n = 1; n <= frames; ++n) {
    put_record(port, "t", "big", "items", "r" + std::to_string(n), big_record(n));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  for (int n = 1; n <= frames; ++n) {
    expect_intact(s.read_json(), n);
  }
}

}  // namespace
}  // namespace weir::test

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

/// Frames the node has handed to `transport`'s sockets (its /metrics), -1 when not listed.
double frames_sent(std::uint16_t port, const std::string& transport) {
  auto body = http(port, "GET", "/metrics").body;
  const std::string name = "\nweir_frames_sent_total{transport=\"" + transport + "\"} ";
  auto at = body.find(name);
  return at == std::string::npos ? -1 : std::stod(body.substr(at + name.size()));
}

/// Reads late: waits (bounded) until the node has handed `n` frames of `transport` to sockets,
/// so the frames wait in the kernel's buffers, unread, before the client reads them.
void wait_until_sent(std::uint16_t port, const std::string& transport, double n) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (frames_sent(port, transport) < n && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  ASSERT_GE(frames_sent(port, transport), n);
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
  const double before = frames_sent(port, "websocket");
  for (int n = 1; n <= frames; ++n) {
    put_record(port, "t", "big", "items", "r" + std::to_string(n), big_record(n));
  }
  // Read late: the frames wait in the kernel's buffers meanwhile.
  wait_until_sent(port, "websocket", before + frames);
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
  const double before = frames_sent(port, "sse");
  for (int n = 1; n <= frames; ++n) {
    put_record(port, "t", "big", "items", "r" + std::to_string(n), big_record(n));
  }
  wait_until_sent(port, "sse", before + frames);
  for (int n = 1; n <= frames; ++n) {
    expect_intact(s.read_json(), n);
  }
}

}  // namespace
}  // namespace weir::test

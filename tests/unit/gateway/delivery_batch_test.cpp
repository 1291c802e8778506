// gateway::delivery_batch: a write batch's frames, bytes and write→frame times counted at once,
// with one histogram observation per run of frames from one write.
#include "gateway/traffic_stats.hpp"

#include <gtest/gtest.h>

namespace weir::gateway {
namespace {

constexpr std::int64_t ms = 1'000'000;

TEST(DeliveryBatch, CountsFramesBytesAndTimesEachFrameFromItsWrite) {
  traffic_stats t;
  delivery_batch b{100 * ms};
  b.add(10, 0);        // a snapshot: counted, not timed
  b.add(20, 99 * ms);  // three frames of one write, 1 ms old
  b.add(20, 99 * ms);
  b.add(20, 99 * ms);
  b.add(30, 70 * ms);  // one of a write 30 ms old
  EXPECT_EQ(b.commit(t, transport::sse), 5u);
  auto i = static_cast<std::size_t>(transport::sse);
  EXPECT_EQ(t.frames[i].load(), 5u);
  EXPECT_EQ(t.bytes[i].load(), 100u);
  EXPECT_EQ(t.frames[static_cast<std::size_t>(transport::websocket)].load(), 0u);
  // 1 ms falls in the (0.0005, 0.001] bucket, 30 ms in (0.025, 0.05].
  EXPECT_EQ(t.delivery.bucket(1), 3u);
  EXPECT_EQ(t.delivery.bucket(6), 1u);
  EXPECT_NEAR(t.delivery.sum_seconds(), 3 * 0.001 + 0.030, 1e-9);
}

TEST(DeliveryBatch, RunsBeyondItsSlotsStillCountEveryFrame) {
  traffic_stats t;
  delivery_batch b{1000 * ms};
  for (int w = 0; w < 20; ++w) {  // 20 writes, two frames each: more runs than slots
    b.add(1, (990 - w) * ms);
    b.add(1, (990 - w) * ms);
  }
  b.commit(t, transport::websocket);
  std::uint64_t timed = 0;
  for (std::size_t k = 0; k <= core::latency_histogram::bounds.size(); ++k) {
    timed += t.delivery.bucket(k);
  }
  EXPECT_EQ(timed, 40u);
}

TEST(OpenConnection, HoldsItsTransportWhileAlive) {
  traffic_stats t;
  {
    open_connection a{t, transport::windowed};
    open_connection b{t, transport::windowed};
    EXPECT_EQ(t.open[2].load(), 2);
  }
  EXPECT_EQ(t.open[2].load(), 0);
}

TEST(TrafficStats, ClosesAreCountedPerBound) {
  traffic_stats t;
  t.closed_at(bound_close::outbound_queue_full);
  t.closed_at(bound_close::outbound_queue_full);
  t.closed_at(bound_close::windowed_overflow);
  EXPECT_EQ(t.closes[0].load(), 2u);
  EXPECT_EQ(t.closes[4].load(), 1u);
  EXPECT_EQ(bound_close_labels[4].code, "overflow");
}

}  // namespace
}  // namespace weir::gateway

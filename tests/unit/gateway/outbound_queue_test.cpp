// gateway::outbound_queue — bounds, stale frames, and a batch in flight surviving a close.
#include "gateway/outbound_queue.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace weir::gateway {
namespace {

using actors::outbound_frame;

outbound_frame frame(std::string text, std::shared_ptr<std::atomic<bool>> live = nullptr) {
  auto f = outbound_frame::text(std::move(text));
  f.live = std::move(live);
  return f;
}

std::vector<std::string> batch(outbound_queue& q, std::size_t max) {
  std::vector<std::string> out;
  q.start_batch(max, [&](const outbound_frame& f) { out.push_back(*f.head); });
  return out;
}

TEST(OutboundQueue, BoundsInFramesBytesAndFrameSize) {
  actors::hub_options hub;
  hub.max_outbound_frames = 2;
  hub.max_outbound_queue_bytes = 10;
  hub.max_outbound_frame_bytes = 6;
  outbound_queue q;
  EXPECT_EQ(q.push(frame("1234567"), hub), outbound_queue::push_result::too_large);
  EXPECT_EQ(q.push(frame("12345"), hub), outbound_queue::push_result::queued);
  EXPECT_EQ(q.push(frame("123456"), hub), outbound_queue::push_result::full);  // 11 bytes
  EXPECT_EQ(q.push(frame("12345"), hub), outbound_queue::push_result::queued);
  EXPECT_EQ(q.push(frame("1"), hub), outbound_queue::push_result::full);  // 3 frames
  // Room comes back as a written batch leaves.
  EXPECT_EQ(batch(q, 1), std::vector<std::string>{"12345"});
  q.finish_batch();
  EXPECT_EQ(q.push(frame("1"), hub), outbound_queue::push_result::queued);
}

TEST(OutboundQueue, StaleFramesAreRefusedAndSkipped) {
  actors::hub_options hub;
  outbound_queue q;
  auto live = std::make_shared<std::atomic<bool>>(true);
  auto dead = std::make_shared<std::atomic<bool>>(false);
  EXPECT_EQ(q.push(frame("x", dead), hub), outbound_queue::push_result::stale);
  q.push(frame("a", live), hub);
  q.push(frame("b"), hub);
  live->store(false);  // replaced after being queued: never written
  EXPECT_EQ(batch(q, 64), std::vector<std::string>{"b"});
  q.finish_batch();
  EXPECT_TRUE(q.empty());
}

TEST(OutboundQueue, ACloseKeepsTheBatchInFlightAndDropsTheRest) {
  actors::hub_options hub;
  outbound_queue q;
  for (auto s : {"a", "b", "c", "d"}) {
    q.push(frame(s), hub);
  }
  EXPECT_EQ(batch(q, 3), (std::vector<std::string>{"a", "b", "c"}));
  q.drop_unstarted();  // "d" goes; the three being written stay until the write completes
  EXPECT_FALSE(q.empty());
  q.finish_batch();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.push(frame("e"), hub), outbound_queue::push_result::queued);
  EXPECT_EQ(batch(q, 64), std::vector<std::string>{"e"});
}

TEST(OutboundQueue, ASupersedingBaselineDropsWhatWaitsAndPassesTheBoundsByOneFrame) {
  actors::hub_options hub;
  hub.max_outbound_frames = 2;
  hub.max_outbound_queue_bytes = 100;
  hub.max_outbound_frame_bytes = 10;
  outbound_queue q;
  q.push(frame("d1"), hub);
  q.push(frame("d2"), hub);
  EXPECT_EQ(batch(q, 1), std::vector<std::string>{"d1"});  // d1 is being written
  EXPECT_EQ(q.push(frame("d3"), hub), outbound_queue::push_result::full);
  EXPECT_EQ(q.push_superseding(frame("snapshot"), hub), outbound_queue::push_result::queued);
  q.finish_batch();
  EXPECT_EQ(batch(q, 8), std::vector<std::string>{"snapshot"});  // d2 was dropped
  q.finish_batch();
  EXPECT_EQ(q.push_superseding(frame("much too large"), hub),
            outbound_queue::push_result::too_large);
}

}  // namespace
}  // namespace weir::gateway

// gateway::bounded_inbox — the actors → strand hand-off: one drain per burst, the bounds, and the
// resync mode of state streams (at the bound drop everything and take only the next baseline).
#include "gateway/bounded_inbox.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace weir::gateway {
namespace {

using actors::outbound_frame;
using push = bounded_inbox::push_result;

outbound_frame frame(std::string text, bool baseline = false) {
  auto f = outbound_frame::text(std::move(text));
  f.baseline = baseline;
  return f;
}

std::vector<std::string> drained(bounded_inbox& in) {
  std::vector<std::string> out;
  for (auto& f : in.drain()) {
    out.push_back(*f.head);
  }
  return out;
}

actors::hub_options bounds(std::size_t frames) {
  actors::hub_options hub;
  hub.max_outbound_frames = frames;
  hub.max_outbound_queue_bytes = 1000;
  return hub;
}

TEST(BoundedInbox, OneDrainPerBurstAndClosedAtTheBound) {
  auto hub = bounds(2);
  bounded_inbox in;
  EXPECT_EQ(in.push(frame("a"), hub), push::schedule);
  EXPECT_EQ(in.push(frame("b"), hub), push::queued);
  EXPECT_EQ(drained(in), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(in.push(frame("c"), hub), push::schedule);
  EXPECT_EQ(in.push(frame("d"), hub), push::queued);
  EXPECT_EQ(in.push(frame("e", true), hub), push::overflow);  // a baseline changes nothing here
  EXPECT_EQ(in.push(frame("f"), hub), push::closed);
  EXPECT_TRUE(drained(in).empty());
}

TEST(BoundedInbox, ResyncModeDropsEverythingAtTheBoundAndWaitsForABaseline) {
  auto hub = bounds(2);
  bounded_inbox in;
  in.resync_on_overflow();
  EXPECT_EQ(in.push(frame("d1"), hub), push::schedule);
  EXPECT_EQ(in.push(frame("d2"), hub), push::queued);
  EXPECT_EQ(in.push(frame("d3"), hub), push::lagged);
  EXPECT_EQ(in.push(frame("d4"), hub), push::dropped);
  EXPECT_TRUE(drained(in).empty());
  EXPECT_EQ(in.push(frame("s1", true), hub), push::schedule);
  EXPECT_EQ(in.push(frame("d5"), hub), push::queued);
  EXPECT_EQ(drained(in), (std::vector<std::string>{"s1", "d5"}));
}

TEST(BoundedInbox, ABaselineSupersedesWhatIsQueuedBeforeIt) {
  auto hub = bounds(2);
  bounded_inbox in;
  in.resync_on_overflow();
  in.push(frame("d1"), hub);
  in.push(frame("d2"), hub);
  EXPECT_EQ(in.push(frame("s1", true), hub), push::queued);  // room made by dropping d1, d2
  EXPECT_EQ(drained(in), std::vector<std::string>{"s1"});
}

TEST(BoundedInbox, TheStrandCanDeclareALagAndABaselineTooLargeCloses) {
  auto hub = bounds(2);
  hub.max_outbound_queue_bytes = 4;
  bounded_inbox in;
  in.resync_on_overflow();
  in.push(frame("d1"), hub);
  in.lag();
  EXPECT_EQ(in.push(frame("d2"), hub), push::dropped);
  EXPECT_TRUE(drained(in).empty());
  EXPECT_EQ(in.push(frame("snapshot", true), hub), push::overflow);  // can never fit
  EXPECT_EQ(in.push(frame("s", true), hub), push::closed);
}

}  // namespace
}  // namespace weir::gateway

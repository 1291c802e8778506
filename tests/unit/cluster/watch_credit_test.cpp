// The gateway's bound on a Watch stream's unapplied events (cluster/watch_credit.hpp), without a
// stream: reads go on under the bound, stop at it, resume once half of it is left (once, and
// from whichever thread drops the hold that gets there), a lone event larger than the bound is
// still taken, and a stream that ends while paused is told to read its end and never resumed.
#include "cluster/watch_credit.hpp"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace weir::cluster {
namespace {

TEST(WatchCredit, ReadsGoOnUnderTheBoundAndStopAtIt) {
  auto credit = std::make_shared<watch_credit>(1000);
  int resumed = 0;
  credit->attach([&] { ++resumed; });
  std::vector<std::shared_ptr<const void>> holds;
  for (int i = 0; i < 9; ++i) {
    holds.push_back(credit->take(100));
    EXPECT_TRUE(credit->may_read()) << i;
  }
  holds.push_back(credit->take(100));
  EXPECT_EQ(credit->held_bytes(), 1000u);
  EXPECT_FALSE(credit->may_read());
  EXPECT_EQ(credit->pauses(), 1u);
  // Down to 600, then 500: half the bound resumes the stream, once.
  for (int i = 0; i < 4; ++i) {
    holds.pop_back();
  }
  EXPECT_EQ(resumed, 0);
  holds.pop_back();
  EXPECT_EQ(credit->held_bytes(), 500u);
  EXPECT_EQ(resumed, 1);
  holds.clear();
  EXPECT_EQ(resumed, 1);
  EXPECT_EQ(credit->held_bytes(), 0u);
}

TEST(WatchCredit, AnEventLargerThanTheBoundIsTakenAloneAndPausesUntilApplied) {
  auto credit = std::make_shared<watch_credit>(1000);
  int resumed = 0;
  credit->attach([&] { ++resumed; });
  auto big = credit->take(5000);
  EXPECT_FALSE(credit->may_read());
  big.reset();
  EXPECT_EQ(resumed, 1);
  EXPECT_EQ(credit->held_bytes(), 0u);
}

TEST(WatchCredit, AHoldOutlivesTheCreditsOtherOwnersAndStillGivesItsBytesBack) {
  auto credit = std::make_shared<watch_credit>(1000);
  credit->attach([] {});
  auto hold = credit->take(100);
  std::weak_ptr<watch_credit> weak = credit;
  credit.reset();  // the peer's entry went away first
  ASSERT_FALSE(weak.expired());
  hold.reset();
  EXPECT_TRUE(weak.expired());
}

TEST(WatchCredit, AStreamEndingWhilePausedReadsItsEndAndIsNotResumedLater) {
  auto credit = std::make_shared<watch_credit>(1000);
  int resumed = 0;
  credit->attach([&] { ++resumed; });
  auto hold = credit->take(1000);
  ASSERT_FALSE(credit->may_read());
  EXPECT_TRUE(credit->detach());  // paused: the caller starts the read that sees the end
  hold.reset();
  EXPECT_EQ(resumed, 0);
  // Ending again (the failed read's completion) has nothing left to do.
  EXPECT_FALSE(credit->detach());
  // After the end nothing pauses: the stream's last reads run to its end.
  auto late = credit->take(5000);
  EXPECT_TRUE(credit->may_read());
}

TEST(WatchCredit, TheNextStreamOfTheMemberStartsUnderWhatTheLastOneLeftHeld) {
  auto credit = std::make_shared<watch_credit>(1000);
  credit->attach([] {});
  auto old = credit->take(1000);
  ASSERT_FALSE(credit->may_read());
  EXPECT_TRUE(credit->detach());
  int resumed = 0;
  credit->attach([&] { ++resumed; });
  auto first = credit->take(10);  // the new stream's first read always runs
  EXPECT_FALSE(credit->may_read());
  old.reset();
  EXPECT_EQ(resumed, 1);
}

TEST(WatchCredit, ManyThreadsDroppingHoldsResumeAPausedStreamExactlyOnce) {
  for (int round = 0; round < 200; ++round) {
    auto credit = std::make_shared<watch_credit>(1000);
    std::atomic<int> resumed{0};
    credit->attach([&] { resumed.fetch_add(1); });
    std::vector<std::shared_ptr<const void>> holds;
    for (int i = 0; i < 20; ++i) {
      holds.push_back(credit->take(50));
    }
    ASSERT_FALSE(credit->may_read());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      std::vector<std::shared_ptr<const void>> mine(holds.begin() + t * 5,
                                                    holds.begin() + (t + 1) * 5);
      threads.emplace_back([mine = std::move(mine)]() mutable { mine.clear(); });
    }
    holds.clear();
    for (auto& t : threads) {
      t.join();
    }
    EXPECT_EQ(resumed.load(), 1) << round;
    EXPECT_EQ(credit->held_bytes(), 0u);
  }
}

}  // namespace
}  // namespace weir::cluster

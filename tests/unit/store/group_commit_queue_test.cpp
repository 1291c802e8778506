// The queue both stores commit through (store/group_commit_queue.hpp), without a store: what it
// promises its callers — batches queued while a group commits form the next group, answered in
// order with its result; a bound on what waits; a failed or refused batch breaks its origin so
// that later batches built on it are refused unwritten; reads run once their group is durable;
// stop commits what is queued and refuses the rest. The commit function is the seam: here it
// records each group and holds or fails it on cue.
#include "store/group_commit_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>

namespace weir::store {
namespace {

using namespace std::chrono_literals;

/// A commit function whose groups are recorded (the seq of each batch) and which waits, while
/// `hold` is set, until released: so a test can queue batches behind a group in progress.
struct recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<std::uint64_t>> groups;
  bool hold = false;
  bool entered = false;
  std::function<core::result<void>(const std::vector<group_commit_queue::pending>&)> outcome =
      [](const auto&) -> core::result<void> { return {}; };

  group_commit_queue::commit_function fn() {
    return [this](const std::vector<group_commit_queue::pending>& group) {
      std::unique_lock lock{mu};
      std::vector<std::uint64_t> seqs;
      for (const auto& p : group) {
        seqs.push_back(p.batch.seq);
      }
      groups.push_back(seqs);
      entered = true;
      cv.notify_all();
      cv.wait_for(lock, 10s, [&] { return !hold; });
      return outcome(group);
    };
  }
  /// Waits until a group is inside the commit function.
  bool wait_entered() {
    std::unique_lock lock{mu};
    return cv.wait_for(lock, 10s, [&] { return entered; });
  }
  void release() {
    std::lock_guard lock{mu};
    hold = false;
    cv.notify_all();
  }
};

write_batch batch(std::uint64_t seq, std::uint64_t origin = 0) {
  write_batch b;
  b.seq = seq;
  b.origin = origin;
  return b;
}

/// An answer a test waits for, with a deadline.
struct answer {
  std::promise<core::result<void>> p;
  std::future<core::result<void>> f = p.get_future();
  commit_callback cb() {
    return [this](core::result<void> r) { p.set_value(std::move(r)); };
  }
  core::result<void> get() {
    if (f.wait_for(10s) != std::future_status::ready) {
      ADD_FAILURE() << "no answer within 10 s";
      return core::make_error("test.timeout", "no answer");
    }
    return f.get();
  }
};

TEST(GroupCommitQueue, BatchesQueuedWhileAGroupCommitsFormTheNextGroupAnsweredInOrder) {
  recorder rec;
  rec.hold = true;
  group_commit_queue q{16, rec.fn()};
  answer first;
  ASSERT_TRUE(q.submit(batch(1), first.cb()));
  ASSERT_TRUE(rec.wait_entered());
  std::vector<int> order;
  std::mutex order_mu;
  std::vector<std::unique_ptr<answer>> later;
  for (std::uint64_t s = 2; s <= 5; ++s) {
    later.push_back(std::make_unique<answer>());
    auto* a = later.back().get();
    ASSERT_TRUE(q.submit(batch(s), [a, s, &order, &order_mu](core::result<void> r) {
      {
        std::lock_guard lock{order_mu};
        order.push_back(static_cast<int>(s));
      }
      a->p.set_value(std::move(r));
    }));
  }
  EXPECT_EQ(q.queued(), 5u);  // one in flight, four waiting
  rec.release();
  EXPECT_TRUE(first.get());
  for (auto& a : later) {
    EXPECT_TRUE(a->get());
  }
  std::lock_guard lock{rec.mu};
  ASSERT_EQ(rec.groups.size(), 2u);
  EXPECT_EQ(rec.groups[0], (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(rec.groups[1], (std::vector<std::uint64_t>{2, 3, 4, 5}));
  EXPECT_EQ(order, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(q.group_sizes().bucket(0), 1u);  // a group of one
  EXPECT_EQ(q.group_sizes().bucket(2), 1u);  // a group of 3-4
  EXPECT_EQ(q.group_sizes().sum(), 5u);
}

TEST(GroupCommitQueue, BeyondItsCapacityABatchIsRefusedAsOverloaded) {
  recorder rec;
  rec.hold = true;
  group_commit_queue q{3, rec.fn()};
  answer in_flight;
  ASSERT_TRUE(q.submit(batch(1), in_flight.cb()));
  ASSERT_TRUE(rec.wait_entered());  // taken off the queue: three may wait behind it
  std::vector<std::unique_ptr<answer>> waiting;
  for (std::uint64_t s = 2; s <= 4; ++s) {
    waiting.push_back(std::make_unique<answer>());
    ASSERT_TRUE(q.submit(batch(s), waiting.back()->cb()));
  }
  auto refused = q.submit(batch(5), [](core::result<void>) { ADD_FAILURE() << "answered"; });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "server.overloaded");
  auto read_refused = q.submit_read([] {}, [](core::result<void>) { ADD_FAILURE(); });
  ASSERT_FALSE(read_refused);
  EXPECT_EQ(read_refused.error().code, "server.overloaded");
  rec.release();
  EXPECT_TRUE(in_flight.get());
  for (auto& a : waiting) {
    EXPECT_TRUE(a->get());
  }
}

TEST(GroupCommitQueue, AFailedGroupBreaksItsOriginsAndLaterBatchesOfThemAreRefusedUnwritten) {
  recorder rec;
  rec.hold = true;
  rec.outcome = [](const auto& group) -> core::result<void> {
    if (group.front().batch.seq == 1) {
      return core::make_error("store.write_failed", "disk full");
    }
    return {};
  };
  group_commit_queue q{16, rec.fn()};
  answer failed;
  ASSERT_TRUE(q.submit(batch(1, 7), failed.cb()));
  ASSERT_TRUE(rec.wait_entered());
  answer built_on_it, other_origin, no_origin;
  ASSERT_TRUE(q.submit(batch(2, 7), built_on_it.cb()));  // sent before its writer heard
  ASSERT_TRUE(q.submit(batch(3, 8), other_origin.cb()));
  ASSERT_TRUE(q.submit(batch(4, 0), no_origin.cb()));
  rec.release();
  auto r1 = failed.get();
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.error().code, "store.write_failed");
  auto r2 = built_on_it.get();
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code, "store.write_failed");
  EXPECT_TRUE(other_origin.get());
  EXPECT_TRUE(no_origin.get());
  std::lock_guard lock{rec.mu};
  ASSERT_EQ(rec.groups.size(), 2u);
  EXPECT_EQ(rec.groups[1], (std::vector<std::uint64_t>{3, 4}));  // 2 never reached the store
}

TEST(GroupCommitQueue, ABatchTheStoreRefusedAloneBreaksItsOriginToo) {
  recorder rec;
  rec.hold = true;
  rec.outcome = [](const auto& group) -> core::result<void> {
    for (const auto& p : group) {
      if (p.batch.seq == 1) {
        *p.batch.refused = core::make_error("store.fenced", "another owner");
      }
    }
    return {};
  };
  group_commit_queue q{16, rec.fn()};
  auto b1 = batch(1, 9);
  b1.refused = std::make_shared<core::error>();
  answer refused_alone, next;
  ASSERT_TRUE(q.submit(std::move(b1), refused_alone.cb()));
  ASSERT_TRUE(rec.wait_entered());
  ASSERT_TRUE(q.submit(batch(2, 9), next.cb()));
  rec.release();
  EXPECT_TRUE(refused_alone.get());  // the group committed; the store's wrapper answers the refusal
  auto r = next.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "store.write_failed");
}

TEST(GroupCommitQueue, AReadRunsOnceItsGroupIsDurableAndNotWhenItFailed) {
  recorder rec;
  rec.hold = true;
  std::atomic<int> groups_committed{0};
  rec.outcome = [&](const auto& group) -> core::result<void> {
    if (group.front().batch.seq == 3) {
      return core::make_error("store.write_failed", "disk full");
    }
    ++groups_committed;
    return {};
  };
  group_commit_queue q{16, rec.fn()};
  answer first;
  ASSERT_TRUE(q.submit(batch(1), first.cb()));
  ASSERT_TRUE(rec.wait_entered());
  answer second, read_answer;
  std::atomic<int> seen_at_read{-1};
  ASSERT_TRUE(q.submit(batch(2), second.cb()));
  ASSERT_TRUE(q.submit_read([&] { seen_at_read = groups_committed.load(); }, read_answer.cb()));
  rec.release();
  EXPECT_TRUE(first.get());
  EXPECT_TRUE(second.get());
  EXPECT_TRUE(read_answer.get());
  EXPECT_EQ(seen_at_read, 2);  // after the group it was queued with

  // The failing batch and the read queue behind a group in progress, so they form one group.
  {
    std::lock_guard lock{rec.mu};
    rec.hold = true;
    rec.entered = false;
  }
  answer holding, failing, failed_read;
  std::atomic<bool> ran{false};
  ASSERT_TRUE(q.submit(batch(9), holding.cb()));
  ASSERT_TRUE(rec.wait_entered());
  ASSERT_TRUE(q.submit(batch(3), failing.cb()));
  ASSERT_TRUE(q.submit_read([&] { ran = true; }, failed_read.cb()));
  rec.release();
  EXPECT_TRUE(holding.get());
  EXPECT_FALSE(failing.get());
  auto r = failed_read.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "store.write_failed");
  EXPECT_FALSE(ran);
}

TEST(GroupCommitQueue, StopCommitsWhatIsQueuedAndRefusesWhatComesAfter) {
  recorder rec;
  rec.hold = true;
  group_commit_queue q{16, rec.fn()};
  answer first, queued;
  ASSERT_TRUE(q.submit(batch(1), first.cb()));
  ASSERT_TRUE(rec.wait_entered());
  ASSERT_TRUE(q.submit(batch(2), queued.cb()));
  auto stopper = std::async(std::launch::async, [&] { q.stop(); });
  for (auto until = std::chrono::steady_clock::now() + 10s;
       !q.stopped() && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(q.stopped());
  auto late = q.submit(batch(3), [](core::result<void>) { ADD_FAILURE() << "answered"; });
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, "server.draining");
  rec.release();
  EXPECT_TRUE(first.get());
  EXPECT_TRUE(queued.get());
  ASSERT_EQ(stopper.wait_for(10s), std::future_status::ready);
  std::lock_guard lock{rec.mu};
  EXPECT_EQ(rec.groups.size(), 2u);
}

}  // namespace
}  // namespace weir::store

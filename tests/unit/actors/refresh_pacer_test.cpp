// Change capture's pacing of refreshes (actors/refresh_pacer.hpp), without an actor: at most the
// window running, the rest started in order as earlier ones finish (on other threads too), a
// job that finishes inside its own start does not recurse, a refresh dropped unanswered gives
// its place back, and a stopped pacer starts nothing more.
#include "actors/refresh_pacer.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

namespace weir::actors {
namespace {

TEST(RefreshPacer, AtMostTheWindowRunsAndTheRestStartInOrder) {
  auto pacer = std::make_shared<refresh_pacer>(2);
  std::vector<int> started;
  std::vector<std::function<void()>> finish;
  for (int i = 0; i < 5; ++i) {
    pacer->run([i, &started, &finish](std::function<void()> f) {
      started.push_back(i);
      finish.push_back(std::move(f));
    });
  }
  EXPECT_EQ(started, (std::vector<int>{0, 1}));
  EXPECT_EQ(pacer->running(), 2u);
  EXPECT_EQ(pacer->waiting(), 3u);
  finish[1]();
  EXPECT_EQ(started, (std::vector<int>{0, 1, 2}));
  finish[1]();  // a second call gives nothing back
  EXPECT_EQ(started.size(), 3u);
  finish[0]();
  finish[2]();
  EXPECT_EQ(started, (std::vector<int>{0, 1, 2, 3, 4}));
  finish[3]();
  finish[4]();
  EXPECT_EQ(pacer->running(), 0u);
  EXPECT_EQ(pacer->waiting(), 0u);
}

TEST(RefreshPacer, JobsThatFinishAtOnceDoNotRecurse) {
  // A refresh of a unit not held here is answered inside its own start: 100,000 of them in one
  // transaction must not nest 100,000 frames deep.
  auto pacer = std::make_shared<refresh_pacer>(1);
  std::vector<std::function<void()>> hold;
  pacer->run([&hold](std::function<void()> f) { hold.push_back(std::move(f)); });
  int ran = 0;
  for (int i = 0; i < 100000; ++i) {
    pacer->run([&ran](std::function<void()> f) {
      ++ran;
      f();
    });
  }
  EXPECT_EQ(ran, 0);
  hold[0]();
  EXPECT_EQ(ran, 100000);
  EXPECT_EQ(pacer->running(), 0u);
}

TEST(RefreshPacer, ARefreshDroppedUnansweredGivesItsPlaceBack) {
  auto pacer = std::make_shared<refresh_pacer>(1);
  pacer->run([](std::function<void()>) {});  // its callback destroyed, never called
  bool second = false;
  pacer->run([&second](std::function<void()>) { second = true; });
  EXPECT_TRUE(second);
}

TEST(RefreshPacer, AStoppedPacerStartsNothingMore) {
  auto pacer = std::make_shared<refresh_pacer>(1);
  std::function<void()> first;
  pacer->run([&first](std::function<void()> f) { first = std::move(f); });
  int more = 0;
  pacer->run([&more](std::function<void()> f) {
    ++more;
    f();
  });
  pacer->stop();
  pacer->run([&more](std::function<void()> f) {
    ++more;
    f();
  });
  first();
  EXPECT_EQ(more, 0);
  EXPECT_EQ(pacer->waiting(), 0u);
}

TEST(RefreshPacer, AJobThatThrowsDoesNotStopTheOthers) {
  auto pacer = std::make_shared<refresh_pacer>(1);
  EXPECT_THROW(pacer->run([](std::function<void()>) { throw std::runtime_error{"no memory"}; }),
               std::runtime_error);
  EXPECT_EQ(pacer->running(), 0u);
  bool next = false;
  pacer->run([&next](std::function<void()> f) {
    next = true;
    f();
  });
  EXPECT_TRUE(next);
}

TEST(RefreshPacer, AnswersFromManyThreadsKeepTheWindowAndRunEveryJob) {
  auto pacer = std::make_shared<refresh_pacer>(4);
  std::atomic<int> running{0}, most{0}, done{0};
  std::vector<std::thread> threads;
  std::mutex mu;
  for (int i = 0; i < 400; ++i) {
    pacer->run([&](std::function<void()> f) {
      auto now = ++running;
      for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
      }
      std::lock_guard lock{mu};
      threads.emplace_back([&running, &done, f = std::move(f)] {
        --running;
        ++done;
        f();
      });
    });
  }
  for (std::size_t joined = 0;;) {
    std::thread t;
    {
      std::lock_guard lock{mu};
      if (joined == threads.size()) {
        if (done.load() == 400) {
          break;
        }
        continue;
      }
      t = std::move(threads[joined++]);
    }
    t.join();
  }
  EXPECT_EQ(done.load(), 400);
  EXPECT_LE(most.load(), 4);
  EXPECT_EQ(pacer->running(), 0u);
}

}  // namespace
}  // namespace weir::actors

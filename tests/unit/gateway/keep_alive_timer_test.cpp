// gateway::keep_alive_timer on its thread's keep_alive_wheel: a Ping after an interval of
// silence and not before, a write re-times it, sessions with different intervals each get
// theirs, a writing session waits, and a cancelled or still-armed timer lets its session go.
#include "gateway/keep_alive_timer.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

namespace weir::gateway {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct fake_session : std::enable_shared_from_this<fake_session> {
  keep_alive_timer timer;
  std::vector<clock_type::time_point> pings;
  bool closed = false;
  bool writing = false;
  std::chrono::milliseconds interval{0};
  bool rearm_after_ping = true;  // as a session does when the Ping's write completes

  bool keep_alive_closed() const { return closed; }
  bool keep_alive_writing() const { return writing; }
  void keep_alive_ping() {
    pings.push_back(clock_type::now());
    if (rearm_after_ping) {
      timer.wrote(interval, this);
    }
  }
};

struct KeepAliveWheel : ::testing::Test {
  boost::asio::io_context ioc{1};
  std::unique_ptr<keep_alive_wheel> wheel = std::make_unique<keep_alive_wheel>(ioc);
  KeepAliveWheel() { keep_alive_wheel::set_current(wheel.get()); }
  ~KeepAliveWheel() override {
    wheel.reset();
    keep_alive_wheel::set_current(nullptr);
  }
  void run_for(std::chrono::milliseconds d) {
    ioc.restart();
    ioc.run_for(d);
  }
  std::shared_ptr<fake_session> session(std::chrono::milliseconds interval) {
    auto s = std::make_shared<fake_session>();
    s->interval = interval;
    return s;
  }
};

TEST_F(KeepAliveWheel, PingsAfterEachIntervalOfSilenceAndNotBefore) {
  auto s = session(60ms);
  auto start = clock_type::now();
  s->timer.wrote(s->interval, s.get());
  run_for(400ms);
  ASSERT_GE(s->pings.size(), 4u);
  ASSERT_LE(s->pings.size(), 7u);
  auto prev = start;
  for (auto t : s->pings) {
    EXPECT_GE(t - prev, 60ms);
    EXPECT_LT(t - prev, 60ms + 250ms);  // a slot late at most; room for a loaded sanitizer run
    prev = t;
  }
}

TEST_F(KeepAliveWheel, AWriteRetimesThePingFromItself) {
  auto s = session(100ms);
  s->timer.wrote(s->interval, s.get());
  run_for(70ms);
  auto last_write = clock_type::now();
  s->timer.wrote(s->interval, s.get());  // already armed: only the time of the write moves
  run_for(60ms);
  EXPECT_TRUE(s->pings.empty()) << "a Ping 60 ms after a write, with a 100 ms interval";
  run_for(120ms);
  ASSERT_FALSE(s->pings.empty());
  EXPECT_GE(s->pings.front() - last_write, 100ms);
}

TEST_F(KeepAliveWheel, ManySessionsWithTheirOwnIntervals) {
  std::vector<std::shared_ptr<fake_session>> all;
  for (int i = 0; i < 300; ++i) {
    auto s = session(std::chrono::milliseconds{20 + (i % 7) * 15});
    s->rearm_after_ping = false;
    s->timer.wrote(s->interval, s.get());
    all.push_back(s);
  }
  auto start = clock_type::now();
  run_for(250ms);
  for (auto& s : all) {
    ASSERT_EQ(s->pings.size(), 1u) << "interval " << s->interval.count();
    EXPECT_GE(s->pings.front() - start + 5ms, s->interval);
  }
}

TEST_F(KeepAliveWheel, AWritingSessionWaitsAnotherInterval) {
  auto s = session(50ms);
  s->writing = true;
  s->timer.wrote(s->interval, s.get());
  run_for(120ms);
  EXPECT_TRUE(s->pings.empty());
  s->writing = false;
  run_for(120ms);
  EXPECT_FALSE(s->pings.empty());
}

TEST_F(KeepAliveWheel, AClosedSessionIsNeverPingedAndLetGo) {
  auto s = session(30ms);
  s->timer.wrote(s->interval, s.get());
  s->closed = true;
  std::weak_ptr<fake_session> w = s;
  s.reset();
  EXPECT_FALSE(w.expired()) << "an armed timer holds its session";
  run_for(100ms);
  EXPECT_TRUE(w.expired());
}

TEST_F(KeepAliveWheel, CancelLetsTheSessionGoAfterTheRunningHandler) {
  auto s = session(30ms);
  s->timer.wrote(s->interval, s.get());
  std::weak_ptr<fake_session> w = s;
  auto* raw = s.get();
  s.reset();
  raw->timer.cancel();
  EXPECT_FALSE(w.expired()) << "released later, not under the caller";
  run_for(50ms);
  EXPECT_TRUE(w.expired());
}

TEST_F(KeepAliveWheel, TheWheelLetsGoOfArmedSessionsWhenItEnds) {
  auto s = session(10min);
  s->timer.wrote(s->interval, s.get());
  std::weak_ptr<fake_session> w = s;
  s.reset();
  run_for(20ms);
  EXPECT_FALSE(w.expired());
  wheel.reset();
  EXPECT_TRUE(w.expired());
}

TEST_F(KeepAliveWheel, ZeroIntervalNeverArms) {
  auto s = session(0ms);
  s->timer.wrote(s->interval, s.get());
  std::weak_ptr<fake_session> w = s;
  s.reset();
  EXPECT_TRUE(w.expired());
}

}  // namespace
}  // namespace weir::gateway

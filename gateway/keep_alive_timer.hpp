// weir::gateway::keep_alive_timer and keep_alive_wheel — the keep-alive Ping after an interval of
// outbound silence (arc-hub §6, and the SSE streams' comment lines), for every session kind.
//
// Every idle connection waits for its keep-alive for its whole life, so what one wait costs is
// what an idle connection costs: an asio timer with its pending wait was 136 + 213 bytes per
// connection (docs/performance.md). Here a connection's timer is a 72-byte link in its I/O
// thread's wheel — 4,096 slots of 10 ms, one asio timer per thread set to the earliest slot
// that holds anything — and nothing is allocated to arm it. Pings go out up to one slot (10 ms)
// late, which a keep-alive does not notice.
//
// Never reset per write (that would cost an unlink and a link per frame): when its slot comes
// the timer looks at the time of the last completed write and either pings or waits for the
// remainder. Everything here runs on the one I/O thread whose context the session lives on.
// Internal to gateway/.
#pragma once

#include <array>
#include <cassert>
#include <chrono>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/intrusive/list.hpp>

namespace weir::gateway {

class keep_alive_wheel;

class keep_alive_timer {
 public:
  using clock = std::chrono::steady_clock;

  keep_alive_timer() = default;
  keep_alive_timer(const keep_alive_timer&) = delete;
  keep_alive_timer& operator=(const keep_alive_timer&) = delete;

  /// A write completed: silence counts from now. Arms the timer unless it is armed already or
  /// `interval` is 0 (off). While armed it holds the session (`shared_from_this()`). The
  /// session provides keep_alive_closed() (closing or closed: never ping), keep_alive_writing()
  /// (a write is in flight: its completion re-times the timer) and keep_alive_ping() (queue the
  /// Ping). On the session's I/O thread.
  template <class Session>
  void wrote(std::chrono::milliseconds interval, Session* session);

  /// Disarms it and lets go of the session (after the running handler: the caller may be the
  /// session itself, held by nothing else). On the session's I/O thread.
  void cancel();

 private:
  friend class keep_alive_wheel;
  using hook = boost::intrusive::list_member_hook<
      boost::intrusive::link_mode<boost::intrusive::auto_unlink>>;

  template <class Session>
  static void fire(keep_alive_timer& t);
  void arm(clock::time_point due);

  hook hook_;
  keep_alive_wheel* wheel_ = nullptr;
  std::shared_ptr<void> keep_;  // the session, while armed
  void (*fire_)(keep_alive_timer&) = nullptr;
  clock::time_point due_{};
  clock::time_point last_write_{};
  std::chrono::milliseconds interval_{0};
};

/// One per I/O thread: the keep-alive timers of its sessions.
class keep_alive_wheel {
 public:
  explicit keep_alive_wheel(boost::asio::io_context& ioc);
  /// Lets go of every session still armed (after the context stopped: nothing fires).
  ~keep_alive_wheel();
  keep_alive_wheel(const keep_alive_wheel&) = delete;
  keep_alive_wheel& operator=(const keep_alive_wheel&) = delete;

  /// The wheel of the I/O thread calling (null off the I/O threads).
  static keep_alive_wheel* current() { return current_; }
  /// Called by each I/O thread before it runs its context.
  static void set_current(keep_alive_wheel* w) { current_ = w; }

 private:
  friend class keep_alive_timer;
  using clock = keep_alive_timer::clock;
  static constexpr clock::duration slot_width = std::chrono::milliseconds{10};
  static constexpr std::size_t slot_count = 4096;  // 41 s a turn: the default intervals fit
  using list =
      boost::intrusive::list<keep_alive_timer,
                             boost::intrusive::member_hook<keep_alive_timer, keep_alive_timer::hook,
                                                           &keep_alive_timer::hook_>,
                             boost::intrusive::constant_time_size<false>>;

  static std::int64_t slot_of(clock::time_point t) {
    return (t.time_since_epoch() + slot_width - clock::duration{1}) / slot_width;  // rounded up
  }
  void link(keep_alive_timer& t);
  void release_later(std::shared_ptr<void> keep);
  void wake_at(std::int64_t slot);
  void on_tick();

  boost::asio::io_context& ioc_;
  boost::asio::steady_timer tick_timer_;
  std::array<list, slot_count> slots_;
  std::int64_t next_slot_;       // slots before it are done
  std::int64_t wake_slot_ = -1;  // the slot the tick timer waits for; -1 when not waiting
  static inline thread_local keep_alive_wheel* current_ = nullptr;
};

template <class Session>
void keep_alive_timer::wrote(std::chrono::milliseconds interval, Session* session) {
  last_write_ = clock::now();
  if (interval.count() <= 0 || hook_.is_linked()) {
    return;
  }
  interval_ = interval;
  fire_ = &fire<Session>;
  keep_ = session->shared_from_this();
  arm(last_write_ + interval);
}

template <class Session>
void keep_alive_timer::fire(keep_alive_timer& t) {
  auto s = std::static_pointer_cast<Session>(std::move(t.keep_));
  if (s->keep_alive_closed()) {
    return;
  }
  auto now = clock::now();
  if (s->keep_alive_writing()) {
    t.keep_ = std::move(s);
    t.arm(now + t.interval_);
    return;
  }
  auto due = t.last_write_ + t.interval_;
  if (now < due) {
    t.keep_ = std::move(s);
    t.arm(due);
    return;
  }
  s->keep_alive_ping();
}

}  // namespace weir::gateway

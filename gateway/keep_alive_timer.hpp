// weir::gateway::keep_alive_timer — arc-hub §6 for both hub sessions: a Ping after
// `keepAliveIntervalMs` of outbound silence. One timer per connection, never reset per write
// (that would cost a cancel and a handler per frame): when it fires it looks at the time of the
// last completed write and either pings or sleeps for the remainder. Internal to gateway/.
#pragma once

#include <chrono>
#include <memory>

#include <boost/asio/bind_allocator.hpp>

#include "gateway/beast.hpp"
#include "gateway/parked_allocator.hpp"

namespace weir::gateway {

class keep_alive_timer {
 public:
  explicit keep_alive_timer(const asio::any_io_executor& ex) : timer_(ex) {}

  /// A write completed: silence counts from now. Arms the timer unless it is armed already or
  /// `interval` is 0 (off). While armed its handler holds the session (`shared_from_this()`).
  /// The session provides keep_alive_closed() (closing or closed: never ping),
  /// keep_alive_writing() (a write is in flight: its completion re-times the timer) and
  /// keep_alive_ping() (queue the Ping).
  template <class Session>
  void wrote(std::chrono::milliseconds interval, Session* session) {
    last_write_ = clock::now();
    if (interval.count() > 0 && !armed_) {
      schedule(last_write_ + interval, interval, session->shared_from_this());
    }
  }

  void cancel() { timer_.cancel(); }

 private:
  using clock = std::chrono::steady_clock;

  template <class Session>
  void schedule(clock::time_point when, std::chrono::milliseconds interval,
                std::shared_ptr<Session> session) {
    armed_ = true;
    timer_.expires_at(when);
    // Parked for the whole interval on every idle connection: sized for itself, not from
    // asio's recycled blocks (parked_allocator.hpp).
    timer_.async_wait(asio::bind_allocator(
        parked_allocator<void>{},
        [this, interval, s = std::move(session)](beast::error_code ec) mutable {
          armed_ = false;
          if (ec || s->keep_alive_closed()) {
            return;
          }
          auto now = clock::now();
          if (s->keep_alive_writing()) {
            schedule(now + interval, interval, std::move(s));
            return;
          }
          auto due = last_write_ + interval;
          if (now < due) {
            schedule(due, interval, std::move(s));
            return;
          }
          s->keep_alive_ping();
        }));
  }

  asio::steady_timer timer_;
  bool armed_ = false;
  clock::time_point last_write_{};
};

}  // namespace weir::gateway

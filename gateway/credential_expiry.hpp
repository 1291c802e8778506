// weir::gateway::credential_expiry — a streaming session's credential expiry (JWT `exp`): when
// the caller's credential runs out, the session ends its stream the way its protocol says
// (a hub's isAuthorized:false, a windowed or admin stream's `closed{deauthorized}`, an AG-UI
// RUN_ERROR). One timer for all four streaming sessions, which each had their own copy.
// Internal to gateway/.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "gateway/beast.hpp"

namespace weir::gateway {

class credential_expiry {
 public:
  explicit credential_expiry(const asio::any_io_executor& ex) : timer_(ex) {}

  /// Calls `expired()` on the executor once the Unix time `expires_at` (seconds) has passed,
  /// unless cancel() comes first. `keep` (the session's shared_ptr) keeps the session, and so
  /// this timer, alive while it waits. The wait is at most a day at a time, then checked again:
  /// a far-off expiry must not overflow the timer's clock arithmetic.
  template <class Keep, class Fn>
  void arm(std::int64_t expires_at, Keep keep, Fn expired) {
    cancelled_ = false;
    wait(expires_at, std::move(keep), std::move(expired));
  }

  /// After this, nothing waits any more: a daily re-check whose handler was already queued
  /// when the session closed does not arm another wait (which would keep the closed session
  /// alive until the credential's expiry).
  void cancel() {
    cancelled_ = true;
    timer_.cancel();
  }

 private:
  template <class Keep, class Fn>
  void wait(std::int64_t expires_at, Keep keep, Fn expired) {
    constexpr std::int64_t day_ms = 24LL * 3600 * 1000;
    const auto left = expires_at * 1000 - unix_ms();
    timer_.expires_after(std::chrono::milliseconds{std::clamp<std::int64_t>(left, 0, day_ms)});
    timer_.async_wait([this, expires_at, keep = std::move(keep),
                       expired = std::move(expired)](beast::error_code ec) mutable {
      if (ec || cancelled_) {
        return;  // cancelled: the session ended first
      }
      if (expires_at * 1000 > unix_ms()) {
        wait(expires_at, std::move(keep), std::move(expired));
        return;
      }
      expired();
    });
  }

  static std::int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  asio::steady_timer timer_;
  bool cancelled_ = false;
};

}  // namespace weir::gateway

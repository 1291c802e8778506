// weir::gateway::watched_write — the rest of a write the socket did not take at once, sent as
// the socket drains, with a stall bound: when the kernel has taken no byte of it for `stall`, the
// write ends with asio::error::timed_out and the session drops the connection. An async_write
// would wait for as long as a peer keeps its receive window shut — a client that stops reading
// then held its hub slot and subscriptions for minutes (TCP_USER_TIMEOUT, when set) or for ever.
// Progress is watched rather than the whole write timed: a large frame to a slow reader that
// keeps reading is not a stall. Streaming sessions also set TCP_USER_TIMEOUT to the same bound
// and TCP keep-alive (watch_for_dead_peer), so the kernel gives up on a peer that acknowledges
// nothing or that went silent.
// Internal to gateway/.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "gateway/beast.hpp"
#include "gateway/write_now.hpp"

namespace weir::gateway {

/// How a streaming session notices a peer that is gone without a FIN or an RST (a host that
/// powered off, a NAT that forgot the connection, a network that changed): data the peer has
/// not acknowledged for `bound` fails the connection (TCP_USER_TIMEOUT); and since a stream may
/// send nothing for long (a direct stream on a query that rarely changes, keep-alives turned
/// off), TCP keep-alive probes a silent peer after 60 s, then every 10 s. With TCP_USER_TIMEOUT
/// set, Linux drops the connection once a probe is unanswered and `bound` has passed since the
/// peer was last heard (TCP_KEEPCNT no longer counts): about 70 s after it went silent with the
/// default 10 s bound, `bound` when that is longer. The pending read then ends, and with it the
/// session, its budget slot and its subscriptions.
inline void watch_for_dead_peer(tcp::socket& sock, std::chrono::milliseconds bound) {
  auto fd = sock.native_handle();
  unsigned ms = static_cast<unsigned>(bound.count());
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
  int on = 1, idle = 60, interval = 10;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
}

class watched_write {
 public:
  explicit watched_write(const asio::any_io_executor& ex) : timer_(ex) {}

  /// Writes `pieces` (the caller keeps them alive until `done`; they are trimmed as they go) on
  /// `sock`, a non-blocking socket with nothing else writing to it. `done(ec)` runs once: clear
  /// when all is written, asio::error::timed_out after `stall` without progress, or the socket's
  /// error. `keep` (the session) is held until then.
  void start(tcp::socket& sock, std::vector<asio::const_buffer>& pieces,
             std::chrono::milliseconds stall, std::shared_ptr<void> keep,
             std::function<void(beast::error_code)> done) {
    sock_ = &sock;
    pieces_ = &pieces;
    stall_ = stall;
    keep_ = std::move(keep);
    done_ = std::move(done);
    timed_out_ = false;
    last_progress_ = std::chrono::steady_clock::now();
    ++generation_;
    arm(last_progress_ + stall_);
    wait();
  }

  /// Whether a write is under way.
  bool active() const { return static_cast<bool>(done_); }

 private:
  void wait() {
    sock_->async_wait(tcp::socket::wait_write,
                      [this, keep = keep_, gen = generation_](beast::error_code ec) {
                        if (gen != generation_ || !done_) {
                          return;
                        }
                        if (timed_out_) {
                          ec = asio::error::timed_out;
                        }
                        if (ec) {
                          finish(ec);
                          return;
                        }
                        auto before = left();
                        beast::error_code wec;
                        if (write_now(*sock_, *pieces_, wec)) {
                          finish({});
                          return;
                        }
                        if (wec) {
                          finish(wec);
                          return;
                        }
                        if (left() < before) {
                          last_progress_ = std::chrono::steady_clock::now();
                        }
                        wait();
                      });
  }

  void arm(std::chrono::steady_clock::time_point at) {
    timer_.expires_at(at);
    timer_.async_wait([this, keep = keep_, gen = generation_](beast::error_code ec) {
      if (ec || gen != generation_ || !done_) {
        return;
      }
      auto due = last_progress_ + stall_;
      if (std::chrono::steady_clock::now() < due) {
        arm(due);  // it moved since: wait out the rest of the bound from its last progress
        return;
      }
      timed_out_ = true;
      beast::error_code ignored;
      sock_->cancel(ignored);  // the pending wait completes, and reports timed_out
    });
  }

  std::size_t left() const {
    std::size_t n = 0;
    for (const auto& p : *pieces_) {
      n += p.size();
    }
    return n;
  }

  void finish(beast::error_code ec) {
    ++generation_;  // whatever is still pending finds itself stale
    timer_.cancel();
    auto done = std::move(done_);
    done_ = nullptr;
    auto keep = std::move(keep_);  // held until `done` has run
    done(ec);
  }

  asio::steady_timer timer_;
  tcp::socket* sock_ = nullptr;
  std::vector<asio::const_buffer>* pieces_ = nullptr;
  std::chrono::milliseconds stall_{0};
  std::shared_ptr<void> keep_;
  std::function<void(beast::error_code)> done_;
  std::chrono::steady_clock::time_point last_progress_;
  std::uint64_t generation_ = 0;
  bool timed_out_ = false;
};

}  // namespace weir::gateway

// keep_alive_timer and keep_alive_wheel: the per-thread wheel behind every session's keep-alive.
#include "gateway/keep_alive_timer.hpp"

#include <algorithm>

#include <boost/asio/post.hpp>

#include "log/log.hpp"

namespace weir::gateway {

void keep_alive_timer::arm(clock::time_point due) {
  if (!wheel_) {
    wheel_ = keep_alive_wheel::current();
  }
  assert(wheel_ && "a keep-alive is armed on an I/O thread");
  if (!wheel_) {
    // Not reached (sessions run on I/O threads): said loudly rather than a connection that
    // silently never pings.
    log::error("keep-alive armed off the I/O threads: this session will not be pinged");
    keep_.reset();
    return;
  }
  due_ = due;
  wheel_->link(*this);
}

void keep_alive_timer::cancel() {
  if (hook_.is_linked()) {
    hook_.unlink();
  }
  if (keep_) {
    wheel_->release_later(std::move(keep_));
  }
}

keep_alive_wheel::keep_alive_wheel(boost::asio::io_context& ioc)
    : ioc_(ioc), tick_timer_(ioc), next_slot_(clock::now().time_since_epoch() / slot_width) {}

keep_alive_wheel::~keep_alive_wheel() {
  for (auto& l : slots_) {
    while (!l.empty()) {
      auto& t = l.front();
      l.pop_front();
      auto keep = std::move(t.keep_);  // may end the session, and `t` with it
    }
  }
}

void keep_alive_wheel::link(keep_alive_timer& t) {
  auto slot = std::max(slot_of(t.due_), next_slot_);
  slots_[static_cast<std::size_t>(slot) % slot_count].push_back(t);
  if (wake_slot_ == -1 || slot < wake_slot_) {
    wake_at(slot);
  }
}

void keep_alive_wheel::release_later(std::shared_ptr<void> keep) {
  boost::asio::post(ioc_, [k = std::move(keep)] {});
}

void keep_alive_wheel::wake_at(std::int64_t slot) {
  wake_slot_ = slot;
  tick_timer_.expires_at(clock::time_point{slot * slot_width});
  tick_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) {
      return;  // moved earlier (a newer wait is pending) or the context is going away
    }
    wake_slot_ = -1;
    on_tick();
  });
}

void keep_alive_wheel::on_tick() {
  auto now = clock::now();
  std::int64_t now_slot = now.time_since_epoch() / slot_width;  // every slot up to it is due
  auto last = std::min(now_slot, next_slot_ + static_cast<std::int64_t>(slot_count) - 1);
  list due;
  for (auto k = next_slot_; k <= last; ++k) {
    auto& l = slots_[static_cast<std::size_t>(k) % slot_count];
    for (auto it = l.begin(); it != l.end();) {
      if (it->due_ <= now) {
        auto& t = *it;
        it = l.erase(it);
        due.push_back(t);
      } else {
        ++it;  // a later turn's
      }
    }
  }
  next_slot_ = std::max(next_slot_, now_slot + 1);
  while (!due.empty()) {
    auto& t = due.front();
    due.pop_front();
    t.fire_(t);  // may re-arm it, or end its session (and `t`)
  }
  // The first slot holding anything (timers re-armed above included); a timer more than a turn
  // away wakes the wheel once a turn until its own comes.
  for (auto k = next_slot_; k < next_slot_ + static_cast<std::int64_t>(slot_count); ++k) {
    if (!slots_[static_cast<std::size_t>(k) % slot_count].empty()) {
      if (wake_slot_ == -1 || k < wake_slot_) {
        wake_at(k);
      }
      return;
    }
  }
}

}  // namespace weir::gateway

// watch_credit (watch_credit.hpp): one lock guards the count and the paused state, so exactly
// one party (the stream's own read completion, a hold's release, or detach) takes the stream
// out of its pause and starts its next read: gRPC allows one read outstanding.
#include "cluster/watch_credit.hpp"

#include <utility>

namespace weir::cluster {

namespace {

// Gives its bytes back when the last copy of the event's message is gone.
class credit_hold {
 public:
  credit_hold(std::shared_ptr<watch_credit> credit, std::size_t bytes,
              void (*release)(watch_credit&, std::size_t))
      : credit_(std::move(credit)), bytes_(bytes), release_(release) {}
  ~credit_hold() { release_(*credit_, bytes_); }
  credit_hold(const credit_hold&) = delete;
  credit_hold& operator=(const credit_hold&) = delete;

 private:
  std::shared_ptr<watch_credit> credit_;
  std::size_t bytes_;
  void (*release_)(watch_credit&, std::size_t);
};

}  // namespace

void watch_credit::attach(std::function<void()> resume) {
  std::lock_guard lock{mu_};
  resume_ = std::move(resume);
  paused_ = false;
}

std::shared_ptr<const void> watch_credit::take(std::size_t bytes) {
  {
    std::lock_guard lock{mu_};
    held_ += bytes;
  }
  return std::make_shared<credit_hold>(shared_from_this(), bytes,
                                       [](watch_credit& c, std::size_t b) { c.release(b); });
}

bool watch_credit::may_read() {
  std::lock_guard lock{mu_};
  // An event larger than the bound alone is still taken (the hold count was under it before):
  // it pauses the stream until the event has been applied.
  if (!resume_ || held_ < max_) {
    return true;
  }
  paused_ = true;
  ++pauses_;
  return false;
}

bool watch_credit::detach() {
  std::lock_guard lock{mu_};
  resume_ = nullptr;
  return std::exchange(paused_, false);
}

void watch_credit::release(std::size_t bytes) {
  std::function<void()> resume;
  {
    std::lock_guard lock{mu_};
    held_ -= bytes;
    if (!paused_ || held_ > max_ / 2) {
      return;
    }
    paused_ = false;
    resume = resume_;
  }
  // Outside the lock: the read it starts may complete at once, on this thread or another, and
  // take the lock again.
  resume();
}

std::size_t watch_credit::held_bytes() const {
  std::lock_guard lock{mu_};
  return held_;
}

std::uint64_t watch_credit::pauses() const {
  std::lock_guard lock{mu_};
  return pauses_;
}

}  // namespace weir::cluster

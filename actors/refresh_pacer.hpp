// weir::actors::refresh_pacer — how many of change capture's refreshes run at once, node-wide.
// A transaction another program commits can touch any number of units; each unit held in
// memory reads its changed rows back through the store's queue (store.queueCapacity). Sent all
// at once, a large one overflowed that queue, was refused as overloaded, was read again from the
// same position and overflowed again: change capture stopped for good behind it. Paced, its
// refreshes go `window` at a time in the order they came, each next one started by the answer
// of one before. Jobs run outside the lock, and one that finishes inside its own start does
// not recurse into the next (the thread already starting jobs goes on with the queue).
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace weir::actors {

class refresh_pacer : public std::enable_shared_from_this<refresh_pacer> {
 public:
  /// Calls `finished` (any thread) when the refresh it started is answered. Its slot is given
  /// back once, at the first call or when the last copy of `finished` is destroyed uncalled (a
  /// refresh dropped unanswered does not keep a slot for good).
  using job = std::function<void(std::function<void()> finished)>;

  /// Create with std::make_shared (a job's `finished` keeps the pacer alive).
  explicit refresh_pacer(std::size_t window) : window_(window == 0 ? 1 : window) {}

  /// Starts `j` now when fewer than the window are running, else once earlier ones finished.
  void run(job j) {
    std::unique_lock lock{mu_};
    if (stopped_) {
      return;
    }
    waiting_.push_back(std::move(j));
    pump(lock);
  }

  /// Drops the jobs not yet started, and every later one (the runtime is stopping: a dropped
  /// refresh leaves its transaction unconfirmed, so it is read again at the next start).
  void stop() {
    std::deque<job> dropped;
    {
      std::lock_guard lock{mu_};
      stopped_ = true;
      dropped.swap(waiting_);
    }
  }

  std::size_t running() const {
    std::lock_guard lock{mu_};
    return running_;
  }
  std::size_t waiting() const {
    std::lock_guard lock{mu_};
    return waiting_.size();
  }

 private:
  void finished() {
    std::unique_lock lock{mu_};
    --running_;
    pump(lock);
  }

  void pump(std::unique_lock<std::mutex>& lock) {
    if (pumping_) {
      return;  // the thread starting jobs sees what changed when it takes the lock again
    }
    pumping_ = true;
    while (!stopped_ && running_ < window_ && !waiting_.empty()) {
      auto j = std::move(waiting_.front());
      waiting_.pop_front();
      ++running_;
      lock.unlock();
      auto s = std::make_shared<slot>(shared_from_this());
      try {
        j([s] { s->give_back(); });
      } catch (...) {
        // Its place back and the pump free again (outside the lock: the give-back takes it),
        // so one failed start does not stop every later refresh.
        s.reset();
        j = nullptr;
        lock.lock();
        pumping_ = false;
        throw;
      }
      s.reset();
      j = nullptr;  // what it captured goes before the lock is taken again
      lock.lock();
    }
    pumping_ = false;
  }

  struct slot {
    explicit slot(std::shared_ptr<refresh_pacer> p) : pacer(std::move(p)) {}
    ~slot() { give_back(); }
    void give_back() {
      if (!given.exchange(true)) {
        pacer->finished();
      }
    }
    std::shared_ptr<refresh_pacer> pacer;
    std::atomic<bool> given{false};
  };

  const std::size_t window_;
  mutable std::mutex mu_;
  std::deque<job> waiting_;
  std::size_t running_ = 0;
  bool pumping_ = false;
  bool stopped_ = false;
};

}  // namespace weir::actors

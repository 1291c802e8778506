// weir::store::group_commit_queue — the bounded queue of write batches and the writer thread
// that commits them, shared by both stores: the thread takes everything queued at once and
// hands it to the store's commit function as one group (one fsync or one transaction for all of
// it), then answers every batch of the group with the result. Reads can be queued too: they run
// on the writer thread once the group they came with is durable, so each sees every batch
// queued before it (and, within its group, those after it). A batch that fails breaks its
// origin (write_batch::origin): later batches of that origin are answered store.write_failed
// without being written, since they were built on it.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/count_histogram.hpp"
#include "store/durable_store.hpp"

namespace weir::store {

class group_commit_queue {
 public:
  struct pending {
    write_batch batch;
    commit_callback done;
  };
  struct queued_read {
    std::function<void()> read;  // run on the writer thread after its group committed
    commit_callback done;        // then answered: the group's result
  };
  /// Commits one group durably, in order (runs on the writer thread).
  using commit_function = std::function<core::result<void>(const std::vector<pending>& group)>;

  /// Starts the writer thread. `capacity`: batches that may wait; beyond → refused.
  group_commit_queue(std::size_t capacity, commit_function commit)
      : capacity_(capacity), commit_(std::move(commit)), writer_([this] { run(); }) {}
  ~group_commit_queue() { stop(); }
  group_commit_queue(const group_commit_queue&) = delete;
  group_commit_queue& operator=(const group_commit_queue&) = delete;

  /// See durable_store::submit: server.overloaded at capacity, server.draining once stopping.
  core::result<void> submit(write_batch batch, commit_callback done) {
    {
      std::lock_guard lock{mu_};
      if (stopping_) {
        return core::make_error("server.draining",
                                "this node is shutting down; the write was not applied, retry");
      }
      if (queue_.size() >= capacity_) {
        return core::make_error(
            "server.overloaded",
            "the store's write queue is full; the write was not applied, retry");
      }
      queue_.push_back(entry{pending{std::move(batch), std::move(done)}, {}});
    }
    cv_.notify_one();
    return {};
  }

  /// Queues a read behind every batch queued so far (same refusals as submit).
  core::result<void> submit_read(std::function<void()> read, commit_callback done) {
    {
      std::lock_guard lock{mu_};
      if (stopping_) {
        return core::make_error("server.draining",
                                "this node is shutting down; the read was not made, retry");
      }
      if (queue_.size() >= capacity_) {
        return core::make_error("server.overloaded",
                                "the store's write queue is full; the read was not made, retry");
      }
      queue_.push_back(entry{{}, queued_read{std::move(read), std::move(done)}});
    }
    cv_.notify_one();
    return {};
  }

  /// Batches (and ordered reads) queued or being written right now.
  std::size_t queued() const {
    std::lock_guard lock{mu_};
    return queue_.size() + in_flight_;
  }

  /// How many batches each group committed together (one fsync or one transaction each).
  const core::count_histogram& group_sizes() const { return group_sizes_; }

  /// Whether stop() began (later submits are refused).
  bool stopped() const {
    std::lock_guard lock{mu_};
    return stopping_;
  }

  /// Commits what is queued, then stops the writer thread. Idempotent.
  void stop() {
    {
      std::lock_guard lock{mu_};
      stopping_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable()) {
      writer_.join();
    }
  }

 private:
  /// A batch, or (its `read` set) a read.
  struct entry {
    pending write;
    queued_read read;
  };

  void run() {
    std::vector<pending> group, skipped;
    std::vector<queued_read> reads;
    for (;;) {
      {
        std::unique_lock lock{mu_};
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) {
          return;  // stopping and drained
        }
        group.clear();
        reads.clear();
        skipped.clear();
        forget_broken(std::chrono::steady_clock::now());
        while (!queue_.empty()) {
          auto& e = queue_.front();
          if (e.read.read) {
            reads.push_back(std::move(e.read));
          } else if (e.write.batch.origin != 0 && broken_.count(e.write.batch.origin)) {
            skipped.push_back(std::move(e.write));
          } else {
            group.push_back(std::move(e.write));
          }
          queue_.pop_front();
        }
        in_flight_ = group.size() + reads.size() + skipped.size();
      }
      for (auto& p : skipped) {
        p.done(core::make_error(
            "store.write_failed",
            "an earlier write of this unit failed, and this one was built on it: it was not "
            "applied; retry"));
      }
      core::result<void> r;
      if (!group.empty()) {
        group_sizes_.observe(group.size());
        r = commit_(group);
      }
      {
        // Before any answer: a writer that hears of the failure and submits again must find
        // its origin broken.
        std::lock_guard lock{mu_};
        auto now = std::chrono::steady_clock::now();
        for (auto& p : group) {
          bool failed = !r || (p.batch.refused && !p.batch.refused->code.empty());
          if (failed && p.batch.origin != 0) {
            broken_.emplace(p.batch.origin, now);
          }
        }
      }
      for (auto& p : group) {
        p.done(r);
      }
      // The group is durable (or failed): the reads queued with it see all of it.
      for (auto& q : reads) {
        if (r) {
          q.read();
        }
        q.done(r);
      }
      std::lock_guard lock{mu_};
      in_flight_ = 0;
    }
  }

  /// Broken origins are kept this long: their writer hears of the failure (and moves to a new
  /// origin) within moments, so later batches of a broken origin are ones it sent before that.
  /// Bounded in number too.
  static constexpr std::chrono::seconds broken_retention{60};
  static constexpr std::size_t max_broken = 65536;
  void forget_broken(std::chrono::steady_clock::time_point now) {
    if (broken_.empty() || (now < next_sweep_ && broken_.size() <= max_broken)) {
      return;
    }
    next_sweep_ = now + std::chrono::seconds{5};
    std::erase_if(broken_, [&](const auto& b) { return now - b.second > broken_retention; });
    if (broken_.size() > max_broken) {
      // Still too many (an outage across very many units): the oldest go first.
      std::vector<std::chrono::steady_clock::time_point> times;
      times.reserve(broken_.size());
      for (const auto& b : broken_) {
        times.push_back(b.second);
      }
      auto cut = times.begin() + static_cast<std::ptrdiff_t>(broken_.size() - max_broken);
      std::nth_element(times.begin(), cut, times.end());
      std::erase_if(broken_, [&](const auto& b) { return b.second < *cut; });
    }
  }

  const std::size_t capacity_;
  commit_function commit_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<entry> queue_;
  std::size_t in_flight_ = 0;
  bool stopping_ = false;
  core::count_histogram group_sizes_;
  std::unordered_map<std::uint64_t, std::chrono::steady_clock::time_point> broken_;
  std::chrono::steady_clock::time_point next_sweep_{};
  std::thread writer_;  // last: started once everything above exists
};

}  // namespace weir::store

// weir::core::count_histogram — a fixed-bucket histogram of small counts (how many write
// batches one group commit made durable together), observed by one thread and read by others
// without a lock (relaxed atomic counters), read as a Prometheus histogram like
// latency_histogram. The bounds are powers of two up to the store queue's usual capacity.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace weir::core {

class count_histogram {
 public:
  /// Upper bounds (inclusive); a last bucket (+Inf) takes the rest.
  static constexpr std::array<std::uint64_t, 12> bounds{1,  2,   4,   8,   16,   32,
                                                        64, 128, 256, 512, 1024, 4096};

  void observe(std::uint64_t v) {
    std::size_t i = 0;
    while (i < bounds.size() && v > bounds[i]) {
      ++i;
    }
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
  }

  /// Observations in bucket `i` alone (i == bounds.size(): above the last bound).
  std::uint64_t bucket(std::size_t i) const { return counts_[i].load(std::memory_order_relaxed); }
  std::uint64_t sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<std::uint64_t>, bounds.size() + 1> counts_{};
  std::atomic<std::uint64_t> sum_{0};
};

}  // namespace weir::core

// weir::core::latency_histogram — a fixed-bucket histogram of durations that many threads
// observe without a lock (relaxed atomic counters), read as a Prometheus histogram: cumulative
// counts per upper bound, the sum and the count. The bounds cover a write's life on this
// machine: half a millisecond (an embedded commit) to ten seconds (a commit that waited out a
// database restart).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace weir::core {

class latency_histogram {
 public:
  /// Upper bounds in seconds; a last bucket (+Inf) takes the rest.
  static constexpr std::array<double, 13> bounds{0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05,
                                                 0.1,    0.25,  0.5,   1,     2.5,  10};

  /// `n` observations of the same duration `d` (frames of one batch that share their write
  /// pay one pair of atomic adds, not one per frame).
  void observe(std::chrono::nanoseconds d, std::uint64_t n = 1) {
    double s = std::chrono::duration<double>(d).count();
    std::size_t i = 0;
    while (i < bounds.size() && s > bounds[i]) {
      ++i;
    }
    counts_[i].fetch_add(n, std::memory_order_relaxed);
    sum_ns_.fetch_add(static_cast<std::uint64_t>(d.count() > 0 ? d.count() : 0) * n,
                      std::memory_order_relaxed);
  }

  /// Observations in bucket `i` alone (i == bounds.size(): above the last bound).
  std::uint64_t bucket(std::size_t i) const { return counts_[i].load(std::memory_order_relaxed); }
  double sum_seconds() const {
    return static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  }

 private:
  std::array<std::atomic<std::uint64_t>, bounds.size() + 1> counts_{};
  std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace weir::core

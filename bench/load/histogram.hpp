// weir_load histogram — latency samples in logarithmic buckets (64 per power of two, so any
// percentile is within 1.6% of the truth) instead of a vector of every sample: a 10k-subscriber
// step delivers tens of millions of frames.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace weir::bench {

class histogram {
 public:
  void add(std::int64_t ns) {
    auto v = static_cast<std::uint64_t>(ns < 1 ? 1 : ns);
    ++counts_[index(v)];
    ++count_;
    if (v > max_) {
      max_ = v;
    }
  }
  std::uint64_t count() const { return count_; }
  std::uint64_t max() const { return max_; }

  /// The value below which a fraction `p` of the samples lie (bucket midpoint), 0 when empty.
  std::uint64_t percentile(double p) const {
    if (count_ == 0) {
      return 0;
    }
    auto target = static_cast<std::uint64_t>(p * static_cast<double>(count_ - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= target) {
        auto v = value_of(i);
        return v > max_ ? max_ : v;
      }
    }
    return max_;
  }

  void clear() { *this = histogram{}; }

 private:
  static constexpr int sub_bits = 6;  // 64 buckets per power of two
  static std::size_t index(std::uint64_t v) {
    int msb = 63 - std::countl_zero(v);
    if (msb < sub_bits) {
      return static_cast<std::size_t>(v);
    }
    auto sub = (v >> (msb - sub_bits)) & ((1u << sub_bits) - 1);
    return static_cast<std::size_t>((msb - sub_bits + 1) << sub_bits) + sub;
  }
  static std::uint64_t value_of(std::size_t i) {
    if (i < (1u << sub_bits)) {
      return i;
    }
    auto msb = static_cast<int>(i >> sub_bits) + sub_bits - 1;
    auto sub = i & ((1u << sub_bits) - 1);
    auto lo = (std::uint64_t{1} << msb) | (sub << (msb - sub_bits));
    return lo + (std::uint64_t{1} << (msb - sub_bits)) / 2;
  }

  std::array<std::uint64_t, 64 * 64> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t max_ = 0;
};

}  // namespace weir::bench

// weir::actors::skipped_rows — the rows a unit load or change capture read from the store and
// did not serve (not a record, outside the record limits): a running count for /metrics and
// the most recent few, with their unit, id and reason, for /cluster/health. Each skip is also
// logged where it happens. Bounded: an operator needs the latest examples, not every row.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace weir::actors {

class skipped_rows {
 public:
  struct entry {
    std::string space, object, dataset, id;
    std::string code;        ///< the limit or rule it broke (record.too_deep, …)
    std::string reason;      ///< the message a write would have been refused with
    std::int64_t at_ms = 0;  ///< wall clock, milliseconds since the epoch (set by add)
  };
  /// How many of the latest skips are kept.
  static constexpr std::size_t kept = 16;

  void add(entry e) {
    e.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    total_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock{mu_};
    if (recent_.size() == kept) {
      recent_.pop_front();
    }
    recent_.push_back(std::move(e));
  }
  std::uint64_t total() const { return total_.load(std::memory_order_relaxed); }
  /// The latest skips, oldest first.
  std::vector<entry> recent() const {
    std::lock_guard lock{mu_};
    return {recent_.begin(), recent_.end()};
  }

 private:
  std::atomic<std::uint64_t> total_{0};
  mutable std::mutex mu_;
  std::deque<entry> recent_;
};

}  // namespace weir::actors

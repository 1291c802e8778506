// weir::app demo — `weir serve --demo`: a built-in configuration with demo queries (a task
// board, bank accounts, a chat), seed data, and a background writer that changes a few records
// every second so a newcomer sees a live stream at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>

namespace weir::actors {
class runtime;
}

namespace weir::app {

/// The demo's YAML configuration (queries and node defaults).
std::string_view demo_config_yaml();

/// Seeds demo data and changes a few records every `period_ms` until destroyed.
class demo_writer {
 public:
  demo_writer(actors::runtime& rt, std::uint64_t seed, std::int64_t period_ms = 1000);
  ~demo_writer();
  demo_writer(const demo_writer&) = delete;
  demo_writer& operator=(const demo_writer&) = delete;

 private:
  void run(std::uint64_t seed, std::int64_t period_ms);
  actors::runtime& rt_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace weir::app

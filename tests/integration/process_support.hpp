// Process-level test support: the real `weir serve` binary as a child process (its stderr
// captured), for the tests that SIGKILL, SIGTERM and restart nodes or run several of them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace weir::test {

/// `weir serve <args>` as a child process; SIGKILLed at destruction at the latest. The
/// constructor waits (20 s at most) for the "serving HTTP/WebSocket on" line.
class weir_process {
 public:
  explicit weir_process(std::vector<std::string> serve_args);
  weir_process(const std::string& config, const std::string& data_dir);
  ~weir_process();
  weir_process(const weir_process&) = delete;
  weir_process& operator=(const weir_process&) = delete;

  std::uint16_t port() const { return port_; }
  bool started() const { return port_ != 0; }

  void kill();
  /// SIGTERM, then waits up to `timeout` for the exit; returns the exit status (-1: timed out,
  /// then SIGKILLed).
  int terminate(std::chrono::milliseconds timeout);
  std::string log();

 private:
  void drain();
  void parse_port();
  void reap();

  pid_t pid_ = -1;
  int fd_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string log_;
  std::uint16_t port_ = 0;
  bool eof_ = false;
};

/// A TCP port on 127.0.0.1 that was free a moment ago.
std::uint16_t free_port();

}  // namespace weir::test

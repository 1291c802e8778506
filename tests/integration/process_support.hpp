// Process-level test support: the real `weir serve` binary as a child process (its stderr
// captured), for the tests that SIGKILL, SIGTERM and restart nodes or run several of them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
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
  /// The child's pid while it runs (-1 once it was reaped); for SIGSTOP/SIGCONT.
  pid_t pid() const { return pid_; }
  /// Whether it still runs (an exit is reaped here).
  bool running();
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

/// Any program as a child process (a Node.js client, say): its stdout read line by line, its
/// stderr kept for failure messages; SIGKILLed at destruction at the latest.
class child_process {
 public:
  /// Runs `argv` (argv[0] a path) with `env` added to this process's environment.
  child_process(std::vector<std::string> argv, std::vector<std::string> env = {});
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  /// The next stdout line that satisfies `pred` (earlier ones are skipped), or nullopt when
  /// none comes within `timeout` or the program exited.
  std::optional<std::string> wait_line(const std::function<bool(const std::string&)>& pred,
                                       std::chrono::milliseconds timeout);
  std::string stderr_text();
  bool running();
  void kill();

 private:
  void pump(int fd, bool out);

  pid_t pid_ = -1;
  std::thread out_reader_, err_reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> lines_;
  std::string partial_;
  std::string err_;
  bool out_eof_ = false;
};

/// A TCP port on 127.0.0.1 that was free a moment ago, outside the ephemeral range (so no
/// outgoing connection takes it before a child process binds it), and never handed out twice
/// while this process lives, nor to a parallel test process (a per-port flock claim).
std::uint16_t free_port();

}  // namespace weir::test

// The real binary as a child process (see process_support.hpp).
#include "process_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <mutex>
#include <random>
#include <string>

namespace weir::test {

using namespace std::chrono_literals;

weir_process::weir_process(const std::string& config, const std::string& data_dir)
    : weir_process(std::vector<std::string>{"--config", config, "--data-dir", data_dir}) {}

weir_process::weir_process(std::vector<std::string> serve_args) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2 failed";
    return;
  }
  // WEIR_BINARY in the environment runs another build (a long chaos run keeps a copy of its
  // own while the tree is rebuilt).
  const char* binary = std::getenv("WEIR_BINARY") ? std::getenv("WEIR_BINARY") : WEIR_BINARY;
  std::vector<std::string> args{binary, "serve"};
  args.insert(args.end(), serve_args.begin(), serve_args.end());
  std::vector<char*> argv;
  for (auto& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    // Only async-signal-safe calls until exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
      _exit(127);
    }
    dup2(fds[1], 2);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, 1);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  if (pid_ < 0) {
    close(fds[0]);
    ADD_FAILURE() << "fork failed";
    return;
  }
  fd_ = fds[0];
  reader_ = std::thread([this] { drain(); });
  std::unique_lock lock{mu_};
  if (!cv_.wait_for(lock, 20s, [this] { return port_ != 0 || eof_; }) || port_ == 0) {
    ADD_FAILURE() << "weir did not report its port; stderr so far:\n" << log_;
  }
}

weir_process::~weir_process() {
  kill();
}

void weir_process::kill() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  reap();
}

bool weir_process::running() {
  if (pid_ <= 0) {
    return false;
  }
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    reap();
    return false;
  }
  return true;
}

int weir_process::terminate(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) {
    return -1;
  }
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      reap();
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(10ms);
  }
  kill();
  return -1;
}

void weir_process::reap() {
  if (reader_.joinable()) {
    reader_.join();
  }
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
}

std::string weir_process::log() {
  std::lock_guard lock{mu_};
  return log_;
}

void weir_process::drain() {
  char buf[4096];
  for (;;) {
    auto n = ::read(fd_, buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    std::lock_guard lock{mu_};
    log_.append(buf, static_cast<std::size_t>(n));
    if (port_ == 0) {
      parse_port();
    }
    cv_.notify_all();
  }
  std::lock_guard lock{mu_};
  eof_ = true;
  cv_.notify_all();
}

// "<time> info serving HTTP/WebSocket on 127.0.0.1:<port>, gRPC on ..." (or the same message in
// a JSON line)
void weir_process::parse_port() {
  static const std::string marker = "serving HTTP/WebSocket on ";
  auto at = log_.find(marker);
  if (at == std::string::npos) {
    return;
  }
  auto end = log_.find_first_of(",\n", at);
  if (end == std::string::npos) {
    return;
  }
  auto addr = log_.substr(at + marker.size(), end - at - marker.size());
  auto colon = addr.rfind(':');
  if (colon != std::string::npos) {
    port_ = static_cast<std::uint16_t>(std::stoul(addr.substr(colon + 1)));
  }
}

std::uint16_t free_port() {
  // A port the child binds later must not be one the kernel hands out meanwhile: every
  // outgoing connection (of this or a parallel test) takes an ephemeral port, from
  // ip_local_port_range (32768–60999 by default). So pick at random below that range, from
  // 20000–32767. A bind check alone does not stop two picks of one port before either child
  // binds it (this process picking twice, or a parallel test process): each pick is claimed
  // with an flock on a per-port file, held until this process exits (the kernel drops it
  // then, even on a crash), and a port is only handed out once its claim is won.
  static std::mt19937 rng{std::random_device{}()};
  static std::mutex mu;
  std::lock_guard lock{mu};
  std::uniform_int_distribution<int> pick{20000, 32767};
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string{tmp && *tmp ? tmp : "/tmp"} + "/weir-test-ports";
  mkdir(dir.c_str(), 0777);
  for (int attempt = 0; attempt < 500; ++attempt) {
    auto port = static_cast<std::uint16_t>(pick(rng));
    auto path = dir + "/" + std::to_string(port);
    int claim = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (claim < 0) {
      continue;
    }
    if (flock(claim, LOCK_EX | LOCK_NB) != 0) {
      close(claim);  // claimed by this process earlier, or by a live parallel test
      continue;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(fd);
    if (ok) {
      return port;  // `claim` stays open (and locked) for the life of the process
    }
    close(claim);
  }
  ADD_FAILURE() << "no free port found in 20000-32767";
  return 0;
}

child_process::child_process(std::vector<std::string> argv, std::vector<std::string> env) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2 failed";
    return;
  }
  std::vector<char*> args;
  for (auto& a : argv) {
    args.push_back(a.data());
  }
  args.push_back(nullptr);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    envs.emplace_back(*e);
  }
  envs.insert(envs.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : envs) {
    envp.push_back(e.data());
  }
  envp.push_back(nullptr);
  pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
      _exit(127);
    }
    dup2(out[1], 1);
    dup2(err[1], 2);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid_ < 0) {
    close(out[0]);
    close(err[0]);
    ADD_FAILURE() << "fork failed";
    return;
  }
  out_reader_ = std::thread([this, fd = out[0]] { pump(fd, true); });
  err_reader_ = std::thread([this, fd = err[0]] { pump(fd, false); });
}

void child_process::pump(int fd, bool out) {
  char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    std::lock_guard lock{mu_};
    if (!out) {
      err_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    partial_.append(buf, static_cast<std::size_t>(n));
    for (auto nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n')) {
      lines_.push_back(partial_.substr(0, nl));
      partial_.erase(0, nl + 1);
    }
    cv_.notify_all();
  }
  close(fd);
  if (out) {
    std::lock_guard lock{mu_};
    out_eof_ = true;
    cv_.notify_all();
  }
}

std::optional<std::string> child_process::wait_line(
    const std::function<bool(const std::string&)>& pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock{mu_};
  for (;;) {
    while (!lines_.empty()) {
      auto line = std::move(lines_.front());
      lines_.pop_front();
      if (pred(line)) {
        return line;
      }
    }
    if (out_eof_) {
      return std::nullopt;
    }
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && lines_.empty()) {
      return std::nullopt;
    }
  }
}

std::string child_process::stderr_text() {
  std::lock_guard lock{mu_};
  return err_;
}

bool child_process::running() {
  if (pid_ <= 0) {
    return false;
  }
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void child_process::kill() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  if (out_reader_.joinable()) {
    out_reader_.join();
  }
  if (err_reader_.joinable()) {
    err_reader_.join();
  }
}

child_process::~child_process() {
  kill();
}

}  // namespace weir::test

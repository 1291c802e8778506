// /proc readers for weir_load.
#include "proc_stats.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

namespace weir::bench {

namespace {
std::string read_file(const char* path) {
  std::string out;
  FILE* f = std::fopen(path, "r");
  if (!f) {
    return out;
  }
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    out.append(buf, n);
  }
  std::fclose(f);
  return out;
}

std::uint64_t sockstat_field(const char* name) {
  auto s = read_file("/proc/net/sockstat");
  auto line = s.find("TCP:");
  if (line == std::string::npos) {
    return 0;
  }
  auto end = s.find('\n', line);
  auto tcp = s.substr(line, end - line);
  auto p = tcp.find(std::string{" "} + name + " ");
  if (p == std::string::npos) {
    return 0;
  }
  return std::strtoull(tcp.c_str() + p + std::strlen(name) + 2, nullptr, 10);
}
}  // namespace

cpu_split process_cpu_split(int pid) {
  if (pid <= 0) {
    return {};
  }
  auto s = read_file(("/proc/" + std::to_string(pid) + "/stat").c_str());
  auto p = s.rfind(')');
  if (p == std::string::npos) {
    return {};
  }
  unsigned long utime = 0, stime = 0;
  std::sscanf(s.c_str() + p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
              &stime);
  auto tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return {static_cast<double>(utime) / tick, static_cast<double>(stime) / tick};
}

double process_cpu_seconds(int pid) {
  auto c = process_cpu_split(pid);
  return c.user + c.system;
}

std::uint64_t process_rss_bytes(int pid) {
  if (pid <= 0) {
    return 0;
  }
  auto s = read_file(("/proc/" + std::to_string(pid) + "/status").c_str());
  auto p = s.find("VmRSS:");
  if (p == std::string::npos) {
    return 0;
  }
  return std::strtoull(s.c_str() + p + 6, nullptr, 10) * 1024;
}

double self_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

std::uint64_t tcp_socket_memory_bytes() {
  return sockstat_field("mem") * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

std::uint64_t tcp_sockets_in_use() {
  return sockstat_field("inuse");
}

std::int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace weir::bench

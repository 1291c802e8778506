// weir_load process and kernel figures, read from /proc: a server's CPU time and resident set,
// this process's CPU time, and the kernel's TCP socket memory (/proc/net/sockstat).
#pragma once

#include <cstdint>

namespace weir::bench {

/// CPU seconds of a process, split: `system` includes the kernel's TCP work done on the
/// process's behalf (over loopback, the receiving side's too).
struct cpu_split {
  double user = 0;
  double system = 0;
};
/// CPU seconds of process `pid` by user and system time, in clock ticks (10 ms here); zeros
/// when it cannot be read.
cpu_split process_cpu_split(int pid);
/// User + system CPU seconds of process `pid` (0 when it cannot be read).
double process_cpu_seconds(int pid);
/// Resident set of `pid` in bytes (VmRSS; 0 when it cannot be read).
std::uint64_t process_rss_bytes(int pid);
/// This process's user + system CPU seconds.
double self_cpu_seconds();
/// Kernel memory held by TCP sockets, in bytes ("TCP: … mem <pages>").
std::uint64_t tcp_socket_memory_bytes();
/// TCP sockets in use ("TCP: inuse <n>").
std::uint64_t tcp_sockets_in_use();
/// Monotonic clock, nanoseconds.
std::int64_t mono_ns();

}  // namespace weir::bench

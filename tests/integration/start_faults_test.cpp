// A start that cannot have its ports (issue 23): the `weir` binary exits with
// `server.bind_failed` and the system's reason for each listener (HTTP, gRPC, peer gRPC), and
// an elastic member whose HTTP port is taken exits before it registers in the membership.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "cluster_support.hpp"
#include "pg_instance.hpp"
#include "process_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

using namespace std::chrono_literals;

/// Holds a loopback port (bound and listening) until it goes.
struct taken_port {
  int fd = -1;
  std::uint16_t port = 0;
  taken_port() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0 && ::listen(fd, 1) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
  }
  ~taken_port() { ::close(fd); }
};

std::string node_yaml(std::uint16_t http, std::uint16_t grpc, std::uint16_t peer) {
  return "node:\n  http: \"127.0.0.1:" + std::to_string(http) +
         "\"\n  grpc: \"127.0.0.1:" + std::to_string(grpc) +
         "\"\n  peer: \"127.0.0.1:" + std::to_string(peer) + "\"\n";
}

/// Runs `weir serve` on `yaml` (plus the default queries) and returns its output once it exited
/// (it must not start).
std::string failed_start(const temp_dir& dir, const std::string& yaml) {
  auto config = dir.path() + "/weir.yaml";
  std::ofstream{config} << yaml << default_queries_yaml();
  child_process p{{WEIR_BINARY, "serve", "--config", config, "--data-dir", dir.path() + "/d"}};
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (p.running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_FALSE(p.running()) << "weir started although a port was taken";
  // The exit can be reaped before the reader thread took the last line from the pipe.
  deadline = std::chrono::steady_clock::now() + 5s;
  while (p.stderr_text().find("weir: ") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  return p.stderr_text();
}

TEST(StartFaults, EachListenerThatCannotBindFailsTheStartWithItsCodeAndReason) {
  taken_port taken;
  ASSERT_NE(taken.port, 0);
  temp_dir dir;
  auto http_log = failed_start(dir, node_yaml(taken.port, free_port(), free_port()));
  EXPECT_NE(http_log.find("weir: server.bind_failed: cannot listen on 127.0.0.1:" +
                          std::to_string(taken.port)),
            std::string::npos)
      << http_log;
  EXPECT_NE(http_log.find("in use"), std::string::npos) << http_log;

  auto grpc_log = failed_start(dir, node_yaml(free_port(), taken.port, free_port()));
  EXPECT_NE(grpc_log.find("weir: server.bind_failed: cannot serve gRPC on 127.0.0.1:" +
                          std::to_string(taken.port) + ": Address already in use"),
            std::string::npos)
      << grpc_log;
  // gRPC's own complaint, if any, comes as a line of Weir's log, not in gRPC's format.
  EXPECT_EQ(grpc_log.find("\nE1"), std::string::npos) << grpc_log;
}

TEST(StartFaults, AnElasticMemberThatCannotBindHttpNeverRegisters) {
  pg_instance pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  taken_port taken;
  ASSERT_NE(taken.port, 0);
  temp_dir dir;
  auto peer = free_port();
  auto log =
      failed_start(dir, node_yaml(taken.port, free_port(), peer) + "cluster:\n  nodeId: a\n" +
                            "  advertise: { peer: \"127.0.0.1:" + std::to_string(peer) +
                            "\", http: \"127.0.0.1:" + std::to_string(taken.port) +
                            "\" }\n  token: \"" + cluster3::peer_token + "\"\n" + pg.store_yaml());
  EXPECT_NE(log.find("server.bind_failed"), std::string::npos) << log;
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_members"), "0");
}

}  // namespace
}  // namespace weir::test

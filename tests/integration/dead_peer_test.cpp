// A client that vanishes without a FIN or an RST (a host powered off, a NAT that forgot the
// connection) must not hold its stream, its budget slot and its subscriptions for ever: every
// streaming session has the kernel probe a silent peer (TCP keep-alive) besides bounding data
// the peer does not acknowledge (gateway/watched_write.hpp, watch_for_dead_peer). A stream that
// writes nothing for long (a direct stream on a query that rarely changes) had neither armed.
// Checked from the kernel's side: /proc/net/tcp shows the keep-alive timer of every open stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sse_test_support.hpp"
#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

struct server_socket {
  unsigned remote_port = 0;
  int timer = 0;  ///< /proc/net/tcp's "tr": 0 none, 1 retransmission, 2 keep-alive, 4 probe
};

/// The established TCP sockets whose local port is `port` (the node's side of its connections).
std::vector<server_socket> established_on(std::uint16_t port) {
  std::vector<server_socket> out;
  std::ifstream in{"/proc/net/tcp"};
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream f{line};
    std::string sl, local, remote, st, queues, timer;
    f >> sl >> local >> remote >> st >> queues >> timer;
    if (st != "01") {
      continue;  // not ESTABLISHED
    }
    if (std::stoul(local.substr(local.find(':') + 1), nullptr, 16) != port) {
      continue;
    }
    out.push_back(
        {static_cast<unsigned>(std::stoul(remote.substr(remote.find(':') + 1), nullptr, 16)),
         std::stoi(timer.substr(0, timer.find(':')), nullptr, 16)});
  }
  return out;
}

TEST(DeadPeer, EveryOpenStreamHasTheKernelProbeASilentClient) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");

  // A direct SSE query stream: after its first result it writes nothing until a change.
  sse_client::options direct;
  direct.target = "/api/t/items?obj=o1";
  direct.headers = {{"Accept", "text/event-stream"}};
  sse_client direct_stream{port, direct};
  ASSERT_EQ(direct_stream.status(), 200u);
  direct_stream.read_json();
  // The SSE hub, the WebSocket hub and a windowed stream.
  sse_client hub{port};
  ASSERT_EQ(hub.status(), 200u);
  hub.read_json();  // Connected
  ws_client ws{port};
  ws.expect_connected();
  windowed_stream window{port, "t", "object", R"({"objectId":"o1","dataset":"items"})"};
  ASSERT_EQ(window.status(), 200u);
  window.open();
  // The admin page's stats stream.
  sse_client::options admin;
  admin.target = "/ui/events";
  sse_client stats{port, admin};
  ASSERT_EQ(stats.status(), 200u) << stats.response().body;
  ASSERT_TRUE(stats.read_event());

  // Every connection still open is one of the five streams (each request of put_record had a
  // connection of its own, closed by now). A socket whose last segment the client has not
  // acknowledged yet shows the retransmission timer instead, for a moment: read until each
  // shows its keep-alive timer, or the deadline.
  std::vector<server_socket> open;
  auto all_probed = [&] {
    return open.size() == 5 &&
           std::all_of(open.begin(), open.end(), [](const auto& s) { return s.timer == 2; });
  };
  for (auto until = std::chrono::steady_clock::now() + 3s;
       std::chrono::steady_clock::now() < until;) {
    open = established_on(port);
    if (all_probed()) {
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(open.size(), 5u) << "expected the five streams' connections";
  for (const auto& s : open) {
    EXPECT_EQ(s.timer, 2) << "the connection from port " << s.remote_port
                          << " has no keep-alive timer: a client gone silent would hold it";
  }
}

}  // namespace
}  // namespace weir::test

// The node's connection budget (http.maxConnections, http.maxConnectionsPerClient): a connection
// over it is answered 503 with Retry-After and closed, and a slot comes back when its connection
// ends, whatever session held it (a plain request, a hub, a stream).
#include <gtest/gtest.h>

#include <thread>

#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

using namespace std::chrono_literals;

/// Sends GET /livez on `c` and returns the status (0: no answer).
unsigned livez(std::uint16_t port, raw_connection& c) {
  c.send_all(build_request(port, "GET", "/livez", {}, ""));
  return read_response(c, false).status;
}

TEST(ConnectionLimits, OverTheBudgetIs503AndASlotComesBackWithItsConnection) {
  temp_dir dir;
  auto node = start_node(dir.path(), "http: { maxConnections: 4, maxConnectionsPerClient: 3 }\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  std::vector<std::unique_ptr<raw_connection>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<raw_connection>(port));
    EXPECT_EQ(livez(port, *held.back()), 200u);  // keep-alive: the connection stays open
  }
  // A fourth from the same client: over its own budget.
  raw_connection over{port};
  auto r = read_response(over, false);
  EXPECT_EQ(r.status, 503u);
  EXPECT_EQ(r.header("retry-after"), "1");
  EXPECT_NE(r.body.find("server.overloaded"), std::string::npos);
  if (loopback_alias_usable("127.0.0.2") && loopback_alias_usable("127.0.0.3")) {
    raw_connection other{port, "127.0.0.2"};
    EXPECT_EQ(livez(port, other), 200u);  // another client still gets in…
    raw_connection fifth{port, "127.0.0.3"};
    EXPECT_EQ(read_response(fifth, false).status, 503u);  // …until the node's budget is spent
  }
  // A hub connection holds a slot too, and gives it back when it ends.
  held.pop_back();
  std::unique_ptr<ws_client> ws;
  for (int attempt = 0; attempt < 50 && !ws; ++attempt) {
    try {
      ws = std::make_unique<ws_client>(port);
    } catch (const std::exception&) {
      std::this_thread::sleep_for(20ms);  // the closed connection's slot is returned async
    }
  }
  ASSERT_TRUE(ws);
  ws->expect_connected();
  raw_connection still_over{port};
  EXPECT_EQ(read_response(still_over, false).status, 503u);
  ws.reset();
  unsigned status = 0;
  for (int attempt = 0; attempt < 50 && status != 200; ++attempt) {
    raw_connection again{port};
    status = livez(port, again);
    if (status != 200) {
      std::this_thread::sleep_for(20ms);
    }
  }
  EXPECT_EQ(status, 200u);
}

}  // namespace
}  // namespace weir::test

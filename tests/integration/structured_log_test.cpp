// The node's log as a log shipper reads it: `--log-format json` writes one JSON object per line
// (time, level, node, message, fields); at debug each connection's open and close carry the
// correlation id its upgrade answered with, and a refusal is an info line with its code.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

#include <chrono>
#include <sstream>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "process_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

std::vector<boost::json::object> json_lines(const std::string& log) {
  std::vector<boost::json::object> out;
  std::istringstream in{log};
  std::string line;
  while (std::getline(in, line)) {
    boost::system::error_code ec;
    auto v = boost::json::parse(line, ec);
    EXPECT_FALSE(ec) << "not a JSON line: " << line;
    if (!ec && v.is_object()) {
      out.push_back(v.as_object());
    } else {
      ADD_FAILURE() << "not a JSON object: " << line;
    }
  }
  return out;
}

const boost::json::object* find(const std::vector<boost::json::object>& lines, std::string_view msg,
                                std::string_view correlation = {}) {
  auto text = [](const boost::json::object& l, std::string_view key) -> std::string_view {
    auto it = l.find(key);
    return it != l.end() && it->value().is_string() ? std::string_view{it->value().get_string()}
                                                    : std::string_view{};
  };
  for (const auto& l : lines) {
    if (text(l, "msg") == msg && (correlation.empty() || text(l, "correlation") == correlation)) {
      return &l;
    }
  }
  return nullptr;
}

TEST(StructuredLog, JsonLinesCarryConnectionsAndRefusalsWithTheirCorrelationId) {
  temp_dir dir;
  weir_process node{{"--http", "127.0.0.1:" + std::to_string(free_port()), "--grpc",
                     "127.0.0.1:" + std::to_string(free_port()), "--data-dir", dir.path() + "/data",
                     "--log-format", "json", "--log-level", "debug"}};
  ASSERT_TRUE(node.started()) << node.log();
  // The client's own correlation ids (the node keeps them: they are UUIDs).
  const std::string correlation = "6f1c2a1e-8b7d-4c3e-9a2b-1d2e3f4a5b6c";
  {
    ws_client hub{node.port(), "/.cratis/queries/ws", {{"X-Correlation-ID", correlation}}};
    hub.expect_connected();
  }
  const std::string refused_correlation = "7a2d3b4c-5e6f-4a1b-8c9d-0e1f2a3b4c5d";
  auto refused = http(node.port(), "GET", "/v1/spaces/nowhere/objects/o/datasets/d/records/r", "",
                      {{"X-Correlation-ID", refused_correlation}});
  EXPECT_GE(refused.status, 400u);
  EXPECT_EQ(refused.headers["x-correlation-id"], refused_correlation);
  std::vector<boost::json::object> lines;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    lines = json_lines(node.log());
  } while ((!find(lines, "connection closed", correlation) ||
            !find(lines, "request refused", refused_correlation)) &&
           std::chrono::steady_clock::now() < deadline);

  const boost::json::object* serving = nullptr;
  for (const auto& l : lines) {
    if (l.at("msg").as_string().starts_with("serving HTTP/WebSocket on")) {
      serving = &l;
    }
  }
  ASSERT_TRUE(serving) << node.log();
  EXPECT_EQ(serving->at("level"), "info");
  EXPECT_FALSE(serving->contains("node")) << "a single node has no id to log";
  EXPECT_TRUE(serving->at("ts").as_string().ends_with("Z"));
  EXPECT_EQ(serving->at("backend"), "embedded");

  const auto* opened = find(lines, "connection opened", correlation);
  ASSERT_TRUE(opened) << node.log();
  EXPECT_EQ(opened->at("level"), "debug");
  EXPECT_EQ(opened->at("transport"), "websocket");
  EXPECT_EQ(opened->at("remote"), "127.0.0.1");
  const auto* closed = find(lines, "connection closed", correlation);
  ASSERT_TRUE(closed) << node.log();
  EXPECT_EQ(closed->at("frames").to_number<std::uint64_t>(), 1u);  // Connected

  const auto* refusal = find(lines, "request refused", refused_correlation);
  ASSERT_TRUE(refusal) << node.log();
  EXPECT_EQ(refusal->at("level"), "info");
  EXPECT_EQ(refusal->at("status").to_number<unsigned>(), refused.status);
  EXPECT_FALSE(refusal->at("code").as_string().empty());

  EXPECT_EQ(node.terminate(std::chrono::seconds(10)), 0);
  lines = json_lines(node.log());
  EXPECT_TRUE(find(lines, "draining"));
  EXPECT_TRUE(find(lines, "stopped"));
}

TEST(StructuredLog, AtInfoConnectionsAreNotLoggedAndBadFlagsAreRefused) {
  temp_dir dir;
  weir_process node{{"--http", "127.0.0.1:" + std::to_string(free_port()), "--grpc",
                     "127.0.0.1:" + std::to_string(free_port()), "--data-dir",
                     dir.path() + "/data"}};
  ASSERT_TRUE(node.started()) << node.log();
  {
    ws_client hub{node.port()};
    hub.expect_connected();
  }
  // Whatever the connection would have logged is written before the node's last line.
  ASSERT_EQ(node.terminate(std::chrono::seconds(10)), 0) << node.log();
  EXPECT_NE(node.log().find(" info node stopped"), std::string::npos) << node.log();
  EXPECT_EQ(node.log().find("connection opened"), std::string::npos) << node.log();
  EXPECT_NE(node.log().find(" info serving HTTP/WebSocket on "), std::string::npos) << node.log();

  std::string output;
  auto* pipe = popen(WEIR_BINARY " serve --log-level verbose --check 2>&1", "r");
  ASSERT_TRUE(pipe);
  char buf[512];
  while (auto n = fread(buf, 1, sizeof buf, pipe)) {
    output.append(buf, n);
  }
  int status = pclose(pipe);
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(output.find("--log-level wants debug, info, warn, error or off"), std::string::npos)
      << output;
}

}  // namespace
}  // namespace weir::test

// Seed 002's own client — the fetch-streaming retry loop, run by Node.js as written in the seed
// (tests/node/seed_client.mjs) — against a real `weir serve`: it must open the chat's window of
// 50, follow writes and deletes in it, and come back by itself after the node restarts (the
// stream ends with `closed{server_shutdown}`, the loop retries until the node answers again).
#include <gtest/gtest.h>

#include <fstream>

#include <boost/json.hpp>

#include "process_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

/// A predicate on the client's window lines: `size` messages, newest `newest`, oldest `oldest`,
/// without `missing`.
std::function<bool(const std::string&)> window_is(int size, int newest, int oldest,
                                                  int missing = 0) {
  return [=](const std::string& line) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object()) {
      return false;
    }
    auto& o = v.as_object();
    auto& ids = o.at("ids").as_array();
    if (o.at("size").to_number<int>() != size || ids.empty()) {
      return false;
    }
    if (ids.front() != json::value("m" + std::to_string(newest)) ||
        ids.back() != json::value("m" + std::to_string(oldest))) {
      return false;
    }
    for (auto& id : ids) {
      if (missing && id == json::value("m" + std::to_string(missing))) {
        return false;
      }
    }
    return true;
  };
}

TEST(SeedClient, TheSeedsLoopFollowsAChatWindowAcrossARestart) {
  ASSERT_STRNE(WEIR_NODE, "") << "Node.js is needed for this test: scripts/setup installs it";
  temp_dir dir;
  auto port = free_port();
  auto config = dir.path() + "/weir.yaml";
  {
    std::ofstream f{config};
    f << "node:\n  http: \"127.0.0.1:" << port << "\"\n  grpc: \"127.0.0.1:" << free_port()
      << "\"\n";
  }
  auto data = dir.path() + "/data";
  auto node = std::make_unique<weir_process>(config, data);
  ASSERT_TRUE(node->started());
  auto say = [&](int i) {
    put_record(port, "s", "general", "chat_messages", "m" + std::to_string(i),
               R"({"text":"message )" + std::to_string(i) + R"("})");
  };
  for (int i = 1; i <= 60; ++i) {
    say(i);
  }
  child_process client{{WEIR_NODE, WEIR_SEED_CLIENT},
                       {"WEIR_API=http://127.0.0.1:" + std::to_string(port) + "/v1", "WEIR_SPACE=s",
                        "WEIR_CHAT=general"}};
  auto fail = [&] { return "client stderr:\n" + client.stderr_text(); };
  ASSERT_TRUE(client.wait_line(window_is(50, 60, 11), 15s)) << fail();
  for (int i = 61; i <= 65; ++i) {
    say(i);
  }
  ASSERT_TRUE(client.wait_line(window_is(50, 65, 16), 10s)) << fail();
  auto r = http(port, "DELETE", "/v1/spaces/s/objects/general/datasets/chat_messages/records/m63");
  ASSERT_EQ(r.status, 200u) << r.body;
  // The window stays 50 long: m15 is read back in behind it.
  ASSERT_TRUE(client.wait_line(window_is(50, 65, 15, 63), 10s)) << fail();
  // A restart: the stream closes with server_shutdown and the loop subscribes again.
  EXPECT_EQ(node->terminate(15s), 0);
  node = std::make_unique<weir_process>(config, data);
  ASSERT_TRUE(node->started());
  // Only a new subscription can see this write: the old stream ended with the old node.
  say(66);
  ASSERT_TRUE(client.wait_line(window_is(50, 66, 16, 63), 20s)) << fail();
}

}  // namespace
}  // namespace weir::test

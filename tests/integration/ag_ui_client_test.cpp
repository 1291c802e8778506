// The AG-UI state stream read by AG-UI's own client from npm (@ag-ui/client, run by Node.js from
// tests/node/ag_ui_state_client.mjs): every event passes @ag-ui/core's schema, and the state the
// client builds with its own defaultApplyEvents ends equal to a fresh query after random writes
// (PUTs, JSON Patches, deletes) on one node and through a remote owner in a cluster.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "cluster_support.hpp"
#include "patch_follower.hpp"
#include "process_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

/// The document a fresh query returns, as AG-UI state: `{}` when there is none.
json::value fresh_state(std::uint16_t port, const std::string& object) {
  auto r = http(port, "GET", "/api/t/objects/one?obj=" + object);
  EXPECT_EQ(r.status, 200u) << r.body;
  auto o = r.json().as_object();
  if (const auto* d = o.if_contains("data")) {
    return *d;
  }
  return json::object{};
}

std::function<bool(const std::string&)> state_is(const json::value& want) {
  return [want](const std::string& line) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    return !ec && v.is_object() && v.as_object().contains("state") &&
           v.as_object().at("state") == want;
  };
}

/// Runs the npm client on `url` while `writer` makes `writes` random writes, then waits until
/// the client's state is what a fresh query on `read_port` returns.
void follow_with_the_npm_client(const std::string& url, random_document_writer& writer,
                                std::uint16_t read_port, int writes) {
  ASSERT_STRNE(WEIR_NODE, "") << "Node.js is needed for this test: scripts/setup installs it";
  child_process client{{WEIR_NODE, WEIR_AG_UI_CLIENT, url}};
  auto fail = [&] { return "client stderr:\n" + client.stderr_text(); };
  ASSERT_TRUE(client.wait_line(state_is(fresh_state(read_port, writer.object())), 20s)) << fail();
  for (int i = 0; i < writes; ++i) {
    ASSERT_FALSE(writer.step().empty());
  }
  ASSERT_TRUE(client.wait_line(state_is(fresh_state(read_port, writer.object())), 20s)) << fail();
  // One more write after the burst: the stream is still live.
  ASSERT_FALSE(writer.step().empty());
  auto last = client.wait_line(state_is(fresh_state(read_port, writer.object())), 20s);
  ASSERT_TRUE(last) << fail();
  // The client got there by applying deltas, not by snapshots alone.
  EXPECT_GT(json::parse(*last).at("deltas").to_number<int>(), writes / 2) << *last;
  EXPECT_TRUE(client.running()) << fail();
}

TEST(AgUiClient, TheNpmClientFollowsAStateStreamToTheSameDocument) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");  // the space exists
  random_document_writer writer{port, "o1", 4004};
  writer.step();
  follow_with_the_npm_client(
      "http://127.0.0.1:" + std::to_string(port) + "/v1/spaces/t/objects/o1/state", writer, port,
      60);
}

TEST(AgUiClient, TheNpmClientFollowsAStateStreamThroughARemoteOwner) {
  cluster3 cl;
  // Property documents live in the space's objects unit: subscribe on a member that does not
  // own it and write through the third.
  int owner = cl.owner_of("t", "");
  int gateway = (owner + 1) % cluster3::n;
  int other = (owner + 2) % cluster3::n;
  put_record(cl.port(other), "t", "o1", "items", "a", R"({"n":1})");
  random_document_writer writer{cl.port(other), "doc1", 1313};
  writer.step();
  follow_with_the_npm_client(
      "http://127.0.0.1:" + std::to_string(cl.port(gateway)) + "/v1/spaces/t/objects/doc1/state",
      writer, cl.port(gateway), 40);
}

}  // namespace
}  // namespace weir::test

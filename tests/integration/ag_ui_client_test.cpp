// The AG-UI state stream read by AG-UI's own client from npm (@ag-ui/client, run by Node.js from
// tests/node/ag_ui_state_client.mjs): every event passes @ag-ui/core's schema, and the state the
// client builds with its own defaultApplyEvents ends equal to a fresh query after random writes
// (PUTs, JSON Patches, deletes) on one node and through a remote owner in a cluster. And the
// agent endpoint read by AG-UI's main client API, HttpAgent.runAgent
// (tests/node/ag_ui_agent_client.mjs): RUN_STARTED with the input's ids, a snapshot and deltas
// that keep the agent's state equal to the document, RUN_FINISHED after query.agentRunMaxMs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <boost/json.hpp>

#include "cluster_support.hpp"
#include "core/json_patch.hpp"
#include "patch_follower.hpp"
#include "process_support.hpp"
#include "sse_test_support.hpp"
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

/// The events of an AG-UI stream's body, each `data: <JSON>` and a blank line (fails the test
/// on anything else).
std::vector<json::object> sse_events(const std::string& body) {
  std::vector<json::object> events;
  for (std::size_t at = 0; at < body.size();) {
    auto end = body.find("\n\n", at);
    EXPECT_NE(end, std::string::npos) << body;
    EXPECT_EQ(body.compare(at, 6, "data: "), 0) << body;
    if (end == std::string::npos) {
      break;
    }
    events.push_back(json::parse(body.substr(at + 6, end - at - 6)).as_object());
    at = end + 2;
  }
  return events;
}

std::function<bool(const std::string&)> of_type(const std::string& type) {
  return [type](const std::string& line) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    return !ec && v.is_object() && v.as_object().contains("type") &&
           v.as_object().at("type").as_string() == type;
  };
}

TEST(AgUiClient, HttpAgentRunsAgainstTheAgentEndpointAndFollowsTheDocument) {
  ASSERT_STRNE(WEIR_NODE, "") << "Node.js is needed for this test: scripts/setup installs it";
  temp_dir dir;
  auto node = start_node(dir.path(), "query:\n  agentRunMaxMs: 6000\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");  // the space exists
  random_document_writer writer{port, "o1", 2525};
  writer.step();
  child_process client{
      {WEIR_NODE, WEIR_AG_UI_AGENT_CLIENT,
       "http://127.0.0.1:" + std::to_string(port) + "/v1/spaces/t/objects/o1/agent"}};
  auto fail = [&] { return "client stderr:\n" + client.stderr_text(); };
  auto started = client.wait_line(of_type("RUN_STARTED"), 20s);
  ASSERT_TRUE(started) << fail();
  // The ids HttpAgent put in its RunAgentInput come back in RUN_STARTED.
  EXPECT_EQ(json::parse(*started).at("threadId"), "weir-thread");
  EXPECT_EQ(json::parse(*started).at("runId"), "run-1");
  ASSERT_TRUE(client.wait_line(state_is(fresh_state(port, "o1")), 20s)) << fail();
  constexpr int writes = 30;
  for (int i = 0; i < writes; ++i) {
    ASSERT_FALSE(writer.step().empty());
  }
  auto now = client.wait_line(state_is(fresh_state(port, "o1")), 20s);
  ASSERT_TRUE(now) << fail();
  EXPECT_GT(json::parse(*now).at("deltas").to_number<int>(), writes / 2) << *now;
  // The run ends when agentRunMaxMs has passed, and runAgent's promise resolves with the
  // document as its state.
  ASSERT_TRUE(client.wait_line(of_type("RUN_FINISHED"), 20s)) << fail();
  auto done = client.wait_line(of_type("done"), 10s);
  ASSERT_TRUE(done) << fail();
  EXPECT_EQ(json::parse(*done).at("state"), fresh_state(port, "o1"));
}

TEST(AgUiClient, TheAgentEndpointFramesARunAroundTheStateStream) {
  temp_dir dir;
  auto node = start_node(dir.path(), "query:\n  agentRunMaxMs: 300\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  auto put = http(port, "PUT", "/v1/spaces/t/objects/doc", R"({"title":"x"})");
  ASSERT_EQ(put.status, 200u) << put.body;
  const std::string path = "/v1/spaces/t/objects/doc/agent";
  const header_list h{{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
  // A run reads as a whole: RUN_STARTED with the input's ids, the snapshot, RUN_FINISHED once
  // the run's time is up, then the end of the stream. The input's state does not matter.
  auto r = http_exact(port, "POST", path,
                      R"({"threadId":"th","runId":"r1","parentRunId":"p0","state":{"x":1},)"
                      R"("messages":[],"tools":[],"context":[],"forwardedProps":{}})",
                      h);
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.header("content-type"), "text/event-stream; charset=utf-8");
  auto events = sse_events(r.body);
  ASSERT_EQ(events.size(), 3u) << r.body;
  EXPECT_EQ(events[0], json::parse(R"({"type":"RUN_STARTED","threadId":"th","runId":"r1",)"
                                   R"("parentRunId":"p0"})"));
  EXPECT_EQ(events[1].at("type"), "STATE_SNAPSHOT");
  EXPECT_EQ(events[1].at("snapshot"), fresh_state(port, "doc"));
  EXPECT_EQ(events[2], json::parse(R"({"type":"RUN_FINISHED","threadId":"th","runId":"r1"})"));

  // Refused before anything opens, in the write API's error form.
  auto code_of = [](const raw_response& x) {
    return std::string{json::parse(x.body).at("error").at("code").as_string()};
  };
  for (auto [body, code] : std::vector<std::pair<std::string, std::string>>{
           {"[]", "request.not_object"},
           {"{nope", "request.bad_json"},
           {R"({"runId":"r"})", "request.missing_field"},
           {R"({"threadId":"t"})", "request.missing_field"},
           {R"({"threadId":1,"runId":"r"})", "request.invalid_field"},
           {R"({"threadId":"t","runId":"r","messages":{}})", "request.invalid_field"},
           {R"({"threadId":"t","runId":"r","parentRunId":5})", "request.invalid_field"},
       }) {
    auto bad = http_exact(port, "POST", path, body, h);
    EXPECT_EQ(bad.status, 400u) << body << " → " << bad.body;
    EXPECT_EQ(code_of(bad), code) << body << " → " << bad.body;
  }
  const std::string input = R"({"threadId":"t","runId":"r","messages":[]})";
  auto get = http_exact(port, "GET", path, "", h);
  EXPECT_EQ(get.status, 405u);
  EXPECT_EQ(get.header("allow"), "POST");
  auto json_only =
      http_exact(port, "POST", path, input,
                 {{"Content-Type", "application/json"}, {"Accept", "application/json"}});
  EXPECT_EQ(json_only.status, 406u) << json_only.body;
  auto no_space = http_exact(port, "POST", "/v1/spaces/nothing/objects/doc/agent", input, h);
  EXPECT_EQ(no_space.status, 404u);
  EXPECT_EQ(code_of(no_space), "space.not_found");
  // Ids come back in the run's events: bounded.
  auto long_id = http_exact(port, "POST", path,
                            R"({"threadId":")" + std::string(257, 't') + R"(","runId":"r"})", h);
  EXPECT_EQ(long_id.status, 400u);
  EXPECT_EQ(code_of(long_id), "request.invalid_field");
  // The input echoes the client's state, a whole document one level down: as deep as a
  // document may be, it is taken.
  std::string deep = std::string(63, '[') + "1" + std::string(63, ']');
  auto echoed = http_exact(port, "POST", path,
                           R"({"threadId":"t","runId":"r","state":{"a":)" + deep + "}}", h);
  EXPECT_EQ(echoed.status, 200u) << echoed.body;
  // The state route still takes only GET and HEAD.
  auto post_state = http_exact(port, "POST", "/v1/spaces/t/objects/doc/state", input, h);
  EXPECT_EQ(post_state.status, 405u);
  EXPECT_EQ(post_state.header("allow"), "GET, HEAD");
}

TEST(AgUiClient, ARunEndsWithTheDocumentsStateOrSaysTheClientLagged) {
  // A client that reads nothing while the document changes, then reads everything after the
  // run's time is up: either RUN_FINISHED follows every change made before it, so the state it
  // builds is the document, or the run ends with RUN_ERROR stream.lagged. Never RUN_FINISHED
  // over a stale state.
  temp_dir dir;
  auto node = start_node(dir.path(), "query:\n  agentRunMaxMs: 1500\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  auto put = http(port, "PUT", "/v1/spaces/t/objects/big", R"({"n":0})");
  ASSERT_EQ(put.status, 200u) << put.body;
  raw_connection c{port, "127.0.0.1", 4096};
  ASSERT_TRUE(c.connected());
  auto posted = std::chrono::steady_clock::now();
  c.send_all(build_request(port, "POST", "/v1/spaces/t/objects/big/agent",
                           {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}},
                           R"({"threadId":"th","runId":"r1"})"));
  const std::string pad(100000, 'x');
  for (int i = 1; i <= 30; ++i) {
    auto w = http(port, "PUT", "/v1/spaces/t/objects/big",
                  R"({"n":)" + std::to_string(i) + R"(,"pad":")" + pad + std::to_string(i) + "\"}");
    ASSERT_EQ(w.status, 200u) << w.body;
  }
  // Nothing is read until the run's time (1.5 s) is up: whatever the node still held for this
  // client then is what the end of the run must deliver, or own up to.
  std::this_thread::sleep_until(posted + 2s);
  auto r = read_response(c, false, 20s);
  ASSERT_EQ(r.status, 200u);
  auto events = sse_events(r.body);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front().at("type"), "RUN_STARTED");
  json::value state = json::object{};
  for (std::size_t i = 1; i + 1 < events.size(); ++i) {
    const auto& e = events[i];
    if (e.at("type") == "STATE_SNAPSHOT") {
      state = e.at("snapshot");
    } else {
      ASSERT_EQ(e.at("type"), "STATE_DELTA") << json::serialize(e);
      ASSERT_TRUE(core::apply_patch(state, e.at("delta")));
    }
  }
  const auto& last = events.back();
  if (last.at("type") == "RUN_FINISHED") {
    EXPECT_EQ(state, fresh_state(port, "big")) << "RUN_FINISHED over a stale state";
  } else {
    EXPECT_EQ(last.at("type"), "RUN_ERROR") << json::serialize(last);
    EXPECT_EQ(last.at("code"), "stream.lagged");
  }
  std::printf("a run over a client that read nothing: %zu events, ended with %s\n", events.size(),
              std::string{last.at("type").as_string()}.c_str());
}

}  // namespace
}  // namespace weir::test

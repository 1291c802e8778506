// Single documents as RFC 6902 patches over the wire: the `patch` transfer mode (arc-hub
// decision 9) on the WebSocket hub and the direct transports, and the AG-UI state stream
// (json-patch decision 4): the first emission is the document, later ones patches, a document
// that appears or goes is a fresh baseline, a collection asked for `patch` gets delta's change
// sets, a lagging state stream is brought back with a fresh STATE_SNAPSHOT, and a follower that
// applies every patch holds exactly what a fresh query returns after random writes.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include <boost/json.hpp>

#include "core/json_patch.hpp"
#include "patch_follower.hpp"
#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

const json::object o1{{"obj", "o1"}};

/// A description long enough that a patch of a few members is shorter than the document (the
/// diff never sends more than a replacement of the whole document).
const std::string about = std::string(R"("about":")") + std::string(300, 'a') + "\"";

const json::object& payload(const json::object& f) {
  return f.at("payload").as_object();
}

http_response put_object(std::uint16_t port, const std::string& id, const std::string& body) {
  return http(port, "PUT", "/v1/spaces/t/objects/" + id, body);
}

using PatchMode = single_node;
using StateStream = single_node;

TEST_F(PatchMode, ASingleDocumentSendsDataFirstThenPatchesOnly) {
  ASSERT_EQ(
      put_object(port, "o1", R"({"name":"first","tags":["a"],"size":1,)" + about + "}").status,
      200u);
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("qp", "T.Objects.One", o1, 1, "patch");
  auto first = payload(ws.read_json());
  ASSERT_TRUE(first.contains("data")) << json::serialize(first);
  EXPECT_FALSE(first.contains("patch"));
  EXPECT_FALSE(first.contains("changeSet"));
  auto doc = first.at("data");
  ASSERT_EQ(
      put_object(port, "o1", R"({"name":"second","tags":["a","b"],"size":1,)" + about + "}").status,
      200u);
  auto next = payload(ws.read_json());
  EXPECT_FALSE(next.contains("data")) << json::serialize(next);
  EXPECT_FALSE(next.contains("changeSet"));
  ASSERT_TRUE(next.contains("patch") && next.at("patch").is_array()) << json::serialize(next);
  EXPECT_EQ(next.at("isSuccess"), true);
  // Only what changed: the name, the new tag and the server's stamps; never the size.
  auto text = json::serialize(next.at("patch"));
  EXPECT_EQ(text.find("\"/size\""), std::string::npos) << text;
  EXPECT_EQ(text.find("aaaa"), std::string::npos) << text;
  EXPECT_NE(text.find("\"/name\""), std::string::npos) << text;
  ASSERT_TRUE(core::apply_patch(doc, next.at("patch")));
  auto fresh = http(port, "GET", "/api/t/objects/one?obj=o1").json().as_object();
  EXPECT_EQ(doc, fresh.at("data"));
}

TEST_F(PatchMode, TheSseHubSendsPatchesToo) {
  ASSERT_EQ(put_object(port, "o1", R"({"n":1,)" + about + "}").status, 200u);
  sse_client hub{port};
  auto conn = hub.expect_connected();
  ASSERT_EQ(sse_control_post(
                port, "subscribe",
                control_body(conn, "qp", 1, subscription_request("T.Objects.One", o1, "patch")))
                .status,
            200u);
  auto first = payload(hub.read_json());
  EXPECT_TRUE(first.contains("data"));
  ASSERT_EQ(put_object(port, "o1", R"({"n":2,)" + about + "}").status, 200u);
  auto next = payload(hub.read_json());
  EXPECT_FALSE(next.contains("data")) << json::serialize(next);
  ASSERT_TRUE(next.contains("patch")) << json::serialize(next);
  auto doc = first.at("data");
  ASSERT_TRUE(core::apply_patch(doc, next.at("patch")));
  EXPECT_EQ(doc.at("n"), 2);
}

TEST_F(PatchMode, TheModeIsMatchedCaseInsensitively) {
  ASSERT_EQ(put_object(port, "o1", R"({"n":1})").status, 200u);
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("qp", "T.Objects.One", o1, 1, "PATCH");
  EXPECT_TRUE(payload(ws.read_json()).contains("data"));
  ASSERT_EQ(put_object(port, "o1", R"({"n":2})").status, 200u);
  EXPECT_TRUE(payload(ws.read_json()).contains("patch"));
}

TEST_F(PatchMode, ADocumentThatAppearsOrGoesIsAFreshBaseline) {
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("qp", "T.Objects.One", o1, 1, "patch");
  auto none = payload(ws.read_json());
  EXPECT_FALSE(none.contains("data"));
  EXPECT_FALSE(none.contains("patch"));
  ASSERT_EQ(put_object(port, "o1", R"({"n":1})").status, 200u);
  auto appeared = payload(ws.read_json());
  EXPECT_FALSE(appeared.contains("patch")) << json::serialize(appeared);
  EXPECT_EQ(without_modified_at(appeared.at("data")).as_object().at("n"), 1);
  ASSERT_EQ(http(port, "DELETE", "/v1/spaces/t/objects/o1").status, 200u);
  auto gone = payload(ws.read_json());
  EXPECT_FALSE(gone.contains("data")) << json::serialize(gone);
  EXPECT_FALSE(gone.contains("patch"));
  ASSERT_EQ(put_object(port, "o1", R"({"n":2})").status, 200u);
  auto back = payload(ws.read_json());
  EXPECT_FALSE(back.contains("patch"));
  EXPECT_EQ(back.at("data").as_object().at("n"), 2);
}

TEST_F(PatchMode, ACollectionAskedForPatchGetsDeltaChangeSets) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("qp", "T.Items.All", o1, 1, "patch");
  auto first = payload(ws.read_json());
  EXPECT_EQ(first.at("data").as_array().size(), 1u);
  EXPECT_FALSE(first.contains("changeSet"));
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto next = payload(ws.read_json());
  EXPECT_FALSE(next.contains("data")) << json::serialize(next);
  EXPECT_FALSE(next.contains("patch"));
  ASSERT_EQ(next.at("changeSet").at("added").as_array().size(), 1u);
  EXPECT_EQ(next.at("changeSet").at("added").as_array()[0].at("id"), "b");
}

TEST_F(PatchMode, OtherModesOfTheSameDocumentStillGetData) {
  ASSERT_EQ(put_object(port, "o1", R"({"n":1})").status, 200u);
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("qp", "T.Objects.One", o1, 1, "patch");
  ws.subscribe("qd", "T.Objects.One", o1, 1, "delta");
  ws.subscribe("ql", "T.Objects.One", o1, 1, "");
  for (int i = 0; i < 3; ++i) {
    ws.read_json();
  }
  ASSERT_EQ(put_object(port, "o1", R"({"n":2})").status, 200u);
  for (int i = 0; i < 3; ++i) {
    auto f = ws.read_json();
    auto qid = std::string{f.at("queryId").as_string()};
    SCOPED_TRACE(qid);
    EXPECT_EQ(payload(f).contains("patch"), qid == "qp") << json::serialize(f);
    EXPECT_EQ(payload(f).contains("data"), qid != "qp");
    EXPECT_FALSE(payload(f).contains("changeSet"));
  }
}

TEST_F(PatchMode, DirectSseAndWebSocketTakeTransferModeFromTheQueryString) {
  ASSERT_EQ(put_object(port, "o1", R"({"n":1})").status, 200u);
  sse_client::options o;
  o.target = "/api/t/objects/one?obj=o1&transferMode=patch";
  o.headers = {{"Accept", "text/event-stream"}};
  sse_client sse{port, o};
  ASSERT_EQ(sse.status(), 200u);
  ws_client direct_ws{port, "/api/t/objects/one?obj=o1&transfermode=Patch"};
  auto sse_first = sse.read_json();
  auto ws_first = direct_ws.read_json();
  EXPECT_TRUE(sse_first.contains("data")) << json::serialize(sse_first);
  EXPECT_EQ(ws_first.at("type"), "Data");
  EXPECT_TRUE(ws_first.at("data").as_object().contains("data"));
  ASSERT_EQ(put_object(port, "o1", R"({"n":2})").status, 200u);
  auto sse_next = sse.read_json();
  auto ws_next = direct_ws.read_json().at("data").as_object();
  for (auto* r : {&sse_next, &ws_next}) {
    EXPECT_FALSE(r->contains("data")) << json::serialize(*r);
    EXPECT_TRUE(r->contains("patch")) << json::serialize(*r);
  }
  // Without the parameter the direct transports stay full snapshots (arc-hub §10).
  sse_client::options plain = o;
  plain.target = "/api/t/objects/one?obj=o1";
  sse_client full{port, plain};
  full.read_json();
  ASSERT_EQ(put_object(port, "o1", R"({"n":3})").status, 200u);
  auto f = full.read_json();
  EXPECT_TRUE(f.contains("data"));
  EXPECT_FALSE(f.contains("patch"));
}

TEST_F(PatchMode, AFollowerOfRandomWritesHoldsWhatAFreshQueryReturns) {
  ws_client ws{port};
  ws.expect_connected();
  random_document_writer writer{port, "o1", 20261201};
  expect_patch_follower_converges(ws, port, writer, 120);
}

TEST_F(StateStream, SendsAStateSnapshotThenStateDeltas) {
  ASSERT_EQ(
      put_object(port, "o1", R"({"title":"plan","steps":[{"id":"s1","done":false}],)" + about + "}")
          .status,
      200u);
  sse_client::options o;
  o.target = "/v1/spaces/t/objects/o1/state";
  o.headers = {{"Accept", "text/event-stream"}};
  sse_client s{port, o};
  ASSERT_EQ(s.status(), 200u);
  EXPECT_EQ(s.header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_EQ(s.header("cache-control"), "no-cache");
  auto text = s.read_event();
  ASSERT_TRUE(text);
  // AG-UI's encoder: `data: ` + JSON.stringify({type, snapshot}) + blank line.
  ASSERT_TRUE(text->starts_with(R"(data: {"type":"STATE_SNAPSHOT","snapshot":{"id":"o1",)"))
      << *text;
  auto state = json::parse(text->substr(6)).as_object().at("snapshot");
  ASSERT_EQ(http(port, "PATCH", "/v1/spaces/t/objects/o1",
                 R"([{"op":"replace","path":"/steps/0/done","value":true}])",
                 {{"Content-Type", "application/json-patch+json"}})
                .status,
            200u);
  auto delta = s.read_json();
  ASSERT_EQ(delta.at("type"), "STATE_DELTA") << json::serialize(delta);
  ASSERT_EQ(delta.size(), 2u) << json::serialize(delta);
  auto ops = json::serialize(delta.at("delta"));
  EXPECT_NE(ops.find(R"("path":"/steps/0/done")"), std::string::npos) << ops;
  ASSERT_TRUE(core::apply_patch(state, delta.at("delta")));
  auto fresh = http(port, "GET", "/api/t/objects/one?obj=o1").json().as_object();
  EXPECT_EQ(state, fresh.at("data"));
}

TEST_F(StateStream, AnObjectWithoutADocumentHasTheEmptyState) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");  // the space exists
  sse_client::options o;
  o.target = "/v1/spaces/t/objects/nobody/state";
  sse_client s{port, o};  // no Accept header: an event stream all the same
  ASSERT_EQ(s.status(), 200u);
  auto first = s.read_json();
  EXPECT_EQ(json::serialize(first), R"({"type":"STATE_SNAPSHOT","snapshot":{}})");
  ASSERT_EQ(put_object(port, "nobody", R"({"n":1})").status, 200u);
  auto appeared = s.read_json();
  EXPECT_EQ(appeared.at("type"), "STATE_SNAPSHOT") << json::serialize(appeared);
  EXPECT_EQ(appeared.at("snapshot").at("n"), 1);
  ASSERT_EQ(http(port, "DELETE", "/v1/spaces/t/objects/nobody").status, 200u);
  EXPECT_EQ(json::serialize(s.read_json()), R"({"type":"STATE_SNAPSHOT","snapshot":{}})");
}

TEST_F(StateStream, RefusesWhatItCannotServe) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  auto unknown = http(port, "GET", "/v1/spaces/nowhere/objects/o1/state", "",
                      {{"Accept", "text/event-stream"}});
  EXPECT_EQ(unknown.status, 404u);
  EXPECT_EQ(unknown.json().at("error").at("code"), "space.not_found");
  auto post = http(port, "POST", "/v1/spaces/t/objects/o1/state", "{}");
  EXPECT_EQ(post.status, 405u);
  EXPECT_EQ(post.headers["allow"], "GET, HEAD");
  EXPECT_EQ(post.json().at("error").at("code"), "method.not_allowed");
  auto json_only =
      http(port, "GET", "/v1/spaces/t/objects/o1/state", "", {{"Accept", "application/json"}});
  EXPECT_EQ(json_only.status, 406u);
  EXPECT_EQ(json_only.json().at("error").at("code"), "request.not_acceptable");
  auto bad_id = http(port, "GET", "/v1/spaces/t/objects/" + std::string(300, 'x') + "/state");
  EXPECT_EQ(bad_id.status, 400u) << bad_id.body;
  EXPECT_EQ(http(port, "HEAD", "/v1/spaces/nowhere/objects/o1/state").status, 404u);
  auto head = http(port, "HEAD", "/v1/spaces/t/objects/o1/state");
  EXPECT_EQ(head.status, 200u);
  EXPECT_EQ(head.headers["content-type"], "text/event-stream; charset=utf-8");
  EXPECT_TRUE(head.body.empty());
}

TEST_F(StateStream, ANodeThatStopsSaysSoWithRunErrorThenEndsTheStream) {
  ASSERT_EQ(put_object(port, "o1", R"({"n":1})").status, 200u);
  sse_client::options o;
  o.target = "/v1/spaces/t/objects/o1/state";
  sse_client s{port, o};
  ASSERT_EQ(s.read_json().at("type"), "STATE_SNAPSHOT");
  node->stop();
  auto end = s.read_json();
  EXPECT_EQ(end.at("type"), "RUN_ERROR") << json::serialize(end);
  EXPECT_EQ(end.at("code"), "server.shutdown");
  EXPECT_TRUE(s.wait_end(2s));
  EXPECT_TRUE(s.saw_last_chunk());
}

TEST(StateStreamLag, ALaggingStreamIsBroughtBackWithAFreshSnapshotNotClosed) {
  temp_dir dir;
  auto node =
      start_node(dir.path(),
                 "query: { maxObservableOutboundFrames: 4, maxObservableOutboundFrameBytes: "
                 "262144, maxOutboundQueueBytes: 262144 }\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  std::string blob(60000, 'x');
  auto body = [&](int i) {
    return R"({"i":)" + std::to_string(i) + R"(,"blob":")" + std::to_string(i) + blob + "\"}";
  };
  ASSERT_EQ(put_object(port, "o1", body(0)).status, 200u);
  sse_client::options o;
  o.target = "/v1/spaces/t/objects/o1/state";
  o.headers = {{"Accept", "text/event-stream"}};
  sse_client s{port, o};
  ASSERT_EQ(s.status(), 200u);
  // The client reads nothing while ~24 MB of deltas are written: far more than the socket
  // buffers and the 256 KiB queue hold.
  constexpr int writes = 400;
  for (int i = 1; i <= writes; ++i) {
    ASSERT_EQ(put_object(port, "o1", body(i)).status, 200u);
  }
  json::value state;
  int snapshots = 0, deltas = 0;
  for (;;) {
    auto e = s.read_json(10s);
    if (e.empty()) {
      break;
    }
    if (e.at("type") == "STATE_SNAPSHOT") {
      ++snapshots;
      state = e.at("snapshot");
    } else {
      ASSERT_EQ(e.at("type"), "STATE_DELTA");
      ++deltas;
      ASSERT_TRUE(core::apply_patch(state, e.at("delta")));
    }
    if (state.as_object().at("i") == writes) {
      break;
    }
  }
  EXPECT_GE(snapshots, 2) << "the lag should have been answered with a fresh STATE_SNAPSHOT";
  EXPECT_LT(snapshots + deltas, writes + 1) << "nothing was dropped: the client never lagged";
  EXPECT_EQ(state.as_object().at("i"), writes);
  auto fresh = http(port, "GET", "/api/t/objects/one?obj=o1").json().as_object();
  EXPECT_EQ(state, fresh.at("data"));
  EXPECT_FALSE(s.ended());
}

}  // namespace
}  // namespace weir::test

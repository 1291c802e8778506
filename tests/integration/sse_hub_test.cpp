// The Arc SSE hub over the wire (arc-hub §1, §6–§9, Decisions 3–5; seeds 001 and 003): the
// stream's headers and `data:` framing, the control POSTs' exact statuses in the §8 order (with
// seed 001's 403 for an untrusted Origin first), ownership by peer address, the Origin rule,
// HEAD and method routing, keep-alive Pings, the connection budget, and shutdown.
//
// Silence on the stream is asserted with a witness where possible: a subscription to the same
// query key ("w", a fresh revision each time) goes through the same connection actor and query
// actor after the operation under test, so any frame the operation wrongly caused would arrive
// before the witness's snapshot.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "actors/runtime.hpp"
#include "sse_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;
using clock_type = std::chrono::steady_clock;

const json::object items_o1{{"obj", "o1"}};

struct sse_node {
  explicit sse_node(const std::string& extra_yaml = "") {
    node = start_node(dir.path(), extra_yaml);
    if (node) {
      port = node->http_port();
    }
  }
  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

bool is_result(const json::object& f, std::string_view query_id, long long revision = -1) {
  auto* t = f.if_contains("type");
  auto* q = f.if_contains("queryId");
  if (!t || !t->is_string() || t->get_string() != "QueryResult" || !q || !q->is_string() ||
      q->get_string() != query_id) {
    return false;
  }
  if (revision < 0) {
    return true;
  }
  auto* r = f.if_contains("revision");
  return r && r->is_int64() && r->get_int64() == revision;
}

std::vector<std::string> ids_of(const json::array& items) {
  std::vector<std::string> out;
  for (auto& v : items) {
    out.emplace_back(v.as_object().at("id").as_string());
  }
  return out;
}
using ids = std::vector<std::string>;

const json::array& data_of(const json::object& f) {
  return f.at("payload").as_object().at("data").as_array();
}

/// Every control POST answer has an empty body (§8).
void expect_empty(const raw_response& r) {
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.header("content-length"), "0");
  EXPECT_FALSE(r.has("content-type")) << r.head;
}

/// POSTs a control and checks its status and empty body.
void expect_control(std::uint16_t port, const std::string& action, const std::string& body,
                    unsigned status, const header_list& headers = {},
                    const std::string& local_address = "127.0.0.1") {
  auto r = sse_control_post(port, action, body, headers, local_address);
  EXPECT_EQ(r.status, status) << action << " " << body.substr(0, 200);
  expect_empty(r);
}

std::string subscribe_body(const std::string& conn, const std::string& query_id, long long revision,
                           const std::string& mode = "full", const json::object& args = items_o1,
                           const std::string& query_name = "T.Items.All") {
  return control_body(conn, query_id, revision, subscription_request(query_name, args, mode));
}

/// The witness: (re)subscribes "w" at `revision` and returns every event read before its
/// snapshot (the events the preceding operations caused, in order).
std::vector<json::object> barrier(sse_client& s, std::uint16_t port, const std::string& conn,
                                  long long revision) {
  expect_control(port, "subscribe", subscribe_body(conn, "w", revision), 200);
  auto seen = s.read_through([&](auto& f) { return is_result(f, "w", revision); });
  if (!seen.empty()) {
    seen.pop_back();
  }
  return seen;
}

sse_client::options with_headers(header_list headers) {
  sse_client::options o;
  o.headers = std::move(headers);
  return o;
}
sse_client::options from_address(std::string address) {
  sse_client::options o;
  o.local_address = std::move(address);
  return o;
}
sse_client::options with_target(std::string target) {
  sse_client::options o;
  o.target = std::move(target);
  return o;
}

std::string own_origin(std::uint16_t port) {
  return "http://127.0.0.1:" + std::to_string(port);
}

// ---------------------------------------------------------------------------------------------
// 1. The stream GET.

TEST(SseHub, StreamHeadersAndConnectedFrame) {
  sse_node n;
  ASSERT_TRUE(n.node);
  sse_client s{n.port};
  ASSERT_EQ(s.status(), 200u) << s.response().head;
  // §1, seed 001: exactly these values.
  EXPECT_EQ(s.header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_EQ(s.header("cache-control"), "no-cache");
  EXPECT_EQ(s.header("connection"), "keep-alive");
  EXPECT_EQ(s.header("x-accel-buffering"), "no");
  EXPECT_EQ(s.header("x-content-type-options"), "nosniff");
  EXPECT_TRUE(looks_like_uuid(s.header("x-correlation-id"))) << s.response().head;
  EXPECT_EQ(s.header("transfer-encoding"), "chunked");
  EXPECT_FALSE(s.response().has("content-length"));
  // The Connected event is the first, byte for byte one `data:` line (§2.1, §7).
  auto ev = s.read_event();
  ASSERT_TRUE(ev);
  ASSERT_EQ(ev->rfind("data: ", 0), 0u) << *ev;
  auto v = json::parse(ev->substr(6));
  auto& f = v.as_object();
  ASSERT_TRUE(f.contains("payload") && f.at("payload").is_string()) << *ev;
  std::string id{f.at("payload").as_string()};
  EXPECT_TRUE(looks_like_uuid(id)) << id;
  EXPECT_EQ(*ev, R"(data: {"type":"Connected","payload":")" + id +
                     R"(","keepAliveIntervalMs":30000,"supportsSubscriptionRevisions":true})");
  EXPECT_EQ(n.node->runtime().stats().hub_connections, 1u);
  // Every later frame is framed the same way: a snapshot and a delta (read_json rejects any
  // event that is not exactly one `data: <compact JSON>` line).
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1})");
  expect_control(n.port, "subscribe", subscribe_body(id, "q1", 1, "delta"), 200);
  auto snap = s.read_json();
  EXPECT_TRUE(is_result(snap, "q1", 1)) << json::serialize(snap);
  put_record(n.port, "t", "o1", "items", "b", R"({"n":2})");
  auto delta = s.read_json();
  EXPECT_TRUE(is_result(delta, "q1", 1)) << json::serialize(delta);
  // Two streams get two different ids.
  sse_client s2{n.port};
  ASSERT_EQ(s2.status(), 200u);
  auto id2 = s2.expect_connected();
  EXPECT_TRUE(looks_like_uuid(id2));
  EXPECT_NE(id, id2);
  EXPECT_NE(s.header("x-correlation-id"), s2.header("x-correlation-id"));
}

TEST(SseHub, Http10StreamIsNotChunked) {
  // RFC 9112 §7.1: no chunked coding for an HTTP/1.0 client; its body is the connection's rest.
  sse_node n;
  ASSERT_TRUE(n.node);
  raw_connection c{n.port};
  c.send_all("GET /.cratis/queries/sse HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{5};
  auto end_of_head = std::string::npos;
  while ((end_of_head = c.pending().find("\r\n\r\n")) == std::string::npos ||
         c.pending().find("\n\n", end_of_head + 4) == std::string::npos) {
    ASSERT_TRUE(c.fill(deadline)) << c.pending();
  }
  auto head = c.pending().substr(0, end_of_head);
  EXPECT_TRUE(head.starts_with("HTTP/1.0 200")) << head;
  EXPECT_EQ(head.find("chunked"), std::string::npos) << head;
  EXPECT_EQ(head.find("keep-alive"), std::string::npos) << head;
  EXPECT_TRUE(c.pending().substr(end_of_head + 4).starts_with(R"(data: {"type":"Connected")"))
      << c.pending();
}

TEST(SseHub, CorrelationIdIsReusedOnlyWhenAUuid) {
  sse_node n;
  ASSERT_TRUE(n.node);
  const std::string inbound = "0f8fad5b-d9cb-469f-a165-70867728950e";
  sse_client same{n.port, with_headers({{"X-Correlation-ID", inbound}})};
  ASSERT_EQ(same.status(), 200u);
  EXPECT_EQ(same.header("x-correlation-id"), inbound);
  same.expect_connected();
  // Upper case is still a UUID and kept as sent.
  const std::string upper = "0F8FAD5B-D9CB-469F-A165-70867728950E";
  sse_client kept{n.port, with_headers({{"X-Correlation-ID", upper}})};
  EXPECT_EQ(kept.header("x-correlation-id"), upper);
  for (std::string bad : {"not-a-uuid", "{0f8fad5b-d9cb-469f-a165-70867728950e}",
                          "0f8fad5b-d9cb-469f-a165-70867728950", "x"}) {
    SCOPED_TRACE(bad);
    sse_client replaced{n.port, with_headers({{"X-Correlation-ID", bad}})};
    ASSERT_EQ(replaced.status(), 200u);
    auto cid = replaced.header("x-correlation-id");
    EXPECT_NE(cid, bad);
    EXPECT_TRUE(looks_like_uuid(cid)) << cid;
    replaced.expect_connected();
  }
  // Control answers carry it too.
  auto r = sse_control_post(n.port, "unsubscribe", control_body("nope", "q", 1),
                            {{"X-Correlation-ID", inbound}});
  EXPECT_EQ(r.status, 404u);
  EXPECT_EQ(r.header("x-correlation-id"), inbound);
}

// ---------------------------------------------------------------------------------------------
// 2. The control lifecycle.

TEST(SseHub, SubscribeDeltaUnsubscribeAndReconnect) {
  sse_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1,"color":"red"})");
  auto s = std::make_unique<sse_client>(n.port);
  ASSERT_EQ(s->status(), 200u);
  auto conn = s->expect_connected();

  auto sub = sse_control_post(n.port, "subscribe", subscribe_body(conn, "q1", 1, "delta"));
  EXPECT_EQ(sub.status, 200u);
  expect_empty(sub);
  auto snap = s->read_json();
  ASSERT_TRUE(is_result(snap, "q1", 1)) << json::serialize(snap);
  EXPECT_EQ(snap.size(), 4u) << json::serialize(snap);  // type, queryId, revision, payload
  auto& p = snap.at("payload").as_object();
  EXPECT_FALSE(p.contains("changeSet"));
  EXPECT_EQ(ids_of(data_of(snap)), ids{"a"});
  EXPECT_EQ(p.at("isSuccess"), true);

  // A write reaches the stream as a delta (§5: changeSet only, no data).
  put_record(n.port, "t", "o1", "items", "b", R"({"n":2,"color":"blue"})");
  auto delta = s->read_json();
  ASSERT_TRUE(is_result(delta, "q1", 1)) << json::serialize(delta);
  auto& dp = delta.at("payload").as_object();
  EXPECT_FALSE(dp.contains("data"));
  auto& cs = dp.at("changeSet").as_object();
  EXPECT_EQ(ids_of(cs.at("added").as_array()), ids{"b"});
  EXPECT_TRUE(cs.at("replaced").as_array().empty());
  EXPECT_TRUE(cs.at("removed").as_array().empty());

  // Unsubscribe: 200, empty, and no more frames for q1 (the witness on the same query key
  // receives the next write, q1 does not).
  EXPECT_TRUE(barrier(*s, n.port, conn, 1).empty());
  auto unsub = sse_control_post(n.port, "unsubscribe", control_body(conn, "q1", 1));
  EXPECT_EQ(unsub.status, 200u);
  expect_empty(unsub);
  put_record(n.port, "t", "o1", "items", "c", R"({"n":3,"color":"green"})");
  auto seen = s->read_through([](auto& f) { return is_result(f, "w"); });
  for (auto& f : seen) {
    EXPECT_FALSE(is_result(f, "q1")) << json::serialize(f);
  }
  for (auto& f : barrier(*s, n.port, conn, 2)) {
    ADD_FAILURE() << "unexpected: " << json::serialize(f);
  }

  // Reconnect: a new connection id, empty revision state, a full baseline first.
  s->close();
  s.reset();
  sse_client again{n.port};
  ASSERT_EQ(again.status(), 200u);
  auto conn2 = again.expect_connected();
  EXPECT_NE(conn2, conn);
  expect_control(n.port, "subscribe", subscribe_body(conn2, "q1", 1, "delta"), 200);
  auto base = again.read_json();
  ASSERT_TRUE(is_result(base, "q1", 1)) << json::serialize(base);
  EXPECT_FALSE(base.at("payload").as_object().contains("changeSet"));
  EXPECT_EQ(ids_of(data_of(base)), (ids{"a", "b", "c"}));
}

// ---------------------------------------------------------------------------------------------
// 3. §8 statuses.

TEST(SseHub, ContentTypeMustBeJsonElse415) {
  sse_node n;
  ASSERT_TRUE(n.node);
  sse_client s{n.port};
  auto conn = s.expect_connected();
  auto body = control_body(conn, "q1", 1);
  for (std::string ct : {"text/plain", "application/x-www-form-urlencoded", "application/*+json",
                         "application/vnd.api+json", "application/json; charset=latin1",
                         "application/json; charset=\"utf-8\"", "application/jsonx",
                         "application/json; foo=bar", "text/json"}) {
    SCOPED_TRACE(ct);
    expect_control(n.port, "unsubscribe", body, 415, {{"Content-Type", ct}});
    expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 1), 415, {{"Content-Type", ct}});
  }
  // A missing Content-Type is 415 too; 415 is checked before the body (bad JSON here).
  expect_control(n.port, "unsubscribe", body, 415, {{"Content-Type", ""}});
  expect_control(n.port, "subscribe", "{", 415, {{"Content-Type", "text/plain"}});
  // The accepted forms, case-insensitively, with optional whitespace around the `;`.
  for (std::string ct :
       {"application/json", "application/json; charset=utf-8", "APPLICATION/JSON; CHARSET=UTF-8",
        "Application/Json;charset=Utf-8", "application/json ;  charset=utf-8"}) {
    SCOPED_TRACE(ct);
    expect_control(n.port, "unsubscribe", body, 200, {{"Content-Type", ct}});
  }
  // Nothing of this reached the stream.
  EXPECT_TRUE(barrier(s, n.port, conn, 1).empty());
}

TEST(SseHub, BodyOverTheControlLimitIs413) {
  // min(http.maxBodyBytes, query.maxObservableInboundFrameBytes) = 1024 (§8 step 2).
  sse_node n{"http: { maxBodyBytes: 4096 }\nquery: { maxObservableInboundFrameBytes: 1024 }"};
  ASSERT_TRUE(n.node);
  sse_client s{n.port};
  auto conn = s.expect_connected();
  auto padded = [&](std::size_t size) {
    auto b = control_body(conn, "q1", 1);
    b.append(size - b.size(), ' ');  // trailing whitespace keeps it valid JSON
    return b;
  };
  expect_control(n.port, "unsubscribe", padded(1024), 200);  // at the limit: fine
  expect_control(n.port, "unsubscribe", padded(1025), 413);
  expect_control(n.port, "subscribe", padded(1025), 413);
  // Over http.maxBodyBytes as well (refused while the body is still being read): the checks
  // that come before the body in §8 still decide first.
  expect_control(n.port, "unsubscribe", padded(5000), 413);
  expect_control(n.port, "unsubscribe", padded(5000), 415, {{"Content-Type", "text/plain"}});
  expect_control(n.port, "unsubscribe", padded(5000), 415, {{"Content-Type", ""}});
  auto get_big = http_exact(n.port, "PUT", "/.cratis/queries/sse/subscribe", padded(5000),
                            {{"Content-Type", "application/json"}});
  EXPECT_EQ(get_big.status, 405u);
  EXPECT_EQ(get_big.header("allow"), "POST");
  EXPECT_EQ(sse_control_post(n.port, "nothing-here", padded(5000)).status, 404u);
  // 413 comes before the body is looked at: oversized garbage is still 413.
  expect_control(n.port, "subscribe", std::string(2000, '{'), 413);
  // But after the content type.
  expect_control(n.port, "subscribe", padded(2000), 415, {{"Content-Type", "text/plain"}});
  EXPECT_TRUE(barrier(s, n.port, conn, 1).empty());

  // The other way round: maxBodyBytes is the smaller one.
  sse_node m{"http: { maxBodyBytes: 512 }"};
  ASSERT_TRUE(m.node);
  sse_client s2{m.port};
  auto conn2 = s2.expect_connected();
  auto b = control_body(conn2, "q1", 1);
  expect_control(m.port, "unsubscribe", b + std::string(512 - b.size(), ' '), 200);
  expect_control(m.port, "unsubscribe", b + std::string(513 - b.size(), ' '), 413);
}

TEST(SseHub, MalformedBodiesAre400) {
  sse_node n;
  ASSERT_TRUE(n.node);
  sse_client s{n.port};
  auto conn = s.expect_connected();
  auto req = subscription_request("T.Items.All", items_o1, "full");
  auto with = [&](json::object o) { return json::serialize(o); };
  std::vector<std::pair<std::string, std::string>> both = {
      {"bad JSON", "{"},
      {"bad JSON 2", R"({"connectionId":")" + conn + R"(","queryId":"q1",})"},
      {"empty body", ""},
      {"array", "[]"},
      {"string", R"("x")"},
      {"number", "1"},
      {"null", "null"},
      {"missing connectionId", R"({"queryId":"q1","revision":1})"},
      {"numeric connectionId", R"({"connectionId":1,"queryId":"q1"})"},
      {"empty connectionId", R"({"connectionId":"","queryId":"q1"})"},
      {"missing queryId", with({{"connectionId", conn}, {"revision", 1}, {"request", req}})},
      {"numeric queryId", with({{"connectionId", conn}, {"queryId", 7}, {"request", req}})},
  };
  for (auto& [what, body] : both) {
    SCOPED_TRACE(what);
    expect_control(n.port, "subscribe", body, 400);
    expect_control(n.port, "unsubscribe", body, 400);
  }
  // Subscribe needs a valid SubscriptionRequest (§2.3).
  auto bad_request = [&](json::value request) {
    return with({{"connectionId", conn}, {"queryId", "q1"}, {"revision", 1}, {"request", request}});
  };
  std::vector<std::pair<std::string, std::string>> subscribe_only = {
      {"missing request", control_body(conn, "q1", 1)},
      {"null request", bad_request(nullptr)},
      {"string request", bad_request("T.Items.All")},
      {"unknown key", bad_request(json::object{{"queryName", "T.Items.All"}, {"bogus", 1}})},
      {"missing queryName", bad_request(json::object{{"arguments", items_o1}})},
      {"bad queryName", bad_request(json::object{{"queryName", "1T.Items"}})},
      {"numeric argument",
       bad_request(json::object{{"queryName", "T.Items.All"}, {"arguments", {{"obj", 1}}}})},
      {"reserved argument",
       bad_request(json::object{{"queryName", "T.Items.All"}, {"arguments", {{"page", "1"}}}})},
      {"negative page", bad_request(json::object{{"queryName", "T.Items.All"}, {"page", -1}})},
      {"pageSize over 1000",
       bad_request(json::object{{"queryName", "T.Items.All"}, {"pageSize", 1001}})},
      {"numeric transferMode",
       bad_request(json::object{{"queryName", "T.Items.All"}, {"transferMode", 1}})},
  };
  for (auto& [what, body] : subscribe_only) {
    SCOPED_TRACE(what);
    expect_control(n.port, "subscribe", body, 400);
  }
  // The early 400 comes before the connection lookup: an unknown connection does not turn
  // these into 404.
  expect_control(n.port, "subscribe", control_body("no-such-connection", "q1", 1), 400);
  expect_control(n.port, "subscribe", "{", 400);
  // Unsubscribe ignores `request`; the stream never saw any of it (no Error frames on SSE).
  expect_control(n.port, "unsubscribe", bad_request("junk"), 200);
  EXPECT_TRUE(barrier(s, n.port, conn, 1).empty());
}

TEST(SseHub, UnknownForeignAndClosedConnectionsAre404) {
  sse_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1})");
  // Unknown ids, including well-formed UUIDs.
  for (std::string id : {"0f8fad5b-d9cb-469f-a165-70867728950e", "nope"}) {
    expect_control(n.port, "subscribe", subscribe_body(id, "q1", 1), 404);
    expect_control(n.port, "unsubscribe", control_body(id, "q1", 1), 404);
  }
  // A WebSocket hub connection's id is not an SSE connection.
  ws_client ws{n.port};
  auto ws_id = ws.expect_connected();
  ASSERT_TRUE(looks_like_uuid(ws_id));
  expect_control(n.port, "subscribe", subscribe_body(ws_id, "q1", 1), 404);
  expect_control(n.port, "unsubscribe", control_body(ws_id, "q1", 1), 404);
  // ...and nothing was subscribed on the WebSocket either: its next frame is its own Pong.
  ws.send(R"({"type":"Ping","timestamp":7})");
  EXPECT_EQ(ws.read(), R"({"type":"Pong","timestamp":7})");

  // A closed stream's id: once the server has noticed the close, 404.
  auto s = std::make_unique<sse_client>(n.port);
  auto conn = s->expect_connected();
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", 1), 200);
  s->close();
  auto deadline = clock_type::now() + 5s;
  unsigned status = 0;
  while (clock_type::now() < deadline) {
    // Polled with real requests: the server notices the closed socket asynchronously.
    status = sse_control_post(n.port, "unsubscribe", control_body(conn, "q1", 1)).status;
    if (status != 200) {
      break;
    }
  }
  EXPECT_EQ(status, 404u);
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 1), 404);
  EXPECT_EQ(n.node->runtime().stats().hub_connections, 1u);  // only the WebSocket is left
}

TEST(SseHub, LateValidationRunsAfterTheLookup) {
  sse_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1})");
  sse_client s{n.port};
  auto conn = s.expect_connected();
  const std::string unknown = "0f8fad5b-d9cb-469f-a165-70867728950e";
  auto req = subscription_request("T.Items.All", items_o1, "full");
  auto body = [&](const std::string& id, json::value query_id, json::value revision,
                  bool subscribe) {
    json::object o{{"connectionId", id}, {"queryId", query_id}, {"revision", revision}};
    if (subscribe) {
      o["request"] = req;
    }
    return json::serialize(o);
  };
  // §4 wire rule: a JSON integer 1..2^53-1. Each bad one: 404 on an unknown connection (the
  // lookup wins), 400 on a known one.
  std::vector<json::value> bad_revisions = {
      "1", 0, -1, 1.5, 1e3, 9007199254740992ULL, true, json::array{1}};
  for (bool subscribe : {true, false}) {
    const char* action = subscribe ? "subscribe" : "unsubscribe";
    for (auto& rev : bad_revisions) {
      SCOPED_TRACE(std::string{action} + " revision " + json::serialize(rev));
      expect_control(n.port, action, body(unknown, "q1", rev, subscribe), 404);
      expect_control(n.port, action, body(conn, "q1", rev, subscribe), 400);
    }
    for (const std::string& qid :
         std::vector<std::string>{"bad id!", "", std::string(257, 'x'), "q/1"}) {
      SCOPED_TRACE(std::string{action} + " queryId " + qid);
      expect_control(n.port, action, body(unknown, json::string(qid), 1, subscribe), 404);
      expect_control(n.port, action, body(conn, json::string(qid), 1, subscribe), 400);
    }
  }
  // The edges that are fine: the largest safe revision, a 256-character id, null = legacy.
  expect_control(
      n.port, "subscribe",
      body(conn, json::string("Az09_-" + std::string(250, 'x')), 9007199254740991LL, true), 200);
  auto f = s.read_json();
  EXPECT_TRUE(is_result(f, "Az09_-" + std::string(250, 'x'), 9007199254740991LL))
      << json::serialize(f);
  expect_control(n.port, "subscribe", body(conn, "legacy", nullptr, true), 200);
  auto l = s.read_json();
  EXPECT_TRUE(is_result(l, "legacy")) << json::serialize(l);
  EXPECT_FALSE(l.contains("revision"));
  // None of the refused controls put anything on the stream.
  EXPECT_TRUE(barrier(s, n.port, conn, 1).empty());
}

TEST(SseHub, DuplicateAndStaleSubscribesAre200WithoutFrames) {
  sse_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1})");
  sse_client s{n.port};
  auto conn = s.expect_connected();
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 2), 200);
  EXPECT_TRUE(is_result(s.read_json(), "q1", 2));
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 2), 200);   // duplicate
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 1), 200);   // stale
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", -1), 200);  // legacy on aware
  EXPECT_TRUE(barrier(s, n.port, conn, 1).empty());
  // The subscription at revision 2 is still the live one.
  put_record(n.port, "t", "o1", "items", "b", R"({"n":2})");
  auto seen = s.read_through([](auto& f) { return is_result(f, "q1"); });
  EXPECT_TRUE(is_result(seen.back(), "q1", 2));
}

TEST(SseHub, UnknownAndInvalidQueriesAre200WithAnErrorFrame) {
  sse_node n;
  ASSERT_TRUE(n.node);
  sse_client s{n.port};
  auto conn = s.expect_connected();
  auto ev = [&] { return s.read_event(); };
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 3, "full", items_o1, "T.Nope"),
                 200);
  EXPECT_EQ(
      ev(),
      R"(data: {"type":"Error","queryId":"q1","revision":3,"payload":"Unknown observable query"})");
  // Legacy: no revision on the frame.
  expect_control(n.port, "subscribe", subscribe_body(conn, "q2", -1, "full", items_o1, "T.Nope"),
                 200);
  EXPECT_EQ(ev(), R"(data: {"type":"Error","queryId":"q2","payload":"Unknown observable query"})");
  // Names match exactly.
  expect_control(n.port, "subscribe",
                 subscribe_body(conn, "q3", 1, "full", items_o1, "t.items.all"), 200);
  EXPECT_EQ(
      ev(),
      R"(data: {"type":"Error","queryId":"q3","revision":1,"payload":"Unknown observable query"})");
  // A missing argument: the query is invalid.
  expect_control(n.port, "subscribe", subscribe_body(conn, "q4", 2, "full", {}), 200);
  EXPECT_EQ(
      ev(),
      R"(data: {"type":"Error","queryId":"q4","revision":2,"payload":"Invalid observable query"})");
  // A null argument is dropped, so it is missing too.
  expect_control(
      n.port, "subscribe",
      subscribe_body(conn, "q5", 1, "full", {{"obj", "o1"}, {"color", nullptr}}, "T.Items.ByColor"),
      200);
  EXPECT_EQ(
      ev(),
      R"(data: {"type":"Error","queryId":"q5","revision":1,"payload":"Invalid observable query"})");
  // The Error is terminal: q1 is a tombstone at 3, so 3 again is ignored; 4 tries again.
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 3, "full", items_o1, "T.Nope"),
                 200);
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 4, "full", items_o1, "T.Nope"),
                 200);
  EXPECT_EQ(
      ev(),
      R"(data: {"type":"Error","queryId":"q1","revision":4,"payload":"Unknown observable query"})");
  EXPECT_TRUE(barrier(s, n.port, conn, 1).empty());
}

TEST(SseHub, PerConnectionSubscriptionLimitIs503WithAnErrorFrame) {
  sse_node n{"query: { maxObservableHubSubscriptionsPerConnection: 2 }"};
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1})");
  sse_client s{n.port};
  auto conn = s.expect_connected();
  expect_control(n.port, "subscribe", subscribe_body(conn, "s1", 1), 200);
  EXPECT_TRUE(is_result(s.read_json(), "s1", 1));
  expect_control(n.port, "subscribe", subscribe_body(conn, "s2", 1), 200);
  EXPECT_TRUE(is_result(s.read_json(), "s2", 1));
  expect_control(n.port, "subscribe", subscribe_body(conn, "s3", 1), 503);
  EXPECT_EQ(
      s.read_event(),
      R"(data: {"type":"Error","queryId":"s3","revision":1,"payload":"Connection subscription limit reached"})");
  // Replacing an existing queryId does not count against the cap.
  expect_control(n.port, "subscribe", subscribe_body(conn, "s1", 2), 200);
  EXPECT_TRUE(is_result(s.read_json(), "s1", 2));
  // Freeing a slot admits a new one.
  expect_control(n.port, "unsubscribe", control_body(conn, "s2", 1), 200);
  expect_control(n.port, "subscribe", subscribe_body(conn, "s3", 2), 200);
  EXPECT_TRUE(is_result(s.read_json(), "s3", 2));
  // Also over the cap for a legacy subscribe.
  expect_control(n.port, "subscribe", subscribe_body(conn, "s4", -1), 503);
  EXPECT_EQ(
      s.read_event(),
      R"(data: {"type":"Error","queryId":"s4","payload":"Connection subscription limit reached"})");
}

TEST(SseHub, UnsubscribeIsAlways200) {
  sse_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1})");
  sse_client s{n.port};
  auto conn = s.expect_connected();
  expect_control(n.port, "unsubscribe", control_body(conn, "never", 1), 200);   // unknown id
  expect_control(n.port, "unsubscribe", control_body(conn, "never", -1), 200);  // legacy unknown
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 3), 200);
  EXPECT_TRUE(is_result(s.read_json(), "q1", 3));
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", 2), 200);   // stale
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", -1), 200);  // legacy on aware
  // Neither touched revision 3.
  put_record(n.port, "t", "o1", "items", "b", R"({"n":2})");
  EXPECT_TRUE(is_result(s.read_json(), "q1", 3));
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", 3), 200);
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", 3), 200);  // idempotent
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", 9), 200);  // ahead
  EXPECT_TRUE(barrier(s, n.port, conn, 1).empty());
}

// ---------------------------------------------------------------------------------------------
// 4. Ownership (seed 001, Decision 3): an anonymous stream belongs to its peer address.

TEST(SseHub, ControlFromAnotherPeerAddressIs404) {
  if (!loopback_alias_usable("127.0.0.2")) {
    GTEST_SKIP() << "127.0.0.2 cannot reach 127.0.0.1 on this machine";
  }
  sse_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1})");
  sse_client s{n.port};
  auto conn = s.expect_connected();
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 1), 404, {}, "127.0.0.2");
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", 1), 404, {}, "127.0.0.2");
  // Even a malformed revision: the lookup (which fails) comes first.
  expect_control(n.port, "subscribe",
                 R"({"connectionId":")" + conn + R"(","queryId":"q1","revision":"1","request":)" +
                     json::serialize(subscription_request("T.Items.All", items_o1)) + "}",
                 404, {}, "127.0.0.2");
  // The owner's address still works, and the foreign subscribe left no trace.
  EXPECT_TRUE(barrier(s, n.port, conn, 1).empty());
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 1), 200);
  EXPECT_TRUE(is_result(s.read_json(), "q1", 1));
  // A foreign unsubscribe does not stop it.
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", 1), 404, {}, "127.0.0.2");
  put_record(n.port, "t", "o1", "items", "b", R"({"n":2})");
  auto seen = s.read_through([](auto& f) { return is_result(f, "q1"); });
  EXPECT_TRUE(is_result(seen.back(), "q1", 1));

  // The other way round: a stream opened from 127.0.0.2 is controlled only from there.
  sse_client other{n.port, from_address("127.0.0.2")};
  ASSERT_EQ(other.status(), 200u);
  auto conn2 = other.expect_connected();
  expect_control(n.port, "subscribe", subscribe_body(conn2, "q1", 1), 404);
  expect_control(n.port, "subscribe", subscribe_body(conn2, "q1", 1), 200, {}, "127.0.0.2");
  EXPECT_TRUE(is_result(other.read_json(), "q1", 1));
}

// ---------------------------------------------------------------------------------------------
// 5. The Origin rule (§8, Decision 4; seed 001: 403 on the controls as well).

TEST(SseHub, OriginRuleOnTheStream) {
  sse_node n{"query: { allowedOrigins: [\"https://app.example.com\", \"http://localhost:3000\"] }"};
  ASSERT_TRUE(n.node);
  auto get = [&](header_list h) {
    return std::make_unique<sse_client>(n.port, with_headers(std::move(h)));
  };
  for (const std::string& refused : std::vector<std::string>{
           "http://evil.example", "null", "https://app.example.com:8443", "http://app.example.com",
           "https://127.0.0.1:" + std::to_string(n.port), "http://127.0.0.1",
           "http://127.0.0.1:" + std::to_string(n.port) + "/path", "garbage"}) {
    SCOPED_TRACE(refused);
    auto s = get({{"Origin", refused}});
    EXPECT_EQ(s->status(), 403u) << s->response().head;
    expect_empty(s->response());
    EXPECT_TRUE(looks_like_uuid(s->header("x-correlation-id")));
  }
  EXPECT_EQ(n.node->runtime().stats().hub_connections, 0u);  // refusals allocate nothing
  for (const std::string& allowed : std::vector<std::string>{
           own_origin(n.port), "HTTP://127.0.0.1:" + std::to_string(n.port),
           "https://app.example.com", "https://APP.example.com:443", "http://localhost:3000"}) {
    SCOPED_TRACE(allowed);
    auto s = get({{"Origin", allowed}});
    ASSERT_EQ(s->status(), 200u) << s->response().head;
    EXPECT_FALSE(s->expect_connected().empty());
  }
  // No Origin: a non-browser client.
  auto plain = get({});
  ASSERT_EQ(plain->status(), 200u);
  plain->expect_connected();
  // Same-origin comes from Host, never from forwarded headers.
  auto forwarded = get({{"Origin", "https://evil.example"},
                        {"X-Forwarded-Host", "evil.example"},
                        {"X-Forwarded-Proto", "https"},
                        {"Forwarded", "host=evil.example;proto=https"}});
  EXPECT_EQ(forwarded->status(), 403u);
}

TEST(SseHub, NullOriginOnlyWhenConfigured) {
  sse_node n{"query: { allowNullOrigin: true }"};
  ASSERT_TRUE(n.node);
  sse_client s{n.port, with_headers({{"Origin", "null"}})};
  ASSERT_EQ(s.status(), 200u);
  auto conn = s.expect_connected();
  expect_control(n.port, "unsubscribe", control_body(conn, "q", 1), 200, {{"Origin", "null"}});
  // Other untrusted origins are still refused.
  sse_client evil{n.port, with_headers({{"Origin", "http://evil.example"}})};
  EXPECT_EQ(evil.status(), 403u);
}

TEST(SseHub, OriginRuleOnControls) {
  sse_node n{
      "http: { maxBodyBytes: 4096 }\n"
      "query: { maxObservableInboundFrameBytes: 1024, allowedOrigins: "
      "[\"https://app.example.com\"] }"};
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1})");
  sse_client s{n.port};
  auto conn = s.expect_connected();
  const header_list evil{{"Origin", "http://evil.example"}};
  const header_list null_origin{{"Origin", "null"}};
  // Seed 001 (wins over the spec's 404): 403, before everything else but the method.
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 1), 403, evil);
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", 1), 403, evil);
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 1), 403, null_origin);
  expect_control(n.port, "subscribe", subscribe_body("unknown", "q1", 1), 403, evil);  // not 404
  expect_control(n.port, "subscribe", "{", 403, evil);                                 // not 400
  expect_control(n.port, "subscribe", "{}", 403,
                 {{"Origin", "http://evil.example"}, {"Content-Type", "text/plain"}});  // not 415
  auto big = control_body(conn, "q1", 1);
  big.append(2000 - big.size(), ' ');
  expect_control(n.port, "unsubscribe", big, 403, evil);  // not 413
  // Also beyond http.maxBodyBytes, where the body is refused while it is still being read.
  auto huge = control_body(conn, "q1", 1);
  huge.append(5000 - huge.size(), ' ');
  expect_control(n.port, "unsubscribe", huge, 403, evil);
  // The method is checked first.
  auto get = http_exact(n.port, "GET", "/.cratis/queries/sse/subscribe", "", evil);
  EXPECT_EQ(get.status, 405u);
  // Nothing of that reached the stream; trusted origins control it.
  EXPECT_TRUE(barrier(s, n.port, conn, 1).empty());
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 1), 200,
                 {{"Origin", own_origin(n.port)}});
  EXPECT_TRUE(is_result(s.read_json(), "q1", 1));
  expect_control(n.port, "unsubscribe", control_body(conn, "q1", 1), 200,
                 {{"Origin", "https://app.example.com"}});
}

// ---------------------------------------------------------------------------------------------
// 6. HEAD and method routing (§1, Decision 5).

TEST(SseHub, HeadIsAProbeAndOtherMethodsAre405) {
  sse_node n;
  ASSERT_TRUE(n.node);
  {
    // On one keep-alive connection: HEAD, then GET /livez. The second answer starting right
    // after the first head proves the probe wrote no body bytes.
    raw_connection c{n.port};
    c.send_all(build_request(n.port, "HEAD", "/.cratis/queries/sse", {}, ""));
    auto head = read_response(c, true);
    EXPECT_EQ(head.status, 200u) << head.head;
    EXPECT_EQ(head.header("content-type"), "text/event-stream; charset=utf-8");
    EXPECT_EQ(head.header("cache-control"), "no-cache");
    EXPECT_EQ(head.header("connection"), "keep-alive");
    EXPECT_EQ(head.header("x-accel-buffering"), "no");
    EXPECT_TRUE(looks_like_uuid(head.header("x-correlation-id")));
    EXPECT_EQ(n.node->runtime().stats().hub_connections, 0u);
    c.send_all(build_request(n.port, "GET", "/livez", {{"Connection", "close"}}, ""));
    auto live = read_response(c, false);
    EXPECT_EQ(live.status, 200u) << live.head;
    EXPECT_EQ(live.body, R"({"status":"ok"})");
  }
  // HEAD allocates nothing, with query parameters too.
  auto probe = http_exact(n.port, "HEAD", "/.cratis/queries/sse?x-cratis-microservice=a");
  EXPECT_EQ(probe.status, 200u);
  EXPECT_EQ(n.node->runtime().stats().hub_connections, 0u);

  for (std::string m : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    SCOPED_TRACE(m);
    auto r = http_exact(n.port, m, "/.cratis/queries/sse", m == "POST" ? "{}" : "",
                        {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 405u);
    EXPECT_EQ(r.header("allow"), "GET");
    expect_empty(r);
  }
  for (std::string path : {"/.cratis/queries/sse/subscribe", "/.cratis/queries/sse/unsubscribe"}) {
    for (std::string m : {"GET", "PUT", "DELETE", "HEAD"}) {
      SCOPED_TRACE(m + " " + path);
      auto r = http_exact(n.port, m, path);
      EXPECT_EQ(r.status, 405u);
      EXPECT_EQ(r.header("allow"), "POST");
      EXPECT_TRUE(r.body.empty());
    }
  }
  for (std::string path : {"/.cratis/queries/sse/whatever", "/.cratis/queries/sse/subscribe/x",
                           "/.cratis/queries/sse/"}) {
    for (std::string m : {"GET", "POST"}) {
      SCOPED_TRACE(m + " " + path);
      auto r = http_exact(n.port, m, path, m == "POST" ? "{}" : "",
                          {{"Content-Type", "application/json"}});
      EXPECT_EQ(r.status, 404u);
      expect_empty(r);
    }
  }
  EXPECT_EQ(n.node->runtime().stats().hub_connections, 0u);
  // The query string is ignored on the stream (§12: x-cratis-microservice).
  sse_client s{n.port, with_target("/.cratis/queries/sse?x-cratis-microservice=a")};
  ASSERT_EQ(s.status(), 200u);
  s.expect_connected();
  EXPECT_EQ(n.node->runtime().stats().hub_connections, 1u);
}

// ---------------------------------------------------------------------------------------------
// 7. Keep-alive (§6).

TEST(SseHub, KeepAlivePingOnAnIdleStream) {
  sse_node n{"query: { keepAliveIntervalMs: 200 }"};
  ASSERT_TRUE(n.node);
  sse_client s{n.port};
  auto first = s.read_json();
  EXPECT_EQ(first["type"], "Connected");
  EXPECT_EQ(first["keepAliveIntervalMs"], 200);
  auto connected_at = clock_type::now();
  std::int64_t last_ts = 0;
  for (int i = 0; i < 2; ++i) {
    auto ev = s.read_event(3s);
    ASSERT_TRUE(ev) << "no Ping";
    auto gap = clock_type::now() - connected_at;
    connected_at = clock_type::now();
    // An ordinary data event (not an SSE comment), exactly {"type":"Ping","timestamp":<int>}.
    ASSERT_EQ(ev->rfind(R"(data: {"type":"Ping","timestamp":)", 0), 0u) << *ev;
    ASSERT_EQ(ev->back(), '}');
    auto v = json::parse(ev->substr(6)).as_object();
    EXPECT_EQ(v.size(), 2u);
    ASSERT_TRUE(v.at("timestamp").is_int64()) << *ev;
    auto ts = v.at("timestamp").as_int64();
    auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    EXPECT_LE(std::abs(now_ms - ts), 60000) << "timestamp is Unix ms";
    EXPECT_GE(ts, last_ts);
    last_ts = ts;
    // Counted from the last write: not much before the interval (the slack is for our own
    // reading delay on a loaded machine).
    EXPECT_GE(gap, 100ms);
  }
}

TEST(SseHub, KeepAliveZeroIsDisabledAndAdvertised) {
  sse_node n{"query: { keepAliveIntervalMs: 0 }"};
  ASSERT_TRUE(n.node);
  sse_client s{n.port};
  auto first = s.read_json();
  EXPECT_EQ(first["type"], "Connected");
  EXPECT_EQ(first["keepAliveIntervalMs"], 0);
  EXPECT_TRUE(s.silent_for(500ms));
}

// ---------------------------------------------------------------------------------------------
// 8. The connection budget (§9).

TEST(SseHub, OverTheConnectionBudgetIs503WithRetryAfter) {
  sse_node n{"query: { maxObservableHubConnections: 1 }"};
  ASSERT_TRUE(n.node);
  auto first = std::make_unique<sse_client>(n.port);
  ASSERT_EQ(first->status(), 200u);
  auto conn = first->expect_connected();
  sse_client second{n.port};
  EXPECT_EQ(second.status(), 503u) << second.response().head;
  EXPECT_EQ(second.header("retry-after"), "1");
  // The head every stream refusal carries (gateway/stream_refusal.hpp), as the windowed
  // stream's: not cached, and the request's correlation id.
  EXPECT_EQ(second.header("cache-control"), "no-store");
  EXPECT_TRUE(looks_like_uuid(second.header("x-correlation-id")));
  expect_empty(second.response());
  EXPECT_TRUE(second.ended());
  // A WebSocket hub connection shares the budget: its upgrade is refused with 503 too.
  {
    ws_client ws{n.port};
    EXPECT_EQ(ws.upgrade_status(), 503u);
    EXPECT_EQ(ws.upgrade_header("Retry-After"), "1");
  }
  // HEAD is a probe and allocates nothing, so it is not refused.
  EXPECT_EQ(http_exact(n.port, "HEAD", "/.cratis/queries/sse").status, 200u);
  // The first stream is unaffected.
  expect_control(n.port, "unsubscribe", control_body(conn, "q", 1), 200);
  // When it goes, the unit comes back (the server notices the close asynchronously).
  first->close();
  first.reset();
  auto deadline = clock_type::now() + 5s;
  std::unique_ptr<sse_client> third;
  while (clock_type::now() < deadline) {
    third = std::make_unique<sse_client>(n.port);
    if (third->status() != 503) {
      break;
    }
  }
  ASSERT_TRUE(third);
  EXPECT_EQ(third->status(), 200u);
  third->expect_connected();
}

// ---------------------------------------------------------------------------------------------
// 10. Shutdown (Decision 6, §13): streams end.

TEST(SseHub, NodeStopEndsTheStream) {
  sse_node n{"query: { observableShutdownTimeoutMs: 2000 }"};
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "a", R"({"n":1})");
  sse_client s{n.port};
  auto conn = s.expect_connected();
  expect_control(n.port, "subscribe", subscribe_body(conn, "q1", 1), 200);
  EXPECT_TRUE(is_result(s.read_json(), "q1", 1));
  sse_client idle{n.port};
  idle.expect_connected();
  auto t0 = clock_type::now();
  n.node->stop();
  auto took = clock_type::now() - t0;
  EXPECT_LT(took, 2s + 1s);
  // Both streams ended while the node stopped (the node object, and so every socket, still
  // exists): the last chunk, a clean end of the chunked response, then EOF.
  for (auto* c : {&s, &idle}) {
    EXPECT_TRUE(c->wait_end(1s));
    EXPECT_TRUE(c->saw_last_chunk());
  }
}

}  // namespace
}  // namespace weir::test

namespace weir::test {

// Seed 001: a control request must resolve to the same tenant as the stream it controls. The
// tenant header is believed from a trusted proxy (here: loopback, where the test runs).
TEST(SseTenant, ControlsFromAnotherTenantAre404) {
  temp_dir dir;
  auto node = start_node(dir.path(), "http: { trustedProxies: [\"127.0.0.1\"] }\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  sse_client::options o;
  o.headers = {{"x-cratis-tenant-id", "acme"}};
  sse_client stream{port, o};
  ASSERT_EQ(stream.status(), 200u);
  auto id = stream.expect_connected();
  auto body = control_body(id, "q1", 1, subscription_request("T.Items.All", {{"obj", "o1"}}));
  EXPECT_EQ(sse_control_post(port, "subscribe", body).status, 404u);  // no tenant
  EXPECT_EQ(sse_control_post(port, "subscribe", body, {{"x-cratis-tenant-id", "other"}}).status,
            404u);
  EXPECT_EQ(sse_control_post(port, "subscribe", body, {{"x-cratis-tenant-id", "acme"}}).status,
            200u);
  auto snap = stream.read_json();
  EXPECT_EQ(snap["type"], "QueryResult");
  EXPECT_EQ(snap["queryId"], "q1");
}

}  // namespace weir::test

namespace weir::test {

// Behind a trusted proxy (here: loopback, where the test runs) an anonymous stream belongs to
// the client the proxy names in X-Forwarded-For, so a second replica of the ingress (another
// proxy connection) can carry that client's control POSTs, and no other client behind the same
// proxy can drive the stream (security.md, behind a proxy).
TEST(SseOwnership, AnonymousStreamsBehindATrustedProxyBelongToTheForwardedClient) {
  temp_dir dir;
  auto node = start_node(dir.path(), "http: { trustedProxies: [\"127.0.0.1\", \"10.0.0.0/8\"] }\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "r1", R"({"n":1})");
  sse_client::options o;
  o.headers = {{"X-Forwarded-For", "203.0.113.5, 10.1.2.3"}};  // client, then an inner proxy
  sse_client stream{port, o};
  ASSERT_EQ(stream.status(), 200u);
  auto id = stream.expect_connected();
  auto body = control_body(id, "q1", 1, subscription_request("T.Items.All", {{"obj", "o1"}}));
  // The proxy itself (no forwarded client) and another client behind it: as if no such stream.
  EXPECT_EQ(sse_control_post(port, "subscribe", body).status, 404u);
  EXPECT_EQ(sse_control_post(port, "subscribe", body, {{"X-Forwarded-For", "203.0.113.9"}}).status,
            404u);
  // The same client through another connection of the proxy, its hops in another order of
  // inner proxies: the right-most untrusted hop is what counts.
  EXPECT_EQ(
      sse_control_post(port, "subscribe", body, {{"X-Forwarded-For", "203.0.113.5, 10.9.9.9"}})
          .status,
      200u);
  auto snap = stream.read_json();
  EXPECT_EQ(snap["type"], "QueryResult");
  EXPECT_EQ(snap["queryId"], "q1");
  // A client that puts the owner's address left of its own gains nothing: its own is right-most.
  auto body2 = control_body(id, "q2", 1, subscription_request("T.Items.All", {{"obj", "o1"}}));
  EXPECT_EQ(
      sse_control_post(port, "subscribe", body2, {{"X-Forwarded-For", "203.0.113.5, 198.51.100.7"}})
          .status,
      404u);
}

}  // namespace weir::test

// The hostile-client suite (issue 22): what an attacker sends, through each entry point of one
// node — the write API (PUT, PATCH update ops, JSON Patch), the windowed API, the hubs and the
// direct and state streams — and what a client that stops reading does to the node. Each case
// asserts the refusal in the protocol's own form, that nothing was applied, that the node is
// alive (/readyz 200), and that every frame a well-behaved subscriber got meanwhile is strict
// JSON and UTF-8. gRPC Data and PostgreSQL rows have their cases in grpc_data_test and
// change_capture_test.
#include <sys/socket.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/utf8.hpp"
#include "sse_test_support.hpp"
#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

std::string record_path(const std::string& id) {
  return "/v1/spaces/t/objects/o1/datasets/items/records/" + id;
}

std::string code_of(const http_response& r) {
  json::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("error")) {
    return "<no envelope: " + r.body.substr(0, 200) + ">";
  }
  return std::string{v.at("error").at("code").as_string()};
}

double metric(std::uint16_t port, const std::string& name) {
  auto r = http(port, "GET", "/metrics");
  auto at = r.body.find("\n" + name + " ");
  if (at == std::string::npos) {
    return -1;
  }
  return std::stod(r.body.substr(at + name.size() + 2));
}

/// A frame a browser can take: valid UTF-8, and JSON a strict parser reads (no `Infinity`).
void expect_strict_json(const std::string& text) {
  EXPECT_TRUE(core::valid_utf8(text)) << text.substr(0, 200);
  json::error_code ec;
  json::parse(text, ec);
  EXPECT_FALSE(ec) << text.substr(0, 200);
  EXPECT_EQ(text.find("Infinity"), std::string::npos) << text.substr(0, 200);
}

/// This process's resident memory in MiB (the node under test runs in it).
long rss_mib() {
  std::ifstream f{"/proc/self/status"};
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stol(line.substr(6)) / 1024;
    }
  }
  return -1;
}

struct hostile : single_node {
  void expect_alive() { EXPECT_EQ(http(port, "GET", "/readyz").status, 200u); }
  /// The record `id` of o1's items as a windowed query returns it ("" when there is none).
  std::string stored(const std::string& id) {
    auto r =
        windowed_query(port, "t", "object",
                       R"({"objectId":"o1","dataset":"items","filter":{"id":")" + id + R"("}})");
    EXPECT_EQ(r.status, 200u) << r.body;
    auto at = r.body.find(R"({"id":")" + id + "\"");
    return at == std::string::npos ? "" : r.body.substr(at);
  }
};

TEST_F(hostile, AHundredThousandSegmentPatchPathIsRefusedQuickly) {
  put_record(port, "t", "o1", "items", "r1", R"({"n":1})");
  std::string path = "a";
  for (int i = 0; i < 120000; ++i) {
    path += ".a";
  }
  auto started = std::chrono::steady_clock::now();
  auto r = http(port, "PATCH", record_path("r1"), R"({"$set":{")" + path + R"(":1}})",
                {{"Content-Type", "application/json"}});
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(code_of(r), "record.too_deep");
  EXPECT_LT(took, 2s);
  EXPECT_NE(stored("r1").find(R"("n":1)"), std::string::npos);
  // A body nested a million levels deep: refused by the parser, not by the stack.
  auto deep = http(port, "PUT", record_path("r2"), std::string(1000000, '['),
                   {{"Content-Type", "application/json"}});
  EXPECT_EQ(deep.status, 400u);
  EXPECT_EQ(code_of(deep), "record.too_deep");
  expect_alive();
}

TEST_F(hostile, RecordsAsDeepAsTheWriteAllowsAreMatchedAndProjected) {
  // 64 levels (the record itself is one, then 63 objects under "d"): the filter and sort reach the
  // leaf, and the projection (at most 8 segments, windowed-subscribe §6) keeps the whole subtree.
  std::string doc = R"({"n":1,"d":)";
  std::string close;
  for (int i = 0; i < 63; ++i) {
    doc += R"({"a":)";
    close += "}";
  }
  doc += "7" + close + "}";
  put_record(port, "t", "o1", "items", "deep", doc);
  std::string path = "d";
  for (int i = 0; i < 63; ++i) {
    path += ".a";
  }
  auto r = windowed_query(port, "t", "object",
                          R"({"objectId":"o1","dataset":"items","filter":{")" + path +
                              R"(":7},"sort":[")" + path + R"("],"projection":{"d":1}})");
  ASSERT_EQ(r.status, 200u) << r.body;
  json::parse_options deep_enough;
  deep_enough.max_depth = 70;
  auto records = json::parse(r.body, {}, deep_enough).at("records").as_array();
  ASSERT_EQ(records.size(), 1u) << r.body;
  EXPECT_NE(json::serialize(records[0]).find(":7"), std::string::npos) << r.body;
  // One level deeper is refused.
  auto over = http(port, "PUT", record_path("deeper"), R"({"x":)" + doc + "}",
                   {{"Content-Type", "application/json"}});
  EXPECT_EQ(over.status, 400u);
  EXPECT_EQ(code_of(over), "record.too_deep");
}

TEST_F(hostile, NumbersJsonCannotCarryAreRefusedEverywhere) {
  ws_client watcher{port};
  watcher.expect_connected();
  watcher.subscribe("q", "T.Items.All", {{"obj", "o1"}});
  watcher.read_json();  // the initial result
  const std::string bodies[] = {R"({"n":1e400})", R"({"n":-1e400})",
                                "{\"n\":" + std::string(10000, '9') + "}",
                                R"({"n":[1,{"x":1e999}]})"};
  for (const auto& body : bodies) {
    auto r = http(port, "PUT", record_path("big"), body, {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 400u) << body.substr(0, 50);
    EXPECT_EQ(code_of(r), "record.invalid_number") << body.substr(0, 50);
  }
  // $inc past the largest double.
  put_record(port, "t", "o1", "items", "inc", R"({"n":1.7e308})");
  EXPECT_EQ(stored("big"), "");
  auto inc = http(port, "PATCH", record_path("inc"), R"({"$inc":{"n":1.7e308}})",
                  {{"Content-Type", "application/json"}});
  EXPECT_EQ(inc.status, 400u);
  EXPECT_EQ(code_of(inc), "record.invalid_number");
  // A JSON Patch that adds one.
  auto jp = http(port, "PATCH", record_path("inc"), R"([{"op":"add","path":"/m","value":1e400}])",
                 {{"Content-Type", "application/json-patch+json"}});
  EXPECT_EQ(jp.status, 400u);
  EXPECT_EQ(code_of(jp), "record.invalid_number");
  // A windowed filter with one, and a hub subscription's argument.
  auto w = windowed_query(port, "t", "object",
                          R"({"objectId":"o1","dataset":"items","filter":{"n":{"$lt":1e400}}})");
  EXPECT_EQ(w.status, 400u);
  EXPECT_EQ(code_of(w), "request.invalid_field");
  // Everything the watcher got is strict JSON (the inc record, nothing else).
  while (auto f = watcher.read(300ms)) {
    expect_strict_json(*f);
  }
  auto all = windowed_query(port, "t", "datasets", R"({"dataset":"items"})");
  EXPECT_EQ(all.status, 200u);
  expect_strict_json(all.body);
  expect_alive();
}

TEST_F(hostile, TextThatIsNotUtf8IsRefused) {
  put_record(port, "t", "o1", "items", "r0", R"({"n":0})");
  for (const char* id : {"%FF", "%C0%AF", "a%ED%A0%80"}) {
    auto r =
        http(port, "PUT", record_path(id), R"({"n":1})", {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 400u) << id;
    EXPECT_EQ(code_of(r), "request.invalid_utf8") << id;
  }
  auto obj = http(port, "PUT", "/v1/spaces/t/objects/%FF", R"({"name":"x"})",
                  {{"Content-Type", "application/json"}});
  EXPECT_EQ(obj.status, 400u);
  EXPECT_EQ(code_of(obj), "request.invalid_utf8");
  // Raw bytes in the target, and a query argument.
  auto raw = http_exact(port, "GET", "/api/t/items?obj=\xff", "");
  EXPECT_EQ(raw.status, 400u);
  EXPECT_NE(raw.body.find("request.invalid_utf8"), std::string::npos);
  auto arg = http(port, "GET", "/api/t/items?obj=%FF");
  EXPECT_EQ(arg.status, 400u);
  // A member name or string that is not UTF-8 in a body.
  auto body = http(port, "PUT", record_path("r"), "{\"\xc0\xaf\":1}",
                   {{"Content-Type", "application/json"}});
  EXPECT_EQ(body.status, 400u);
  EXPECT_EQ(code_of(body), "request.invalid_utf8");
  // A tenant header that is not UTF-8 is not echoed.
  auto tenant = http_exact(port, "GET", "/v1/auth", "", {{"x-cratis-tenant-id", "\xff\xfe"}});
  EXPECT_TRUE(core::valid_utf8(tenant.body));
  // The space-wide query answers at once, in strict JSON.
  auto started = std::chrono::steady_clock::now();
  auto all = windowed_query(port, "t", "datasets", R"({"dataset":"items"})");
  EXPECT_EQ(all.status, 200u);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  expect_strict_json(all.body);
  expect_alive();
}

TEST_F(hostile, AJsonPatchThatDoublesAnArrayStopsAtTheSizeBound) {
  put_record(port, "t", "o1", "items", "amp", R"({"a":[1,2,3,4,5,6,7,8,9,10]})");
  std::string patch = "[";
  for (int i = 0; i < 40; ++i) {
    patch += std::string(i ? "," : "") + R"({"op":"copy","from":"/a","path":"/a/-"})";
  }
  patch += "]";
  auto rss_before = rss_mib();
  auto started = std::chrono::steady_clock::now();
  auto r = http(port, "PATCH", record_path("amp"), patch,
                {{"Content-Type", "application/json-patch+json"}});
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_EQ(r.status, 413u);
  EXPECT_EQ(code_of(r), "record.too_large");
  // Refused while it applied: 40 doublings would have needed terabytes; the node grew by at
  // most a few times the 1 MiB record bound (the work bound is four times it).
  EXPECT_LT(rss_mib() - rss_before, 64) << "MiB grown by one refused patch";
  EXPECT_NE(stored("amp").find(R"("a":[1,2,3,4,5,6,7,8,9,10])"), std::string::npos);
  // A record over the size bound as a plain PUT.
  auto big =
      http(port, "PUT", record_path("big"), R"({"s":")" + std::string(1100 * 1024, 'x') + "\"}",
           {{"Content-Type", "application/json"}});
  EXPECT_TRUE(big.status == 413u) << big.status << " " << big.body.substr(0, 200);
  expect_alive();
}

TEST_F(hostile, OversizedHeadersAnswer431WithTheEnvelope) {
  header_list headers;
  for (int i = 0; i < 40; ++i) {
    headers.emplace_back("X-Filler-" + std::to_string(i), std::string(1000, 'f'));
  }
  auto r = http_exact(port, "GET", "/livez", "", headers);
  EXPECT_EQ(r.status, 431u);
  EXPECT_NE(r.body.find("request.headers_too_large"), std::string::npos);
  expect_alive();
}

TEST_F(hostile, CrossSiteRequestsForACallersDataAreRefused) {
  header_list evil{{"Origin", "https://evil.example"}};
  EXPECT_EQ(http_exact(port, "GET", "/api/t/items?obj=o1", "", evil).status, 403u);
  auto sse_headers = evil;
  sse_headers.emplace_back("Accept", "text/event-stream");
  EXPECT_EQ(http_exact(port, "GET", "/api/t/items?obj=o1", "", sse_headers).status, 403u);
  EXPECT_EQ(http_exact(port, "GET", "/.cratis/queries/health", "", evil).status, 403u);
  EXPECT_EQ(http_exact(port, "GET", "/.cratis/queries/health", "", sse_headers).status, 403u);
  EXPECT_EQ(http_exact(port, "GET", "/v1/auth", "", evil).status, 403u);
  EXPECT_EQ(http_exact(port, "GET", "/v1/spaces/t/objects/o1/state", "", sse_headers).status, 403u);
  auto windowed_headers = evil;
  windowed_headers.emplace_back("Content-Type", "application/json");
  EXPECT_EQ(http_exact(port, "POST", windowed_path("t", "object", false),
                       R"({"objectId":"o1","dataset":"items"})", windowed_headers)
                .status,
            403u);
  // The page's own origin, and no Origin at all (not a browser), are served.
  header_list same{{"Origin", "http://127.0.0.1:" + std::to_string(port)}};
  EXPECT_EQ(http_exact(port, "GET", "/api/t/items?obj=o1", "", same).status, 200u);
  EXPECT_EQ(http_exact(port, "GET", "/v1/auth", "").status, 200u);
}

/// A WebSocket hub client over a raw socket that subscribes and then never reads again.
std::unique_ptr<raw_connection> stalled_ws_subscriber(std::uint16_t port) {
  auto c = std::make_unique<raw_connection>(port);
  c->send_all(build_request(port, "GET", "/.cratis/queries/ws",
                            {{"Upgrade", "websocket"},
                             {"Connection", "Upgrade"},
                             {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
                             {"Sec-WebSocket-Version", "13"}},
                            ""));
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (c->pending().find("\r\n\r\n") == std::string::npos && c->fill(deadline)) {
  }
  EXPECT_EQ(c->pending().rfind("HTTP/1.1 101", 0), 0u) << c->pending();
  std::string text = R"({"type":"Subscribe","queryId":"q","revision":1,)"
                     R"("payload":{"queryName":"T.Items.All","arguments":{"obj":"o1"}}})";
  // A masked text frame with a zero mask key: the payload goes as it is.
  std::string frame{"\x81", 1};
  if (text.size() < 126) {  // the shortest length encoding, as RFC 6455 §5.2 requires
    frame.push_back(static_cast<char>(0x80 | text.size()));
  } else {
    frame.push_back(static_cast<char>(0x80 | 126));
    frame.push_back(static_cast<char>(text.size() >> 8));
    frame.push_back(static_cast<char>(text.size() & 0xff));
  }
  frame.append(4, '\0');
  frame += text;
  c->send_all(frame);
  return c;
}

/// Calls `write(i)` (i = 0, 1, …; at most 400 times) until `released` says the stalled client's
/// slots are gone; returns the time from the first write to the release, or nullopt after 30 s.
template <class Write, class Released>
std::optional<std::chrono::milliseconds> stall_until_released(Write write, Released released) {
  auto started = std::chrono::steady_clock::now();
  for (int i = 0; std::chrono::steady_clock::now() - started < 30s; ++i) {
    if (i < 400) {
      write(i);
    } else {
      std::this_thread::sleep_for(50ms);
    }
    if (released()) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - started);
    }
  }
  return std::nullopt;
}

/// Records of o1 rewritten over and over: 40 of 16 KiB, so every change makes hub and direct
/// frames of up to the whole 640 KiB result (under the 1 MiB frame bound).
auto rewrite_records(std::uint16_t port) {
  return [port](int i) {
    std::string big =
        R"({"n":1,"s":")" + std::string(16 * 1024, static_cast<char>('a' + i % 26)) + "\"}";
    http(port, "PUT", record_path("big" + std::to_string(i % 40)), big,
         {{"Content-Type", "application/json"}});
  };
}

/// o1's property document rewritten with 256 KiB of new text each time (state-stream deltas).
auto rewrite_property_document(std::uint16_t port) {
  return [port](int i) {
    std::string doc =
        R"({"s":")" + std::string(256 * 1024, static_cast<char>('a' + i % 26)) + "\"}";
    http(port, "PUT", "/v1/spaces/t/objects/o1", doc, {{"Content-Type", "application/json"}});
  };
}

/// Subscriptions held on the node, as /metrics reports them.
auto subscriptions_released(std::uint16_t port) {
  return [port] { return metric(port, "weir_subscriptions") == 0; };
}

struct slow_clients : ::testing::Test {
  void SetUp() override {
    node = start_node(dir.path(), "http: { sendStallTimeoutMs: 1000 }\n");
    ASSERT_TRUE(node);
    port = node->http_port();
  }
  /// The release bound the tests hold the node to: the stall bound, plus the time to fill the
  /// client's socket buffers with writes, plus slack for a loaded machine.
  static constexpr auto bound = 20s;
  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

TEST_F(slow_clients, AWebSocketHubClientThatStopsReadingLosesItsSlot) {
  auto c = stalled_ws_subscriber(port);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (metric(port, "weir_hub_connections") < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(metric(port, "weir_hub_connections"), 1);
  auto took = stall_until_released(rewrite_records(port), [&] {
    return metric(port, "weir_hub_connections") == 0 && metric(port, "weir_subscriptions") == 0;
  });
  ASSERT_TRUE(took) << "the stalled WebSocket client still holds its slot";
  EXPECT_LT(*took, bound);
  std::cout << "[ measure ] WebSocket hub: stall to release " << took->count() << " ms\n";
  EXPECT_EQ(http(port, "GET", "/readyz").status, 200u);
}

TEST_F(slow_clients, AnSseHubClientThatStopsReadingLosesItsSlot) {
  sse_client hub{port};
  auto id = hub.expect_connected();
  auto sub = sse_control_post(
      port, "subscribe",
      control_body(id, "q", 1, subscription_request("T.Items.All", {{"obj", "o1"}})));
  ASSERT_EQ(sub.status, 200u) << sub.body;
  ASSERT_EQ(metric(port, "weir_hub_connections"), 1);
  auto took = stall_until_released(rewrite_records(port), [&] {
    return metric(port, "weir_hub_connections") == 0 && metric(port, "weir_subscriptions") == 0;
  });
  ASSERT_TRUE(took) << "the stalled SSE client still holds its slot";
  EXPECT_LT(*took, bound);
  std::cout << "[ measure ] SSE hub: stall to release " << took->count() << " ms\n";
}

TEST_F(slow_clients, ADirectSseStreamThatStopsReadingIsDropped) {
  put_record(port, "t", "o1", "items", "first", R"({"n":0})");
  sse_client::options direct;
  direct.target = "/api/t/items?obj=o1";
  direct.headers = {{"Accept", "text/event-stream"}};
  sse_client d{port, direct};
  ASSERT_EQ(d.status(), 200u);
  ASSERT_EQ(metric(port, "weir_subscriptions"), 1);
  auto took = stall_until_released(rewrite_records(port), subscriptions_released(port));
  ASSERT_TRUE(took) << "the stalled direct SSE stream still holds its subscription";
  EXPECT_LT(*took, bound);
  std::cout << "[ measure ] direct SSE: stall to release " << took->count() << " ms\n";
}

TEST_F(slow_clients, AWindowedStreamThatStopsReadingIsDropped) {
  put_record(port, "t", "o1", "items", "first", R"({"n":0})");
  windowed_stream w{port, "t", "object", R"({"objectId":"o1","dataset":"items","sort":["n"]})"};
  ASSERT_EQ(w.status(), 200u);
  ASSERT_EQ(metric(port, "weir_subscriptions"), 1);
  // Every change carries a whole 64 KiB record: the client's buffers fill after a few hundred.
  auto write = [this](int i) {
    std::string big =
        R"({"n":1,"s":")" + std::string(64 * 1024, static_cast<char>('a' + i % 26)) + "\"}";
    http(port, "PUT", record_path("w" + std::to_string(i % 40)), big,
         {{"Content-Type", "application/json"}});
  };
  auto took = stall_until_released(write, subscriptions_released(port));
  ASSERT_TRUE(took) << "the stalled windowed stream still holds its subscription";
  EXPECT_LT(*took, bound);
  std::cout << "[ measure ] windowed: stall to release " << took->count() << " ms\n";
}

TEST_F(slow_clients, AnAgUiStateStreamThatStopsReadingIsDropped) {
  http(port, "PUT", "/v1/spaces/t/objects/o1", R"({"s":""})",
       {{"Content-Type", "application/json"}});
  sse_client::options state;
  state.target = "/v1/spaces/t/objects/o1/state";
  state.headers = {{"Accept", "text/event-stream"}};
  sse_client s{port, state};
  ASSERT_EQ(s.status(), 200u);
  ASSERT_EQ(metric(port, "weir_subscriptions"), 1);
  auto took = stall_until_released(rewrite_property_document(port), subscriptions_released(port));
  ASSERT_TRUE(took) << "the stalled state stream still holds its subscription";
  EXPECT_LT(*took, bound);
  std::cout << "[ measure ] AG-UI state: stall to release " << took->count() << " ms\n";
}

TEST(RecordLimits, WhatIsStoredIsWhatALoadAcceptsAgain) {
  // records.maxMembers counts the stamped record: 16 members of the caller's plus the id and
  // _ver the node adds would be refused by a PostgreSQL load, so the write is refused instead.
  temp_dir dir;
  auto node = start_node(dir.path(), "records: { maxMembers: 16, maxKeyBytes: 16 }\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  std::string body = "{";
  for (int i = 0; i < 16; ++i) {
    body += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  }
  body += "}";
  auto r = http(port, "PUT", record_path("m"), body, {{"Content-Type", "application/json"}});
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(code_of(r), "record.too_many_members");
  auto key = http(port, "PUT", record_path("k"), R"({"a_very_long_member_name":1})",
                  {{"Content-Type", "application/json"}});
  EXPECT_EQ(key.status, 400u);
  EXPECT_EQ(code_of(key), "record.key_too_long");
  put_record(port, "t", "o1", "items", "fine", R"({"a":1})");
}

TEST(HubBudgets, OneAddressCannotTakeEveryHubSlotWhenTheNodeSaysSo) {
  temp_dir dir;
  // 512 hub slots, 64 per address: by default one address may take all 512 (as in Arc).
  auto node = start_node(dir.path(), "query: { maxObservableHubConnectionsPerAddress: 64 }\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  std::vector<std::unique_ptr<ws_client>> held;
  for (int i = 0; i < 64; ++i) {
    held.push_back(std::make_unique<ws_client>(port));
    held.back()->expect_connected();
  }
  ws_client over{port};
  EXPECT_EQ(over.upgrade_status(), 503u);
  EXPECT_FALSE(over.read(1s));
  // A slot given back is taken again.
  held.pop_back();
  std::unique_ptr<ws_client> again;
  for (int attempt = 0; attempt < 50; ++attempt) {
    again = std::make_unique<ws_client>(port);
    if (auto f = again->read(1s); f && f->find("Connected") != std::string::npos) {
      break;
    }
    again.reset();
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(again);
}

}  // namespace
}  // namespace weir::test

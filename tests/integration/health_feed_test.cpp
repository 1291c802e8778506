// The health feed `QueryHealth.ObserveHealth` (arc-hub §11) over every transport it has: a hub
// subscription (WebSocket and SSE), the direct WebSocket and SSE on /.cratis/queries/health, and
// the HTTP snapshot. Also its scoping (an anonymous caller sees only the connections opened from
// its own address and tenant), that it follows connections and subscriptions as they come and
// go, that it reports data served, and that its own emissions do not wake it again. Plus
// X-Correlation-ID on the WebSocket upgrade answer.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

const std::string fast_health = "query:\n  healthIntervalMs: 40\n";

struct health_node {
  explicit health_node(const std::string& extra = "") {
    node = start_node(dir.path(), fast_health + extra);
    if (node) {
      port = node->http_port();
    }
  }
  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

bool is_result_for(const json::object& f, std::string_view query_id) {
  auto* t = f.if_contains("type");
  auto* q = f.if_contains("queryId");
  return t && t->is_string() && t->get_string() == "QueryResult" && q && q->is_string() &&
         q->get_string() == query_id;
}

const json::object& health_of(const json::object& frame) {
  return frame.at("payload").as_object().at("data").as_object();
}

/// Reads the feed's frames until its value satisfies `pred`; returns that value.
json::object health_until(ws_client& c, std::string_view query_id,
                          const std::function<bool(const json::object&)>& pred) {
  auto f = c.read_until(
      [&](const json::object& f) { return is_result_for(f, query_id) && pred(health_of(f)); });
  return health_of(f);
}

std::int64_t total_connections(const json::object& h) {
  return h.at("totalConnections").as_int64();
}

TEST(HealthFeed, HubSubscriptionShowsTheCallersConnectionsAndFollowsThem) {
  health_node n;
  ASSERT_TRUE(n.node);
  ws_client a{n.port};
  auto a_id = a.expect_connected();
  a.subscribe("items", "T.Items.All", json::object{{"obj", "o1"}});
  a.read_until([](const json::object& f) { return is_result_for(f, "items"); });
  a.subscribe("h", "QueryHealth.ObserveHealth");

  auto h = health_until(a, "h", [](const json::object&) { return true; });
  ASSERT_EQ(total_connections(h), 1);
  EXPECT_EQ(h.at("totalSubscriptions").as_int64(), 2);
  const auto& conn = h.at("connections").as_array().at(0).as_object();
  EXPECT_EQ(conn.at("connectionId").as_string(), a_id);
  EXPECT_EQ(conn.at("protocol").as_string(), "WebSocket");
  EXPECT_TRUE(conn.at("establishedAt").as_string().ends_with("Z"));
  const auto& subs = conn.at("subscriptions").as_array();
  ASSERT_EQ(subs.size(), 2u);
  bool saw_items = false;
  for (const auto& v : subs) {
    const auto& s = v.as_object();
    EXPECT_TRUE(s.contains("connectedAt"));
    EXPECT_TRUE(s.contains("lastPingSentAt"));
    EXPECT_TRUE(s.contains("lastPongReceivedAt"));
    EXPECT_TRUE(s.contains("lastDataServedAt"));
    const auto& ci = s.at("clientInfo").as_object();
    EXPECT_EQ(ci.at("remoteIpAddress").as_string(), "127.0.0.1");
    EXPECT_TRUE(ci.at("userId").is_null());  // anonymous
    if (s.at("subscriptionId").as_string() == "items") {
      saw_items = true;
      EXPECT_EQ(s.at("queryIdentifier").as_string(), "T.Items.All");
      EXPECT_EQ(s.at("readModelType").as_string(), "items");
      // The snapshot was served before the feed was opened.
      EXPECT_TRUE(s.at("lastDataServedAt").is_string());
    }
  }
  EXPECT_TRUE(saw_items);
  const auto& by_query = h.at("querySubscriptions").as_array();
  ASSERT_EQ(by_query.size(), 2u);
  EXPECT_EQ(by_query.at(0).as_object().at("queryName").as_string(), "QueryHealth.ObserveHealth");
  EXPECT_EQ(by_query.at(1).as_object().at("queryName").as_string(), "T.Items.All");
  EXPECT_EQ(by_query.at(1).as_object().at("totalSubscriptions").as_int64(), 1);

  {
    // A second connection from the same address appears, with its subscription, then goes.
    ws_client b{n.port};
    auto b_id = b.expect_connected();
    b.subscribe("other", "T.Objects.All");
    h = health_until(a, "h", [](const json::object& h) {
      return h.at("totalConnections").as_int64() == 2 && h.at("totalSubscriptions").as_int64() == 3;
    });
    EXPECT_EQ(h.at("connections").as_array().at(1).as_object().at("connectionId").as_string(),
              b_id);
  }
  health_until(a, "h", [](const json::object& h) { return total_connections(h) == 1; });

  // Cancelling a subscription shows too.
  a.unsubscribe("items");
  health_until(a, "h",
               [](const json::object& h) { return h.at("totalSubscriptions").as_int64() == 1; });
}

std::string served_time_of(const json::object& h, std::string_view query_id) {
  for (const auto& v :
       h.at("connections").as_array().at(0).as_object().at("subscriptions").as_array()) {
    const auto& s = v.as_object();
    if (s.at("subscriptionId").as_string() == query_id && s.at("lastDataServedAt").is_string()) {
      return std::string{s.at("lastDataServedAt").as_string()};
    }
  }
  return {};
}

TEST(HealthFeed, ItsOwnEmissionsDoNotWakeItButServedDataDoes) {
  // On the SSE hub, whose test client can assert silence and keep reading.
  health_node n;
  ASSERT_TRUE(n.node);
  sse_client s{n.port};
  ASSERT_EQ(s.status(), 200u);
  auto id = s.expect_connected();
  ASSERT_EQ(sse_control_post(
                n.port, "subscribe",
                control_body(id, "items", 1, subscription_request("T.Items.All", {{"obj", "o1"}})))
                .status,
            200u);
  s.read_through([](const json::object& f) { return is_result_for(f, "items"); });
  ASSERT_EQ(sse_control_post(
                n.port, "subscribe",
                control_body(id, "h", 1, subscription_request("QueryHealth.ObserveHealth", {})))
                .status,
            200u);
  auto first =
      health_of(s.read_through([](const json::object& f) { return is_result_for(f, "h"); }).back());
  auto served_before = served_time_of(first, "items");
  EXPECT_FALSE(served_before.empty());
  // Ten sampling intervals pass: nothing changed but the feed's own emission, so nothing is sent.
  EXPECT_TRUE(s.silent_for(std::chrono::milliseconds{400}));

  // The millisecond clock must move for the served time to differ.
  std::this_thread::sleep_for(std::chrono::milliseconds{5});
  put_record(n.port, "t", "o1", "items", "r1", R"({"n":1})");
  s.read_through([&](const json::object& f) {
    if (!is_result_for(f, "h")) {
      return false;
    }
    auto now = served_time_of(health_of(f), "items");
    return !now.empty() && now != served_before;
  });
}

TEST(HealthFeed, AForgedTenantHeaderIsRefused) {
  // Without a trusted proxy in front, a caller cannot pick its tenant with the header.
  health_node n;
  ASSERT_TRUE(n.node);
  auto forged =
      http(n.port, "GET", "/.cratis/queries/health", "", {{"x-cratis-tenant-id", "acme"}});
  EXPECT_EQ(forged.status, 403u);
  EXPECT_EQ(forged.json().at("isAuthorized"), false);
}

TEST(HealthFeed, AnotherAddressOrTenantSeesNone) {
  health_node n{"http: { trustedProxies: [\"127.0.0.1\"] }\n"};
  ASSERT_TRUE(n.node);
  ws_client a{n.port};
  a.expect_connected();

  auto mine = http(n.port, "GET", "/.cratis/queries/health");
  ASSERT_EQ(mine.status, 200u);
  EXPECT_EQ(mine.headers["cache-control"], "no-store");
  auto mine_json = mine.json().as_object();
  EXPECT_EQ(mine_json.at("correlationId").as_string(), mine.headers["x-correlation-id"]);
  EXPECT_TRUE(mine_json.at("isReady").as_bool());
  EXPECT_EQ(total_connections(mine_json.at("data").as_object()), 1);

  auto other_tenant =
      http(n.port, "GET", "/.cratis/queries/health", "", {{"x-cratis-tenant-id", "acme"}});
  ASSERT_EQ(other_tenant.status, 200u);
  EXPECT_EQ(total_connections(other_tenant.json().as_object().at("data").as_object()), 0);

  if (!loopback_alias_usable("127.0.0.2")) {
    GTEST_SKIP() << "127.0.0.2 cannot reach 127.0.0.1 on this machine";
  }
  auto other_address = http_exact(n.port, "GET", "/.cratis/queries/health", "", {}, "127.0.0.2");
  ASSERT_EQ(other_address.status, 200u);
  auto v = json::parse(other_address.body).as_object();
  EXPECT_EQ(total_connections(v.at("data").as_object()), 0);
}

TEST(HealthFeed, DirectSseAndDirectWebSocket) {
  health_node n;
  ASSERT_TRUE(n.node);
  ws_client a{n.port};
  a.expect_connected();

  sse_client::options o;
  o.target = "/.cratis/queries/health";
  o.headers = {{"Accept", "text/event-stream"},
               {"X-Correlation-ID", "6f1c2a8e-1b2c-4d3e-8f90-0a1b2c3d4e5f"}};
  sse_client s{n.port, o};
  ASSERT_EQ(s.status(), 200u);
  auto r = s.read_json();
  EXPECT_EQ(r.at("correlationId").as_string(), "6f1c2a8e-1b2c-4d3e-8f90-0a1b2c3d4e5f");
  EXPECT_EQ(total_connections(r.at("data").as_object()), 1);
  {
    ws_client b{n.port};
    b.expect_connected();
    auto events = s.read_through([](const json::object& r) {
      return r.at("data").as_object().at("totalConnections").as_int64() == 2;
    });
    EXPECT_FALSE(events.empty());
  }

  // b's close and d's snapshot may be handled on different I/O threads: d's first frame can
  // still count b, and the next one follows as b's close is seen.
  ws_client d{n.port, "/.cratis/queries/health"};
  std::int64_t total = -1;
  for (int i = 0; i < 5 && total != 1; ++i) {
    auto f = d.read_json();
    ASSERT_EQ(f.at("type").as_string(), "Data");
    total = total_connections(f.at("data").as_object().at("data").as_object());
  }
  EXPECT_EQ(total, 1);
}

TEST(HealthFeed, ThroughTheSseHub) {
  health_node n;
  ASSERT_TRUE(n.node);
  sse_client s{n.port};
  ASSERT_EQ(s.status(), 200u);
  auto id = s.expect_connected();
  auto res = sse_control_post(
      n.port, "subscribe",
      control_body(id, "h", 1, subscription_request("QueryHealth.ObserveHealth", {})));
  ASSERT_EQ(res.status, 200u);
  auto events = s.read_through([](const json::object& f) { return is_result_for(f, "h"); });
  const auto& h = health_of(events.back());
  ASSERT_EQ(total_connections(h), 1);
  const auto& conn = h.at("connections").as_array().at(0).as_object();
  EXPECT_EQ(conn.at("protocol").as_string(), "SSE");
  EXPECT_EQ(conn.at("connectionId").as_string(), id);
}

TEST(HealthFeed, ListedByIntrospectionAndMethodsChecked) {
  health_node n;
  ASSERT_TRUE(n.node);
  auto list = http(n.port, "GET", "/.cratis/queries").json().as_array();
  bool found = false;
  for (const auto& q : list) {
    if (q.as_object().at("fullyQualifiedName").as_string() == "QueryHealth.ObserveHealth") {
      found = true;
      EXPECT_EQ(q.as_object().at("route").as_string(), "/.cratis/queries/health");
    }
  }
  EXPECT_TRUE(found);
  auto post = http(n.port, "POST", "/.cratis/queries/health", "{}");
  EXPECT_EQ(post.status, 405u);
  EXPECT_EQ(post.headers["allow"], "GET, HEAD");
}

TEST(WebSocketUpgrade, AnswerCarriesTheCorrelationId) {
  health_node n;
  ASSERT_TRUE(n.node);
  const std::string inbound = "0b4f2e1a-7c3d-4e5f-9a8b-1c2d3e4f5a6b";
  auto handshake = [&](const header_list& extra) {
    raw_connection c{n.port};
    header_list h{{"Connection", "Upgrade"},
                  {"Upgrade", "websocket"},
                  {"Sec-WebSocket-Version", "13"},
                  {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}};
    h.insert(h.end(), extra.begin(), extra.end());
    c.send_all(build_request(n.port, "GET", "/.cratis/queries/ws", h, ""));
    return read_response(c, true);
  };
  auto reused = handshake({{"X-Correlation-ID", inbound}});
  EXPECT_EQ(reused.status, 101u);
  EXPECT_EQ(reused.header("x-correlation-id"), inbound);
  auto minted = handshake({});
  EXPECT_EQ(minted.status, 101u);
  EXPECT_TRUE(looks_like_uuid(minted.header("x-correlation-id")));
}

}  // namespace
}  // namespace weir::test

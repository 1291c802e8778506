// The admin page (/ui): its files with their headers, the stats stream (/ui/events) and its
// document on one node and across a real three-node cluster, the stream's end on shutdown, its
// authorization (auth.adminRole), and the page itself in headless Chromium (tests/node/
// admin_ui.mjs, puppeteer-core) following a cluster while the test writes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <boost/json.hpp>

#include "cluster_support.hpp"
#include "process_support.hpp"
#include "sse_test_support.hpp"
#include "test_support.hpp"
#include "tests/support/token_signer.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

constexpr const char* events_target = "/ui/events";

sse_client::options events_request(header_list headers = {}) {
  sse_client::options o;
  o.target = events_target;
  o.headers = std::move(headers);
  return o;
}

/// The next `event: stats` document of an admin stream (fails on anything else but the
/// stream's `retry:` field).
json::object next_stats(sse_client& c, std::chrono::milliseconds timeout = 5s) {
  constexpr std::string_view head = "event: stats\ndata: ";
  for (;;) {
    auto ev = c.read_event(timeout);
    if (!ev) {
      ADD_FAILURE() << "no stats event within " << timeout.count() << " ms";
      return {};
    }
    if (ev->starts_with("retry: ")) {
      continue;
    }
    if (!ev->starts_with(head)) {
      ADD_FAILURE() << "not a stats event: " << *ev;
      return {};
    }
    return json::parse(ev->substr(head.size())).as_object();
  }
}

/// Reads stats documents until `pred` holds for one; returns it (an empty object on timeout).
json::object stats_until(sse_client& c, const std::function<bool(const json::object&)>& pred,
                         std::chrono::milliseconds timeout = 10s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  json::object last;
  while (std::chrono::steady_clock::now() < deadline) {
    last = next_stats(c);
    if (last.empty() || pred(last)) {
      return last;
    }
  }
  ADD_FAILURE() << "no matching stats document; the last: " << json::serialize(last);
  return {};
}

const json::object* member_of(const json::object& doc, const std::string& id) {
  for (const auto& m : doc.at("members").as_array()) {
    if (m.as_object().at("id").as_string() == id) {
      return &m.as_object();
    }
  }
  return nullptr;
}

std::uint64_t figure(const json::object& m, std::string_view key) {
  const auto& v = m.at(key);
  return v.is_null() ? 0 : v.to_number<std::uint64_t>();
}

/// The document's shape as docs/operations.md#admin-page gives it.
void expect_shape(const json::object& doc) {
  ASSERT_TRUE(doc.at("node").is_string());
  ASSERT_TRUE(doc.at("at").is_int64());
  EXPECT_GT(doc.at("at").as_int64(), 1'700'000'000'000);  // Unix ms
  ASSERT_TRUE(doc.at("slowest").is_array());
  for (const auto& m : doc.at("members").as_array()) {
    const auto& o = m.as_object();
    EXPECT_TRUE(o.at("id").is_string());
    EXPECT_TRUE(o.at("state").is_string());
    EXPECT_TRUE(o.at("draining").is_bool());
    EXPECT_TRUE(o.at("self").is_bool());
    for (const auto* k :
         {"units", "queryKeys", "connections", "subscriptions", "writesTotal", "framesTotal"}) {
      ASSERT_TRUE(o.contains(k)) << k;
      EXPECT_TRUE(o.at(k).is_number() || o.at(k).is_null()) << k;
    }
  }
}

TEST(AdminUi, ThePageAndItsFilesWithTheirHeaders) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  auto page = http(port, "GET", "/ui");
  ASSERT_EQ(page.status, 200u) << page.body;
  EXPECT_EQ(page.headers["content-type"], "text/html; charset=utf-8");
  EXPECT_EQ(page.headers["cache-control"], "no-cache");
  EXPECT_EQ(page.headers["x-content-type-options"], "nosniff");
  auto csp = page.headers["content-security-policy"];
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
  auto etag = page.headers["etag"];
  ASSERT_GE(etag.size(), 3u);
  EXPECT_EQ(etag.front(), '"');
  EXPECT_NE(page.body.find("<script src=\"/ui/app.js\""), std::string::npos);
  // Nothing from elsewhere: no CDN, no external font.
  EXPECT_EQ(page.body.find("http://"), std::string::npos);
  EXPECT_EQ(page.body.find("https://"), std::string::npos);

  auto slash = http(port, "GET", "/ui/");
  EXPECT_EQ(slash.status, 200u);
  EXPECT_EQ(slash.body, page.body);

  auto js = http(port, "GET", "/ui/app.js");
  EXPECT_EQ(js.status, 200u);
  EXPECT_EQ(js.headers["content-type"], "text/javascript; charset=utf-8");
  EXPECT_NE(js.body.find("new EventSource(\"/ui/events\")"), std::string::npos);
  auto css = http(port, "GET", "/ui/style.css");
  EXPECT_EQ(css.status, 200u);
  EXPECT_EQ(css.headers["content-type"], "text/css; charset=utf-8");
  EXPECT_EQ(css.body.find("@import"), std::string::npos);
  EXPECT_NE(css.headers["etag"], etag) << "each file has its own ETag";
  auto icon = http(port, "GET", "/ui/favicon.svg");
  EXPECT_EQ(icon.status, 200u);
  EXPECT_EQ(icon.headers["content-type"], "image/svg+xml");

  // Revalidation: the same ETag answers 304 without the bytes.
  auto again = http(port, "GET", "/ui", "", {{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304u);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(again.headers["etag"], etag);
  EXPECT_EQ(http(port, "GET", "/ui", "", {{"If-None-Match", "\"other\""}}).status, 200u);

  auto head = http(port, "HEAD", "/ui/app.js");
  EXPECT_EQ(head.status, 200u);
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(head.headers["content-length"], std::to_string(js.body.size()));

  auto missing = http(port, "GET", "/ui/nothing.js");
  EXPECT_EQ(missing.status, 404u);
  EXPECT_EQ(missing.json().at("error").at("code").as_string(), "route.not_found");
  auto post = http(port, "POST", "/ui", "{}");
  EXPECT_EQ(post.status, 405u);
  EXPECT_EQ(post.json().at("error").at("code").as_string(), "method.not_allowed");
  EXPECT_EQ(post.headers["allow"], "GET, HEAD");
}

TEST(AdminUi, EventsSendStatsAtOnceThenEverySecond) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  sse_client c{port, events_request()};
  ASSERT_EQ(c.status(), 200u) << c.response().body;
  EXPECT_EQ(c.header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_EQ(c.header("cache-control"), "no-cache");
  auto opened = std::chrono::steady_clock::now();
  auto first = next_stats(c, 2s);
  EXPECT_LT(std::chrono::steady_clock::now() - opened, 900ms) << "the first document is at once";
  expect_shape(first);
  EXPECT_EQ(first.at("node").as_string(), "");
  ASSERT_EQ(first.at("members").as_array().size(), 1u);
  const auto& self = first.at("members").as_array()[0].as_object();
  EXPECT_TRUE(self.at("self").as_bool());
  EXPECT_EQ(self.at("state").as_string(), "up");
  EXPECT_FALSE(self.at("draining").as_bool());
  EXPECT_FALSE(self.contains("owner")) << "owner is for elastic membership only";
  EXPECT_EQ(figure(self, "writesTotal"), 0u);
  EXPECT_TRUE(first.at("slowest").as_array().empty());

  // A write and a subscription show in the following documents, a second apart.
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client hub{port};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", "o1"}}, 1, "full");
  hub.read_json();
  next_stats(c, 3s);
  auto t1 = std::chrono::steady_clock::now();
  auto third = next_stats(c, 3s);
  auto t2 = std::chrono::steady_clock::now();
  // About a second apart; wide bounds, as the machine running the tests may be busy (the ticks
  // keep a fixed rate, so one that came late is followed by one that comes early).
  EXPECT_GT(t2 - t1, 300ms);
  EXPECT_LT(t2 - t1, 2500ms);
  const auto& m = third.at("members").as_array()[0].as_object();
  EXPECT_EQ(figure(m, "writesTotal"), 1u);
  EXPECT_EQ(figure(m, "connections"), 1u);
  EXPECT_EQ(figure(m, "subscriptions"), 1u);
  EXPECT_GE(figure(m, "units"), 1u);
  EXPECT_GE(figure(m, "queryKeys"), 1u);
  // Connected, the snapshot, and the events stream's own documents are not hub frames; the
  // hub's two are counted, as /metrics counts them.
  EXPECT_GE(figure(m, "framesTotal"), 2u);
  EXPECT_GT(third.at("at").as_int64(), first.at("at").as_int64());
}

TEST(AdminUi, AClientThatStopsReadingIsListedAmongTheSlowestConsumers) {
  temp_dir dir;
  // Bounds high enough that the backlog stays queued instead of closing the connection.
  auto node = start_node(dir.path(),
                         "query: { maxObservableOutboundFrames: 10000, "
                         "maxObservableOutboundFrameBytes: 1048576, "
                         "maxOutboundQueueBytes: 268435456 }");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "r0", R"({"n":0})");
  const std::string correlation = "3b1f6c2e-9d4a-4e8b-a7c1-5f2e8d9b0a61";
  ws_client slow{port, "/.cratis/queries/ws", {{"X-Correlation-ID", correlation}}};
  slow.expect_connected();
  slow.subscribe("q", "T.Items.All", {{"obj", "o1"}}, 1, "delta");
  slow.read_json();
  // It reads nothing more: 120 writes of 100 KB each are far more than the socket buffers hold.
  const std::string blob(100 * 1024, 'x');
  for (int i = 1; i <= 120; ++i) {
    put_record(port, "t", "o1", "items", "r" + std::to_string(i),
               R"({"n":)" + std::to_string(i) + R"(,"blob":")" + blob + "\"}");
  }
  sse_client c{port, events_request()};
  auto doc =
      stats_until(c, [](const json::object& d) { return !d.at("slowest").as_array().empty(); });
  ASSERT_FALSE(doc.empty());
  const auto& row = doc.at("slowest").as_array()[0].as_object();
  EXPECT_EQ(row.at("transport").as_string(), "websocket");
  EXPECT_GT(row.at("queuedBytes").to_number<std::uint64_t>(), 1'000'000u);
  EXPECT_GE(row.at("framesSent").to_number<std::uint64_t>(), 2u);
  EXPECT_NE(std::string_view{row.at("connection").as_string()}.find(correlation),
            std::string_view::npos)
      << json::serialize(row);
  EXPECT_EQ(row.at("member").as_string(), "");
  // /metrics sums the same backlog.
  auto m = http(port, "GET", "/metrics");
  auto at = m.body.find("\nweir_outbound_queued_bytes ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(std::stoull(m.body.substr(at + 28)), 1'000'000u);
}

TEST(AdminUi, TheStreamEndsWithClosedWhenTheNodeDrains) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  sse_client c{node->http_port(), events_request()};
  ASSERT_EQ(c.status(), 200u);
  next_stats(c);
  auto started = std::chrono::steady_clock::now();
  node->stop();  // drains: the stream must not hold it up
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  for (;;) {
    auto ev = c.read_event(3s);
    ASSERT_TRUE(ev) << "the stream ended without `closed`";
    if (ev->starts_with("event: stats")) {
      continue;  // one may have been on its way
    }
    EXPECT_EQ(*ev, "event: closed\ndata: {\"reason\":\"server_shutdown\"}");
    break;
  }
  EXPECT_TRUE(c.wait_end(3s));
  EXPECT_TRUE(c.saw_last_chunk());
}

/// A node with auth.jwt (HS256, cookie `session`), default auth.adminRole.
struct admin_auth_node {
  /// `jwt_extra`: more keys of auth.jwt, each a line indented by four spaces.
  explicit admin_auth_node(const std::string& jwt_extra = "") {
    node =
        start_node(dir.path(), "auth:\n  jwt:\n    secret: \"" + signer.secret() +
                                   "\"\n    cookie: session\n    rolesClaim: groups\n" + jwt_extra);
    if (node) {
      port = node->http_port();
    }
  }
  std::string token(const std::string& sub, json::array groups) {
    return signer.sign(
        {{"sub", sub}, {"exp", token_signer::now() + 600}, {"groups", std::move(groups)}});
  }
  token_signer signer{token_signer::alg::hs256};
  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

std::string code_of(const raw_response& r) {
  return std::string{json::parse(r.body).at("error").at("code").as_string()};
}

TEST(AdminUiAuth, TheDataNeedsTheAdminRoleThePageDoesNot) {
  admin_auth_node n;
  ASSERT_TRUE(n.node);
  // The page holds no data: anyone may load it.
  EXPECT_EQ(http(n.port, "GET", "/ui").status, 200u);

  sse_client none{n.port, events_request()};
  EXPECT_EQ(none.status(), 401u);
  EXPECT_EQ(code_of(none.response()), "auth.required");
  EXPECT_EQ(none.header("www-authenticate"), "Bearer realm=\"weir\"");
  EXPECT_NE(none.response().body.find("auth.adminRole"), std::string::npos);

  sse_client forged{n.port, events_request({{"Authorization", "Bearer not.a.token"}})};
  EXPECT_EQ(forged.status(), 401u);
  EXPECT_TRUE(code_of(forged.response()).starts_with("auth."));

  auto reader = n.token("ada", {"readers"});
  sse_client no_role{n.port, events_request({{"Authorization", "Bearer " + reader}})};
  EXPECT_EQ(no_role.status(), 403u);
  EXPECT_EQ(code_of(no_role.response()), "auth.forbidden");
  EXPECT_EQ(json::parse(no_role.response().body).at("error").at("details").at("roles"),
            json::array{"admin"});

  // HEAD answers the same status, so the page can tell its reader why the stream failed.
  EXPECT_EQ(http(n.port, "HEAD", events_target).status, 401u);
  EXPECT_EQ(http(n.port, "HEAD", events_target, "", {{"Cookie", "session=" + reader}}).status,
            403u);

  auto admin = n.token("grace", {"readers", "admin"});
  sse_client bearer{n.port, events_request({{"Authorization", "Bearer " + admin}})};
  ASSERT_EQ(bearer.status(), 200u) << bearer.response().body;
  expect_shape(next_stats(bearer));
  // The browser's way: EventSource sends the cookie.
  sse_client cookie{n.port, events_request({{"Cookie", "session=" + admin}})};
  ASSERT_EQ(cookie.status(), 200u) << cookie.response().body;
  expect_shape(next_stats(cookie));
}

TEST(AdminUiAuth, TheStreamEndsWhenTheAdminsTokenExpires) {
  admin_auth_node n{"    clockSkewSeconds: 0\n"};  // else a token is good for 30 s more
  ASSERT_TRUE(n.node);
  // A token that expires in two seconds: the stream serves until then, then says why it ends.
  auto token = n.signer.sign(
      {{"sub", "ops"}, {"exp", token_signer::now() + 2}, {"groups", json::array{"admin"}}});
  sse_client c{n.port, events_request({{"Authorization", "Bearer " + token}})};
  ASSERT_EQ(c.status(), 200u);
  next_stats(c);
  auto opened = std::chrono::steady_clock::now();
  for (;;) {
    auto ev = c.read_event(5s);
    ASSERT_TRUE(ev) << "the stream ended without `closed`";
    if (ev->starts_with("event: stats") || ev->starts_with("retry:")) {
      continue;
    }
    EXPECT_EQ(*ev, "event: closed\ndata: {\"reason\":\"deauthorized\"}");
    break;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - opened, 4s);
  EXPECT_TRUE(c.wait_end(3s));
}

TEST(AdminUiAuth, AnotherRoleByConfiguration) {
  token_signer signer{token_signer::alg::hs256};
  temp_dir dir;
  auto node = start_node(
      dir.path(), "auth:\n  jwt:\n    secret: \"" + signer.secret() + "\"\n  adminRole: ops\n");
  ASSERT_TRUE(node);
  auto with_roles = [&](json::array roles) {
    return header_list{
        {"Authorization", "Bearer " + signer.sign({{"sub", "ada"},
                                                   {"exp", token_signer::now() + 600},
                                                   {"roles", std::move(roles)}})}};
  };
  sse_client admin{node->http_port(), events_request(with_roles({"admin"}))};
  EXPECT_EQ(admin.status(), 403u);
  sse_client ops{node->http_port(), events_request(with_roles({"ops"}))};
  EXPECT_EQ(ops.status(), 200u);
}

TEST(AdminUiCluster, EveryMemberWithTheFiguresOfItsLastHeartbeat) {
  cluster3 cl;
  sse_client c{cl.port(0), events_request()};
  ASSERT_EQ(c.status(), 200u);
  auto first = next_stats(c);
  expect_shape(first);
  EXPECT_EQ(first.at("node").as_string(), "a");
  ASSERT_EQ(first.at("members").as_array().size(), 3u);
  for (int i = 0; i < cluster3::n; ++i) {
    const auto* m = member_of(first, cl.id(i));
    ASSERT_TRUE(m) << cl.id(i);
    EXPECT_EQ(m->at("state").as_string(), "up");
    EXPECT_EQ(m->at("self").as_bool(), i == 0);
    EXPECT_FALSE(m->contains("owner")) << "a static member list has no owners on record";
  }

  // A write answered by b, on a unit b owns, and a subscription held on c: a sees both in b's
  // and c's heartbeat answers.
  auto obj = cl.object_owned_by(1, "adm");
  put_record(cl.port(1), "t", obj, "items", "a", R"({"n":1})");
  ws_client hub{cl.port(2)};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", obj}}, 1, "full");
  hub.read_json();
  auto doc = stats_until(c, [&](const json::object& d) {
    const auto* b = member_of(d, "b");
    const auto* cc = member_of(d, "c");
    return b && cc && figure(*b, "writesTotal") >= 1 && figure(*b, "units") >= 1 &&
           figure(*cc, "subscriptions") == 1 && figure(*cc, "connections") == 1 &&
           figure(*cc, "queryKeys") >= 1;
  });
  ASSERT_FALSE(doc.empty());
  EXPECT_EQ(figure(*member_of(doc, "a"), "writesTotal"), 0u);

  // A member that stops answering stays on the page with its last figures and its state.
  cl.kill(1);
  doc = stats_until(c, [](const json::object& d) {
    const auto* b = member_of(d, "b");
    return b && b->at("state").as_string() == "down";
  });
  ASSERT_FALSE(doc.empty());
  EXPECT_GE(figure(*member_of(doc, "b"), "writesTotal"), 1u);
}

/// Writes records to every member in turn until `stop`, a few a second: what moves the page's
/// figures and fills its charts.
class background_writer {
 public:
  explicit background_writer(cluster3& cl)
      : thread_([this, &cl] {
          for (int k = 0; !stop_; ++k) {
            put_record(cl.port(k % cluster3::n), "t", "ui" + std::to_string(k % 7), "items",
                       "r" + std::to_string(k), "{\"n\":" + std::to_string(k) + "}");
            std::this_thread::sleep_for(std::chrono::milliseconds{120 + 60 * (k % 5)});
          }
        }) {}
  ~background_writer() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(AdminUiBrowser, ThreeMembersAndAMovingCount) {
  ASSERT_STRNE(WEIR_NODE, "") << "Node.js is needed for this test: scripts/setup installs it";
  ASSERT_STRNE(WEIR_CHROMIUM, "") << "chromium is needed for this test: scripts/setup installs it";
  std::filesystem::create_directories(WEIR_TEST_OUTPUT_DIR);
  const std::string png = std::string{WEIR_TEST_OUTPUT_DIR} + "/admin-ui.png";
  std::filesystem::remove(png);

  cluster3 cl;
  // Something to show besides writes: a hub connection with a subscription on b.
  ws_client hub{cl.port(1)};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", "ui0"}}, 1, "full");
  hub.read_json();

  auto url = "http://127.0.0.1:" + std::to_string(cl.port(0)) + "/ui";
  child_process browser{{WEIR_NODE, WEIR_ADMIN_UI_SCRIPT, url, png, WEIR_CHROMIUM, "3"}};
  auto fail = [&] { return "admin_ui.mjs stderr:\n" + browser.stderr_text(); };
  auto step = [](std::string_view name) {
    return [name](const std::string& line) {
      boost::system::error_code ec;
      auto v = json::parse(line, ec);
      return !ec && v.is_object() && v.as_object().contains("step") &&
             v.as_object().at("step").as_string() == name;
    };
  };
  auto ready = browser.wait_line(step("ready"), 60s);
  ASSERT_TRUE(ready) << fail();
  auto r = json::parse(*ready).as_object();
  EXPECT_EQ(r.at("members").to_number<int>(), 3) << *ready;
  auto before = r.at("writes").to_number<std::uint64_t>();

  background_writer writer{cl};
  auto moved = browser.wait_line(step("moved"), 30s);
  ASSERT_TRUE(moved) << fail();
  auto m = json::parse(*moved).as_object();
  EXPECT_EQ(m.at("from").to_number<std::uint64_t>(), before);
  EXPECT_GT(m.at("to").to_number<std::uint64_t>(), before);
  auto done = browser.wait_line(step("done"), 30s);
  ASSERT_TRUE(done) << fail();

  std::ifstream in{png, std::ios::binary};
  std::string magic(8, '\0');
  in.read(magic.data(), 8);
  EXPECT_EQ(magic, std::string("\x89PNG\r\n\x1a\n", 8)) << png << " is not a PNG";
  EXPECT_GT(std::filesystem::file_size(png), 10'000u);
  std::printf("admin page screenshot: %s\n", png.c_str());
}

}  // namespace
}  // namespace weir::test

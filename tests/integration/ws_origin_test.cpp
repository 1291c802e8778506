// Origin checks beyond the SSE hub: cross-site pages are refused before a WebSocket upgrade (the
// hub, the health feed, the direct routes) and on writes and windowed POSTs (a "simple" POST
// would carry the user's cookie without a preflight); same-origin honours a trusted proxy's
// X-Forwarded-Proto.
#include <gtest/gtest.h>

#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

header_list upgrade_from(const std::string& origin) {
  return {{"Connection", "Upgrade"},
          {"Upgrade", "websocket"},
          {"Sec-WebSocket-Version", "13"},
          {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
          {"Origin", origin}};
}

TEST(WsOrigin, ACrossSiteUpgradeIsRefusedEverywhere) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  for (std::string target :
       {"/.cratis/queries/ws", "/.cratis/queries/health", "/api/t/items?obj=o1"}) {
    auto r = http_exact(port, "GET", target, "", upgrade_from("https://evil.example"));
    EXPECT_EQ(r.status, 403u) << target;
    EXPECT_NE(r.body.find("request.origin_forbidden"), std::string::npos) << r.body;
  }
  // The page's own origin, and clients without an Origin, are served.
  ws_client same{
      port, "/.cratis/queries/ws", {{"Origin", "http://127.0.0.1:" + std::to_string(port)}}};
  same.expect_connected();
  ws_client tool{port};
  tool.expect_connected();
}

TEST(WsOrigin, CrossSiteWritesAndWindowedPostsAreRefused) {
  temp_dir dir;
  auto node = start_node(dir.path(), "query: { allowedOrigins: [\"https://app.example\"] }\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  const std::string batch = "/v1/spaces/t/objects/o1/datasets/items/records";
  const std::string body = R"({"upsert":[{"id":"r1","n":1}]})";
  auto evil = http(port, "POST", batch, body,
                   {{"Content-Type", "text/plain"}, {"Origin", "https://evil.example"}});
  EXPECT_EQ(evil.status, 403u);
  EXPECT_NE(evil.body.find("request.origin_forbidden"), std::string::npos);
  auto snapshot = http(port, "POST", "/v1/spaces/t/query", R"({"objectId":"o1","dataset":"items"})",
                       {{"Content-Type", "application/json"}, {"Origin", "https://evil.example"}});
  EXPECT_EQ(snapshot.status, 403u);
  // Nothing was written; the trusted page and non-browser clients are served.
  EXPECT_EQ(http(port, "GET", "/api/t/items?obj=o1").json().at("data").as_array().size(), 0u);
  EXPECT_EQ(http(port, "POST", batch, body, {{"Origin", "https://app.example"}}).status, 200u);
  EXPECT_EQ(http(port, "POST", batch, body).status, 200u);
}

TEST(WsOrigin, AllowedOriginsAreServed) {
  temp_dir dir;
  auto node = start_node(dir.path(), "query: { allowedOrigins: [\"https://app.example\"] }\n");
  ASSERT_TRUE(node);
  ws_client app{node->http_port(), "/.cratis/queries/ws", {{"Origin", "https://app.example"}}};
  app.expect_connected();
}

TEST(WsOrigin, ATrustedProxysForwardedProtoDecidesTheScheme) {
  temp_dir dir;
  auto untrusted = start_node(dir.path());
  ASSERT_TRUE(untrusted);
  auto port = untrusted->http_port();
  auto https_page = "https://127.0.0.1:" + std::to_string(port);
  auto headers = upgrade_from(https_page);
  headers.emplace_back("X-Forwarded-Proto", "https");
  EXPECT_EQ(http_exact(port, "GET", "/.cratis/queries/ws", "", headers).status, 403u);
  untrusted.reset();

  temp_dir dir2;
  auto behind_proxy = start_node(dir2.path(), "http: { trustedProxies: [\"127.0.0.1\"] }\n");
  ASSERT_TRUE(behind_proxy);
  auto port2 = behind_proxy->http_port();
  ws_client page{
      port2,
      "/.cratis/queries/ws",
      {{"Origin", "https://127.0.0.1:" + std::to_string(port2)}, {"X-Forwarded-Proto", "https"}}};
  page.expect_connected();
}

}  // namespace
}  // namespace weir::test

// Tests for the HTTP gateway's route table (gateway/http_routes.cpp): rows that declare what
// their checks need, the order that makes the catch-all rows last, and every literal path the
// table serves documented in docs/openapi.yaml.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gateway/http_route.hpp"
#include "gateway/http_session.hpp"

namespace weir::gateway {
namespace {

bool literal(std::string_view pattern) {
  return pattern.find('{') == std::string_view::npos && pattern.find("…") == std::string_view::npos;
}

TEST(HttpRoutes, EveryRowIsComplete) {
  for (const auto& r : http_session::routes()) {
    SCOPED_TRACE(std::string{r.pattern});
    EXPECT_NE(r.match, nullptr);
    EXPECT_NE(r.handle, nullptr);
    EXPECT_FALSE(r.pattern.empty());
    EXPECT_NE(r.methods, 0);
    if (r.otherwise == other_methods::not_allowed) {
      // A 405 names what is allowed, and says so in words in the envelope form.
      EXPECT_FALSE(r.allow.empty());
      if (r.form == answer_form::envelope) {
        EXPECT_FALSE(r.not_allowed.empty());
      }
    }
    if (r.space != space_rule::none) {
      // A space rule is checked after the credential (an unknown caller is refused as such).
      EXPECT_EQ(r.credentials, credential_rule::envelope);
    }
    if (r.transport != route_transport::http) {
      // Every WebSocket upgrade and every SSE hub request may carry a user's cookie across
      // sites, except a HEAD probe, which opens nothing.
      if (r.methods != m_head) {
        EXPECT_EQ(r.origin, origin_rule::trusted);
      }
    }
  }
}

// The last row of each transport takes every path, so a request always finds a route: the
// write API (its matcher answers 404 route.not_found) and the WebSocket 404.
TEST(HttpRoutes, EachTransportEndsWithACatchAll) {
  auto routes = http_session::routes();
  const http_route* last_http = nullptr;
  const http_route* last_ws = nullptr;
  for (const auto& r : routes) {
    if (r.transport != route_transport::websocket) {
      last_http = &r;
    }
    if (r.transport != route_transport::http) {
      last_ws = &r;
    }
  }
  ASSERT_NE(last_http, nullptr);
  ASSERT_NE(last_ws, nullptr);
  EXPECT_EQ(last_http, &routes.back());
  EXPECT_EQ(last_http->methods, m_any);
  EXPECT_EQ(last_http->otherwise, other_methods::next_route);
  EXPECT_EQ(last_ws->pattern, "{any other path}");
  EXPECT_EQ(last_ws->methods, m_any);
}

// Only the routes whose protocol orders other checks before 413 answer it themselves.
TEST(HttpRoutes, OversizedBodiesAnsweredInOrderOnlyWhereTheProtocolSaysSo) {
  std::set<std::string> in_order, if_taken;
  for (const auto& r : http_session::routes()) {
    if (r.body == body_rule::in_order) {
      in_order.insert(std::string{r.pattern});
    }
    if (r.body == body_rule::in_order_if_taken) {
      if_taken.insert(std::string{r.pattern});
    }
  }
  EXPECT_EQ(in_order, (std::set<std::string>{"/.cratis/queries/sse/{subscribe|unsubscribe}"}));
  EXPECT_EQ(if_taken, (std::set<std::string>{"/v1/spaces/{space}/…/{query|subscribe}"}));
}

TEST(HttpRoutes, MethodBits) {
  EXPECT_EQ(method_bit("GET"), m_get);
  EXPECT_EQ(method_bit("HEAD"), m_head);
  EXPECT_EQ(method_bit("POST"), m_post);
  EXPECT_EQ(method_bit("PUT"), m_put);
  EXPECT_EQ(method_bit("PATCH"), m_patch);
  EXPECT_EQ(method_bit("DELETE"), m_delete);
  EXPECT_EQ(method_bit("OPTIONS"), 0);
  EXPECT_EQ(method_bit("get"), 0);  // methods are case-sensitive (RFC 9110 §9.1)
}

// Every literal path the table serves is a path of the OpenAPI document.
TEST(HttpRoutes, LiteralPathsAreInTheOpenApiDocument) {
  std::ifstream in(std::string{WEIR_DOCS_DIR} + "/openapi.yaml");
  ASSERT_TRUE(in) << "docs/openapi.yaml";
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = text.str();
  int literals = 0;
  for (const auto& r : http_session::routes()) {
    if (!literal(r.pattern)) {
      continue;
    }
    ++literals;
    EXPECT_NE(doc.find("\n  " + std::string{r.pattern} + ":\n"), std::string::npos)
        << r.pattern << " is served but not in docs/openapi.yaml";
  }
  EXPECT_GE(literals, 10);
}

}  // namespace
}  // namespace weir::gateway

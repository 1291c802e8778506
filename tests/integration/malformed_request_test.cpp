// Requests that are not HTTP/1.1 (a control character in a header value, a bad method, a header
// name with a space) are answered 400 `request.malformed` in the error envelope and the
// connection is closed — not dropped without a word.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

using namespace std::chrono_literals;

TEST(MalformedRequests, AreAnsweredInTheEnvelopeAndTheConnectionCloses) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  for (std::string req :
       {std::string{"PUT /v1/spaces/t/objects/o/datasets/items/records/x HTTP/1.1\r\nHost: a\r\n"
                    "Idempotency-Key: a\x7f"
                    "b\r\nContent-Length: 2\r\n\r\n{}"},
        std::string{"G(T / HTTP/1.1\r\nHost: a\r\n\r\n"},
        std::string{"GET /livez HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n"}}) {
    raw_connection c{node->http_port()};
    ASSERT_TRUE(c.connected());
    c.send_all(req);
    auto r = read_response(c, false, 5s);
    EXPECT_EQ(r.status, 400u) << req;
    EXPECT_NE(r.body.find("\"request.malformed\""), std::string::npos) << r.body;
    EXPECT_EQ(r.header("connection"), "close");
  }
  EXPECT_EQ(http(node->http_port(), "GET", "/readyz").status, 200u);
}

// Methods no route serves (OPTIONS, TRACE, an extension method, a lowercase one) are answered
// like any other method a path does not take: 405 with Allow where the path exists, else 404
// route.not_found, on a connection that stays usable. Never dropped without an answer.
TEST(MalformedRequests, MethodsNoRouteServesAreAnswered) {
  temp_dir dir;
  auto node = start_node(dir.path(), "http: { maxBodyBytes: 1024 }\n");
  ASSERT_TRUE(node);
  struct expected {
    std::string target;
    unsigned status;
    std::string code, allow;
  };
  const std::vector<expected> cases{
      {"/v1/spaces/t/objects/o/datasets/items/records/r", 405, "method.not_allowed",
       "PUT, PATCH, DELETE"},
      {"/v1/spaces/t/objects/o/datasets/items/records", 405, "method.not_allowed", "POST"},
      {"/v1/spaces/t/objects/o", 405, "method.not_allowed", "PUT, PATCH, DELETE"},
      {"/v1/spaces/t/query", 405, "method.not_allowed", "POST"},
      {"/v1/spaces/t/batch", 405, "method.not_allowed", "POST"},
      {"/v1/spaces/t/objects/o/state", 405, "method.not_allowed", "GET, HEAD"},
      {"/livez", 404, "route.not_found", ""},
      {"/nowhere", 404, "route.not_found", ""},
  };
  for (const std::string method : {"OPTIONS", "TRACE", "PROPFIND", "get"}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(method + " " + c.target);
      raw_connection conn{node->http_port()};
      ASSERT_TRUE(conn.connected());
      conn.send_all(method + " " + c.target + " HTTP/1.1\r\nHost: a\r\n\r\n");
      auto r = read_response(conn, false, 5s);
      EXPECT_EQ(r.status, c.status) << r.body;
      EXPECT_NE(r.body.find("\"" + c.code + "\""), std::string::npos) << r.body;
      EXPECT_EQ(r.header("allow"), c.allow);
      // The connection goes on.
      conn.send_all("GET /livez HTTP/1.1\r\nHost: a\r\n\r\n");
      EXPECT_EQ(read_response(conn, false, 5s).status, 200u);
    }
  }
  // Another method on a windowed path with a body over http.maxBodyBytes: 413 at once (only a
  // POST's space is resolved before its body is refused).
  raw_connection conn{node->http_port()};
  ASSERT_TRUE(conn.connected());
  conn.send_all("PUT /v1/spaces/t/query HTTP/1.1\r\nHost: a\r\nContent-Length: 4096\r\n\r\n" +
                std::string(4096, 'x'));
  auto r = read_response(conn, false, 5s);
  EXPECT_EQ(r.status, 413u) << r.body;
  EXPECT_NE(r.body.find("\"request.too_large\""), std::string::npos) << r.body;
}

}  // namespace
}  // namespace weir::test

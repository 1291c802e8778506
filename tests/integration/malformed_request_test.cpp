// Requests that are not HTTP/1.1 (a control character in a header value, a bad method, a header
// name with a space) are answered 400 `request.malformed` in the error envelope and the
// connection is closed — not dropped without a word.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace weir::test

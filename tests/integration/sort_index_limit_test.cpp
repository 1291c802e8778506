// query.maxSortIndexesPerDataset: every distinct sort of a dataset's windows holds an index over
// all its records, so a caller choosing sorts could make a unit build and hold one per request.
// Past the bound a window on one more sort is refused in its protocol's form — a windowed
// subscribe 503 `query.too_many_sorts`, an Arc hub Error frame, a paged snapshot GET's error —
// while windows on sorts in use keep opening, and an index no window reads makes room again.
#include <gtest/gtest.h>

#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>

#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

std::string window_on(const std::string& field) {
  return R"({"objectId":"c","dataset":"items","sort":[")" + field + R"("],"limit":2})";
}

struct limited_node {
  limited_node() : node(start_node(dir.path(), "query: { maxSortIndexesPerDataset: 2 }")) {
    port = node->http_port();
    for (int i = 0; i < 5; ++i) {
      auto id = "r" + std::to_string(i);
      put_record(port, "t", "c", "items", id,
                 R"({"a":)" + std::to_string(i) + R"(,"b":)" + std::to_string(10 - i) + R"(,"n":)" +
                     std::to_string(i % 3) + "}");
    }
  }
  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

TEST(SortIndexLimit, AWindowOnOneSortTooManyIsRefusedUntilAnotherSortsWindowsClose) {
  limited_node n;
  windowed_stream a{n.port, "t", "object", window_on("a")};
  ASSERT_EQ(a.status(), 200u) << a.client().response().body;
  a.open();
  windowed_stream b{n.port, "t", "object", window_on("b")};
  ASSERT_EQ(b.status(), 200u) << b.client().response().body;
  b.open();

  windowed_stream c{n.port, "t", "object", window_on("n")};
  ASSERT_EQ(c.status(), 503u) << c.client().response().body;
  auto err = c.error_body().as_object()["error"].as_object();
  EXPECT_EQ(err["code"], "query.too_many_sorts");
  EXPECT_EQ(err["details"].as_object()["limit"], 2);
  EXPECT_EQ(err["details"].as_object()["dataset"], "items");

  // A sort in use still opens (its index is shared), and the streams that hold one still flow.
  windowed_stream a2{n.port, "t", "object", window_on("a")};
  ASSERT_EQ(a2.status(), 200u) << a2.client().response().body;
  auto snap = a2.open();
  EXPECT_EQ(snap["records"].as_array().size(), 2u);
  put_record(n.port, "t", "c", "items", "r9", R"({"a":-1,"b":-1,"n":-1})");
  auto f = a.next();
  ASSERT_TRUE(f) << "the window on a stopped flowing";
  EXPECT_EQ(f->event, "changes") << f->raw;

  // Once b's window closes its index is unused: the next new sort takes its place.
  b.close();
  bool opened = false;
  for (int i = 0; i < 100 && !opened; ++i) {
    windowed_stream retry{n.port, "t", "object", window_on("n")};
    if (retry.status() == 200u) {
      retry.open();
      opened = true;
    } else {
      ASSERT_EQ(retry.status(), 503u) << retry.client().response().body;
      std::this_thread::sleep_for(20ms);
    }
  }
  EXPECT_TRUE(opened) << "the index of a closed sort never made room";
  EXPECT_EQ(http(n.port, "GET", "/readyz").status, 200u);
}

/// A plain socket on 127.0.0.1:`port` with a 5 s receive timeout; -1 if it did not connect.
int connect_plain(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(SortIndexLimit, ARefusedStreamsConnectionClosesEvenIfItsClientNeverDoes) {
  // The refusal comes from the unit, after the session began watching for its client's
  // hang-up: once the answer is written the server half-closes, and a client that never
  // closes its side must not keep the session (and its socket) alive past the linger.
  limited_node n;
  windowed_stream a{n.port, "t", "object", window_on("a")};
  ASSERT_EQ(a.status(), 200u);
  a.open();
  windowed_stream b{n.port, "t", "object", window_on("b")};
  ASSERT_EQ(b.status(), 200u);
  b.open();

  int fd = connect_plain(n.port);
  ASSERT_GE(fd, 0);
  const auto body = window_on("n");
  const auto req = "POST " + windowed_path("t", "object", true) +
                   " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  std::string answer;
  char buf[4096];
  for (;;) {
    auto got = ::recv(fd, buf, sizeof buf, 0);
    ASSERT_GE(got, 0) << "no end of the refusal within 5 s";
    if (got == 0) {
      break;  // the server's half-close
    }
    answer.append(buf, static_cast<std::size_t>(got));
  }
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 503")) << answer;
  EXPECT_NE(answer.find("query.too_many_sorts"), std::string::npos) << answer;

  // The client keeps its side open. While the server's socket lives it reads (and discards)
  // what arrives; once it is closed a byte sent draws a reset, and the next send fails.
  const auto t0 = std::chrono::steady_clock::now();
  bool closed = false;
  while (!closed && std::chrono::steady_clock::now() - t0 < 10s) {
    closed = ::send(fd, "x", 1, MSG_NOSIGNAL) < 0;
    std::this_thread::sleep_for(50ms);
  }
  ::close(fd);
  EXPECT_TRUE(closed) << "the refused connection was still open 10 s after its answer";
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(SortIndexLimit, AnArcPagedQueryOnOneSortTooManyGetsAnErrorFrame) {
  limited_node n;
  ws_client ws{n.port};
  ws.expect_connected();
  // T.Items.All sorts by n; sortBy prepends the client's field, so each field is its own sort.
  auto paged = [&](const std::string& qid, const std::string& field) {
    ws.subscribe(qid, "T.Items.All", {{"obj", "c"}}, 1, "full",
                 {{"page", 0}, {"pageSize", 2}, {"sortBy", field}});
    return ws.read_json();
  };
  EXPECT_EQ(paged("q1", "a")["type"], "QueryResult");
  EXPECT_EQ(paged("q2", "b")["type"], "QueryResult");
  auto m = paged("q3", "z");
  EXPECT_EQ(m["type"], "Error") << json::serialize(m);
  EXPECT_EQ(m["queryId"], "q3");
  EXPECT_EQ(m["payload"], "Observable query failed");

  // The same as snapshot GETs: a sort in use answers, one more sort gets the error envelope.
  auto r = http(n.port, "GET", "/api/t/items?obj=c&pageSize=2&page=0&sortBy=a");
  EXPECT_EQ(r.status, 200u) << r.body;
  auto refused = http(n.port, "GET", "/api/t/items?obj=c&pageSize=2&page=0&sortBy=z");
  EXPECT_EQ(refused.status, 503u) << refused.body;
  auto exceptions = refused.json().as_object()["exceptionMessages"].as_array();
  ASSERT_EQ(exceptions.size(), 1u) << refused.body;
  EXPECT_NE(std::string_view{exceptions[0].as_string()}.find("maxSortIndexesPerDataset"),
            std::string_view::npos)
      << refused.body;

  // The connection lives on: another page on a sort in use opens.
  ws.subscribe("q4", "T.Items.All", {{"obj", "c"}}, 1, "full",
               {{"page", 1}, {"pageSize", 2}, {"sortBy", "b"}});
  auto ok = ws.read_json();
  EXPECT_EQ(ok["type"], "QueryResult") << json::serialize(ok);
  EXPECT_EQ(http(n.port, "GET", "/readyz").status, 200u);
}

}  // namespace
}  // namespace weir::test

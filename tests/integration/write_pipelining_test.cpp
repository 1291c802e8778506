// HTTP/1.1 pipelining on the write API (RFC 9112 §9.3.2): requests sent back to back on one
// connection are answered in the order sent; writes to one unit are applied without waiting for
// each other's answers, so they share group commits; any other request (a read, a write to
// another unit) waits until the answers before it are written; a refused request in the middle,
// a half-close and a closing request keep every answer owed.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

using WritePipelining = single_node;

/// A distinct, valid correlation id per request, so answers can be matched to requests.
std::string correlation(int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012d", i);
  return buf;
}

std::string put(std::uint16_t port, const std::string& object, const std::string& id,
                const std::string& body, int n, const header_list& extra = {}) {
  header_list h{{"Content-Type", "application/json"}, {"X-Correlation-ID", correlation(n)}};
  h.insert(h.end(), extra.begin(), extra.end());
  return build_request(port, "PUT",
                       "/v1/spaces/t/objects/" + object + "/datasets/items/records/" + id, h, body);
}

/// A sample without labels on /metrics: weir_commit_batch_writes_count (group commits run),
/// weir_write_duration_seconds_count (writes answered, applied or refused).
double metric(std::uint16_t port, const std::string& name) {
  auto r = http(port, "GET", "/metrics", "");
  auto key = name + " ";
  auto at = r.body.find("\n" + key);
  EXPECT_NE(at, std::string::npos) << name << " in " << r.body;
  return at == std::string::npos ? -1 : std::stod(r.body.substr(at + 1 + key.size()));
}

double commit_groups(std::uint16_t port) {
  return metric(port, "weir_commit_batch_writes_count");
}

double writes_answered(std::uint16_t port) {
  return metric(port, "weir_write_duration_seconds_count");
}

json::array items(std::uint16_t port, const std::string& object) {
  auto r = http(port, "GET", "/api/t/items?obj=" + object, "");
  EXPECT_EQ(r.status, 200u) << r.body;
  return r.json().as_object().at("data").as_array();
}

TEST_F(WritePipelining, WritesToOneUnitAreAnsweredInOrderAndShareGroupCommits) {
  // Warm the unit (its first use loads it) so the pipeline measures only the writes.
  ASSERT_FALSE(put_record(port, "t", "p1", "items", "warm", R"({"n":-1})").empty());
  auto groups_before = commit_groups(port);
  constexpr int writes = 32;
  std::string burst;
  for (int i = 0; i < writes; ++i) {
    // Half to distinct records, half to one record: its last value must be the last one sent.
    auto id = i % 2 == 0 ? "r" + std::to_string(i) : std::string{"same"};
    burst += put(port, "p1", id, R"({"n":)" + std::to_string(i) + "}", i);
  }
  raw_connection c{port};
  ASSERT_TRUE(c.connected());
  c.send_all(burst);
  std::vector<std::string> versions;
  for (int i = 0; i < writes; ++i) {
    auto r = read_response(c, false);
    ASSERT_TRUE(r.ok) << "answer " << i;
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.header("x-correlation-id"), correlation(i)) << "answer " << i << " out of order";
    versions.push_back(std::string{json::parse(r.body).as_object().at("versionId").as_string()});
  }
  // Each write is its own version, and the unit applied them in the order sent.
  for (int i = 1; i < writes; ++i) {
    EXPECT_LT(versions[i - 1], versions[i]) << i;
  }
  std::map<std::string, double> n_of;
  for (auto& row : items(port, "p1")) {
    auto& o = row.as_object();
    n_of[std::string{o.at("id").as_string()}] = o.at("n").to_number<double>();
  }
  EXPECT_EQ(n_of["same"], writes - 1);
  EXPECT_EQ(n_of["r30"], 30);
  // Answered one at a time, 32 writes would take 32 group commits: the client waits for each
  // answer, which comes after its fsync. Pipelined, later writes queue behind the first's fsync.
  auto groups = commit_groups(port) - groups_before;
  EXPECT_GE(groups, 1);
  EXPECT_LT(groups, writes) << "every pipelined write waited for the one before it";
}

TEST_F(WritePipelining, OtherRequestsWaitForTheAnswersBeforeThem) {
  ASSERT_FALSE(put_record(port, "t", "p2", "items", "warm", R"({"n":-1})").empty());
  raw_connection c{port};
  ASSERT_TRUE(c.connected());
  // Two writes to p2, a read of p2 (it must see both), a write to another unit, a probe.
  std::string burst =
      put(port, "p2", "a", R"({"n":1})", 0) + put(port, "p2", "b", R"({"n":2})", 1) +
      build_request(port, "GET", "/api/t/items?obj=p2", {{"X-Correlation-ID", correlation(2)}},
                    "") +
      put(port, "p3", "c", R"({"n":3})", 3) + put(port, "p2", "d", R"({"n":4})", 4) +
      build_request(port, "GET", "/livez", {{"X-Correlation-ID", correlation(5)}}, "");
  c.send_all(burst);
  for (int i = 0; i < 6; ++i) {
    auto r = read_response(c, false);
    ASSERT_TRUE(r.ok) << "answer " << i;
    EXPECT_EQ(r.status, 200u) << i << ": " << r.body;
    EXPECT_EQ(r.header("x-correlation-id"), correlation(i)) << "answer " << i << " out of order";
    if (i == 2) {
      // The read was held until both writes were answered: it sees them.
      auto data = json::parse(r.body).as_object().at("data").as_array();
      std::vector<std::string> ids;
      for (auto& row : data) {
        ids.emplace_back(row.as_object().at("id").as_string());
      }
      EXPECT_EQ(ids, (std::vector<std::string>{"warm", "a", "b"})) << r.body;
    }
  }
  EXPECT_EQ(items(port, "p3").size(), 1u);
  EXPECT_EQ(items(port, "p2").size(), 4u);
}

TEST_F(WritePipelining, ARefusedRequestInTheMiddleKeepsItsPlace) {
  raw_connection c{port};
  ASSERT_TRUE(c.connected());
  std::string burst =
      put(port, "p4", "a", R"({"n":1})", 0) + put(port, "p4", "b", R"({"n":)", 1) +
      put(port, "p4", "c", R"({"n":3})", 2) +
      build_request(port, "DELETE", "/v1/spaces/t/objects/p4/datasets/items/records/zz",
                    {{"X-Correlation-ID", correlation(3)}}, "") +
      put(port, "p4", "d", R"({"n":4})", 4);
  c.send_all(burst);
  std::vector<unsigned> statuses;
  for (int i = 0; i < 5; ++i) {
    auto r = read_response(c, false);
    ASSERT_TRUE(r.ok) << "answer " << i;
    EXPECT_EQ(r.header("x-correlation-id"), correlation(i)) << "answer " << i << " out of order";
    statuses.push_back(r.status);
    if (i == 1) {
      EXPECT_NE(r.body.find("\"request.bad_json\""), std::string::npos) << r.body;
    }
  }
  EXPECT_EQ(statuses, (std::vector<unsigned>{200, 400, 200, 404, 200}));
  auto rows = items(port, "p4");
  EXPECT_EQ(rows.size(), 3u);  // a, c and d; the malformed b changed nothing
}

TEST_F(WritePipelining, AHalfCloseOrAClosingRequestStillGetsEveryAnswer) {
  ASSERT_FALSE(put_record(port, "t", "p5", "items", "warm", R"({"n":-1})").empty());
  {
    raw_connection c{port};
    ASSERT_TRUE(c.connected());
    std::string burst;
    for (int i = 0; i < 8; ++i) {
      burst += put(port, "p5", "h" + std::to_string(i), R"({"n":1})", i);
    }
    c.send_all(burst);
    c.shutdown_send();  // the server reads EOF while the writes are being applied
    for (int i = 0; i < 8; ++i) {
      auto r = read_response(c, false);
      ASSERT_TRUE(r.ok) << "answer " << i;
      EXPECT_EQ(r.status, 200u) << r.body;
      EXPECT_EQ(r.header("x-correlation-id"), correlation(i));
    }
    // Then the server closes its side.
    EXPECT_FALSE(c.fill(std::chrono::steady_clock::now() + 5s));
    EXPECT_TRUE(c.eof());
  }
  {
    raw_connection c{port};
    ASSERT_TRUE(c.connected());
    std::string burst;
    for (int i = 0; i < 4; ++i) {
      burst += put(port, "p5", "k" + std::to_string(i), R"({"n":2})", i,
                   i == 2 ? header_list{{"Connection", "close"}} : header_list{});
    }
    c.send_all(burst);
    for (int i = 0; i < 3; ++i) {
      auto r = read_response(c, false);
      ASSERT_TRUE(r.ok) << "answer " << i;
      EXPECT_EQ(r.status, 200u) << r.body;
      EXPECT_EQ(r.header("x-correlation-id"), correlation(i));
      EXPECT_EQ(r.header("connection"), i == 2 ? "close" : "") << i;
    }
    // The request after the closing one is not read, so not applied.
    EXPECT_FALSE(c.fill(std::chrono::steady_clock::now() + 5s));
    EXPECT_TRUE(c.eof());
  }
  EXPECT_EQ(items(port, "p5").size(), 1u + 8u + 3u);
}

TEST_F(WritePipelining, AnOversizedWindowedQueryBehindAWriteIsAnsweredInItsPlace) {
  // The 413 of a windowed route waits for the space check (404 first for an unknown space), an
  // answer built after the request was read: it must still come after the write's, and nothing
  // after the oversized body may be read as a request.
  ASSERT_FALSE(put_record(port, "t", "p6", "items", "warm", R"({"n":-1})").empty());
  raw_connection c{port};
  ASSERT_TRUE(c.connected());
  std::string big((std::size_t{1} << 20) + 16, ' ');  // past http.maxBodyBytes
  big.front() = '{';
  big.back() = '}';
  std::string burst =
      put(port, "p6", "a", R"({"n":1})", 0) +
      build_request(port, "POST", "/v1/spaces/t/query",
                    {{"Content-Type", "application/json"}, {"X-Correlation-ID", correlation(1)}},
                    big) +
      put(port, "p6", "b", R"({"n":2})", 2);
  c.send_all(burst);
  auto first = read_response(c, false);
  ASSERT_TRUE(first.ok);
  EXPECT_EQ(first.status, 200u) << first.body;
  EXPECT_EQ(first.header("x-correlation-id"), correlation(0));
  auto second = read_response(c, false);
  ASSERT_TRUE(second.ok);
  EXPECT_EQ(second.status, 413u) << second.body;
  EXPECT_EQ(second.header("x-correlation-id"), correlation(1));
  EXPECT_EQ(second.header("connection"), "close");
  EXPECT_FALSE(c.fill(std::chrono::steady_clock::now() + 5s));
  EXPECT_TRUE(c.eof());
  EXPECT_EQ(items(port, "p6").size(), 2u);  // warm and a; b came after the closing answer
}

TEST_F(WritePipelining, AClientThatDoesNotReadItsAnswersIsNotReadFurther) {
  // The node owes a connection at most 32 answers. A client that pipelines writes and reads no
  // answer fills its receive buffer and then the node's send buffer (at most 4 MiB here, some
  // 17,000 answers); past that, the node must stop reading, not keep applying writes whose
  // answers pile up in memory. Reading the answers then lets every write through, in order.
  ASSERT_FALSE(put_record(port, "t", "p7", "items", "one", R"({"n":-1})").empty());
  auto before = writes_answered(port);
  constexpr int writes = 40000;
  raw_connection c{port, "127.0.0.1", 4096};
  ASSERT_TRUE(c.connected());
  std::string burst;
  for (int i = 0; i < writes; ++i) {
    burst += put(port, "p7", "one", R"({"n":)" + std::to_string(i) + "}", i);
  }
  // The node stops reading, so the send blocks: it runs beside the checks.
  std::thread sender{[&] { c.send_all(burst); }};
  // Wait until the node has stopped applying writes (no change for a second).
  auto deadline = std::chrono::steady_clock::now() + 60s;
  double stalled = writes_answered(port), last = -1;
  while (stalled != last && std::chrono::steady_clock::now() < deadline) {
    last = stalled;
    std::this_thread::sleep_for(1s);
    stalled = writes_answered(port);
  }
  EXPECT_LT(stalled - before, writes) << "the node read and applied every write while the client "
                                         "read none of their answers";
  for (int i = 0; i < writes; ++i) {
    auto r = read_response(c, false, 30s);
    ASSERT_TRUE(r.ok) << "answer " << i;
    ASSERT_EQ(r.status, 200u) << r.body;
    ASSERT_EQ(r.header("x-correlation-id"), correlation(i)) << "answer " << i << " out of order";
  }
  sender.join();
  EXPECT_EQ(writes_answered(port) - before, writes);
  auto rows = items(port, "p7");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].as_object().at("n").to_number<double>(), writes - 1);
}

}  // namespace
}  // namespace weir::test

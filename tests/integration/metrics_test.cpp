// GET /metrics: the node's figures in the Prometheus text exposition format (version 0.0.4),
// moving as connections, subscriptions and writes come; in a cluster, each member's state.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include "cluster_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

/// The samples of an exposition ("name{labels}" → value); fails on a line the format does not
/// allow, and on a sample without its # TYPE line.
std::map<std::string, double> parse_metrics(const std::string& text) {
  static const std::regex sample{
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? (-?[0-9.eE+]+)$)"};
  static const std::regex comment{R"(^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$)"};
  std::map<std::string, double> out;
  std::map<std::string, std::string> types;
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, comment)) {
      if (m[1] == "TYPE") {
        types[m[2]] = line.substr(line.rfind(' ') + 1);
      }
      continue;
    }
    if (!std::regex_match(line, m, sample)) {
      ADD_FAILURE() << "not an exposition line: '" << line << "'";
      continue;
    }
    std::string name = m[1];
    if (!types.count(name)) {
      // A histogram's series: <name>_bucket, <name>_sum, <name>_count.
      for (std::string suffix : {"_bucket", "_sum", "_count"}) {
        if (name.size() > suffix.size() && name.ends_with(suffix) &&
            types[name.substr(0, name.size() - suffix.size())] == "histogram") {
          name = name.substr(0, name.size() - suffix.size());
        }
      }
    }
    EXPECT_TRUE(types.count(name)) << "no # TYPE before " << line;
    out[line.substr(0, line.rfind(' '))] = std::stod(line.substr(line.rfind(' ') + 1));
  }
  return out;
}

std::map<std::string, double> scrape(std::uint16_t port) {
  auto r = http(port, "GET", "/metrics");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  return parse_metrics(r.body);
}

struct Metrics : single_node {};

TEST_F(Metrics, FollowConnectionsSubscriptionsAndUnits) {
  auto m = scrape(port);
  EXPECT_EQ(m["weir_hub_connections"], 0);
  EXPECT_EQ(m["weir_subscriptions"], 0);
  EXPECT_EQ(m["weir_ready"], 1);
  EXPECT_EQ(m["weir_draining"], 0);
  EXPECT_EQ(m[R"(weir_store_info{backend="embedded"})"], 1);
  EXPECT_EQ(m["weir_change_capture_enabled"], 0);
  EXPECT_FALSE(m.count(R"(weir_member_up{member="a"})")) << "a single node has no members";

  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client hub{port};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", "o1"}}, 1, "full");
  hub.read_json();
  m = scrape(port);
  EXPECT_EQ(m["weir_hub_connections"], 1);
  EXPECT_EQ(m["weir_subscriptions"], 1);
  EXPECT_GE(m[R"(weir_units{kind="owned"})"], 1);
  EXPECT_EQ(m[R"(weir_units{kind="remote"})"], 0);
  EXPECT_GE(m["weir_query_keys"], 1);
  EXPECT_GT(m["weir_held_row_bytes"], 0);
  // The write above, in the write-latency histogram: cumulative buckets ending at the count.
  EXPECT_EQ(m["weir_write_duration_seconds_count"], 1);
  EXPECT_EQ(m[R"(weir_write_duration_seconds_bucket{le="+Inf"})"], 1);
  EXPECT_GT(m["weir_write_duration_seconds_sum"], 0);
  double previous = 0;
  for (const auto* le : {"0.0005", "0.001", "0.002", "0.005", "0.01", "0.025", "0.05", "0.1",
                         "0.25", "0.5", "1", "2.5", "10", "+Inf"}) {
    auto key = std::string{"weir_write_duration_seconds_bucket{le=\""} + le + "\"}";
    ASSERT_TRUE(m.count(key)) << key;
    EXPECT_GE(m[key], previous) << key;
    previous = m[key];
  }

  // HEAD: the same headers, no body.
  auto head = http(port, "HEAD", "/metrics");
  EXPECT_EQ(head.status, 200u);
  EXPECT_TRUE(head.body.empty());
}

TEST_F(Metrics, FramesBytesDeliveryTimesAndGroupCommitsAreCounted) {
  auto m = scrape(port);
  EXPECT_EQ(m[R"(weir_build_info{version="0.1.0"})"], 1);
  EXPECT_EQ(m[R"(weir_connections{transport="websocket"})"], 0);
  EXPECT_EQ(m[R"(weir_frames_sent_total{transport="websocket"})"], 0);
  EXPECT_EQ(m["weir_delivery_duration_seconds_count"], 0);
  EXPECT_EQ(m["weir_commit_batch_writes_count"], 0);
  EXPECT_EQ(m[R"(weir_closes_total{code="1013",reason="outbound_queue_full"})"], 0);
  EXPECT_TRUE(m.count("weir_store_queue_depth"));
  EXPECT_TRUE(m.count("weir_outbound_queued_bytes"));

  put_record(port, "t", "o1", "items", "a", R"({"n":0})");
  auto hub = std::make_unique<ws_client>(port);
  hub->expect_connected();
  hub->subscribe("q", "T.Items.All", {{"obj", "o1"}}, 1, "delta");
  hub->read_json();  // the snapshot
  const int writes = 5;
  for (int i = 1; i <= writes; ++i) {
    put_record(port, "t", "o1", "items", "r" + std::to_string(i), R"({"n":1})");
    hub->read_json();
  }
  m = scrape(port);
  EXPECT_EQ(m[R"(weir_connections{transport="websocket"})"], 1);
  EXPECT_EQ(m[R"(weir_subscriptions_by_encoding{protocol="arc",mode="delta"})"], 1);
  EXPECT_EQ(m[R"(weir_subscriptions_by_encoding{protocol="arc",mode="full"})"], 0);
  // Connected, the snapshot and one frame per write; each write's frame timed once.
  EXPECT_EQ(m[R"(weir_frames_sent_total{transport="websocket"})"], writes + 2);
  EXPECT_GT(m[R"(weir_bytes_sent_total{transport="websocket"})"], 0);
  EXPECT_EQ(m["weir_delivery_duration_seconds_count"], writes);
  EXPECT_GT(m["weir_delivery_duration_seconds_sum"], 0);
  EXPECT_EQ(m[R"(weir_delivery_duration_seconds_bucket{le="+Inf"})"], writes);
  // Every batch in some group commit: the groups' sizes add up to the writes.
  EXPECT_EQ(m["weir_commit_batch_writes_sum"], writes + 1);
  EXPECT_GE(m["weir_commit_batch_writes_count"], 1);
  EXPECT_LE(m["weir_commit_batch_writes_count"], writes + 1);
  EXPECT_EQ(m[R"(weir_commit_batch_writes_bucket{le="+Inf"})"],
            m["weir_commit_batch_writes_count"]);

  hub.reset();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline &&
         (m[R"(weir_connections{transport="websocket"})"] != 0 ||
          m[R"(weir_subscriptions_by_encoding{protocol="arc",mode="delta"})"] != 0)) {
    std::this_thread::sleep_for(50ms);
    m = scrape(port);
  }
  EXPECT_EQ(m[R"(weir_connections{transport="websocket"})"], 0);
  EXPECT_EQ(m[R"(weir_subscriptions_by_encoding{protocol="arc",mode="delta"})"], 0);
}

TEST_F(Metrics, ManyConnectionsEndingTogetherReleaseEverySubscription) {
  // Connections that end in one wake-up of the I/O thread release their subscriptions in one
  // message per unit and one per query (actors/unsubscribe_batch.hpp): every subscription of
  // every key must still reach its query actor, and each query ends once it has none left.
  put_record(port, "t", "o1", "items", "a", R"({"n":0})");
  put_record(port, "t", "o2", "items", "a", R"({"n":0})");
  const auto delta = R"(weir_subscriptions_by_encoding{protocol="arc",mode="delta"})";
  const auto full = R"(weir_subscriptions_by_encoding{protocol="arc",mode="full"})";
  std::vector<std::unique_ptr<ws_client>> clients;
  for (int i = 0; i < 40; ++i) {
    auto c = std::make_unique<ws_client>(port);
    c->expect_connected();
    // Two units, two keys of one of them, and two subscriptions of one key per connection.
    const std::string obj = i % 2 == 0 ? "o1" : "o2";
    c->subscribe("a", "T.Items.All", {{"obj", obj}}, 1, "delta");
    c->read_json();
    c->subscribe("b", "T.Items.All", {{"obj", obj}}, 1, "delta");
    c->read_json();
    c->subscribe("c", "T.Items.All", {{"obj", obj}}, 1, "full", {{"page", 0}, {"pageSize", 1}});
    c->read_json();
    clients.push_back(std::move(c));
  }
  auto m = scrape(port);
  EXPECT_EQ(m[delta], 80);
  EXPECT_EQ(m[full], 40);
  EXPECT_EQ(m["weir_query_keys"], 4);

  clients.clear();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline &&
         (m[delta] != 0 || m[full] != 0 || m["weir_query_keys"] != 0)) {
    std::this_thread::sleep_for(20ms);
    m = scrape(port);
  }
  EXPECT_EQ(m[delta], 0);
  EXPECT_EQ(m[full], 0);
  EXPECT_EQ(m["weir_query_keys"], 0) << "a query kept running with no subscription left";

  // The units serve on: a new subscriber gets its snapshot and the next write.
  ws_client next{port};
  next.expect_connected();
  next.subscribe("a", "T.Items.All", {{"obj", "o1"}}, 1, "delta");
  next.read_json();
  put_record(port, "t", "o1", "items", "b", R"({"n":1})");
  auto f = next.read_json();
  EXPECT_EQ(f["type"], "QueryResult");
}

TEST(MetricsCluster, EachMemberIsUpAndWatchesAreCounted) {
  cluster3 cl;
  auto obj = cl.object_owned_by(1, "met");
  put_record(cl.port(1), "t", obj, "items", "a", R"({"n":1})");
  ws_client hub{cl.port(0)};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", obj}}, 1, "full");
  hub.read_json();
  auto m = scrape(cl.port(0));
  for (int i = 0; i < cluster3::n; ++i) {
    EXPECT_EQ(m["weir_member_up{member=\"" + cl.id(i) + "\"}"], 1) << cl.id(i);
  }
  // The watch on the owner runs over one stream to it, and none to the third member.
  EXPECT_EQ(m["weir_peer_stream_open{member=\"" + cl.id(1) + "\"}"], 1);
  EXPECT_EQ(m["weir_peer_watches{member=\"" + cl.id(1) + "\"}"], 1);
  EXPECT_GE(m["weir_peer_stream_events_total{member=\"" + cl.id(1) + "\"}"], 1);
  EXPECT_EQ(m["weir_peer_streams_started_total{member=\"" + cl.id(1) + "\"}"], 1);
  EXPECT_EQ(m["weir_peer_stream_errors_total{member=\"" + cl.id(1) + "\"}"], 0);
  EXPECT_EQ(m["weir_peer_stream_open{member=\"" + cl.id(2) + "\"}"], 0);
  EXPECT_FALSE(m.count("weir_peer_watches{member=\"" + cl.id(0) + "\"}")) << "not itself";
  // An update from the owner is timed from its arrival here.
  put_record(cl.port(1), "t", obj, "items", "b", R"({"n":2})");
  hub.read_json();
  m = scrape(cl.port(0));
  EXPECT_EQ(m["weir_delivery_duration_seconds_count"], 1);
  EXPECT_EQ(m["weir_membership_epoch"], 0);
  EXPECT_EQ(m["weir_upstream_watches"], 1);
  EXPECT_EQ(m[R"(weir_units{kind="remote"})"], 1);
  EXPECT_EQ(scrape(cl.port(1))["weir_replica_watches"], 1);
  cl.kill(2);
  ASSERT_TRUE(cl.wait_state(0, 2, "down", 10s));
  m = scrape(cl.port(0));
  EXPECT_EQ(m[R"(weir_member_up{member="c"})"], 0);
}

}  // namespace
}  // namespace weir::test

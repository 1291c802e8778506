// Three real `weir serve` processes on loopback forming one cluster (issue 5): subscriptions
// through a remote owner with one upstream per query key, writes forwarded from any node, SSE
// control POSTs forwarded to the node holding the stream (and refused for anyone else), and an
// owner SIGKILLed during a write burst: detected down, writes refused with 503, and after its
// restart every acknowledged write is there and remote subscribers get a fresh baseline that
// reconstructs to exactly what a fresh query returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <signal.h>

#include <boost/json.hpp>

#include <grpcpp/grpcpp.h>

#include "apps/config/node_config.hpp"
#include "cluster_support.hpp"
#include "core/query_definition.hpp"
#include "core/rendezvous.hpp"
#include "process_support.hpp"
#include "sse_test_support.hpp"
#include "test_support.hpp"
#include "weir/v1/data.grpc.pb.h"
#include "weir/v1/query_owner.grpc.pb.h"

namespace weir::test {
namespace {

namespace json = boost::json;
using clock_type = std::chrono::steady_clock;

std::int64_t figure(const json::object& m, const char* key) {
  auto* v = m.if_contains(key);
  return v && v->is_number() ? v->to_number<std::int64_t>() : -1;
}

/// A delta-mode subscriber's view of the result: id → record JSON, rebuilt from `data`
/// baselines and `changeSet`s the way a client does.
struct reconstruction {
  std::map<std::string, std::string> rows;
  int baselines = 0;

  void apply(const json::object& frame) {
    const auto& p = frame.at("payload").as_object();
    if (auto* d = p.if_contains("data"); d && d->is_array()) {
      rows.clear();
      for (auto& r : d->as_array()) {
        rows[std::string{r.as_object().at("id").as_string()}] = json::serialize(r);
      }
      ++baselines;
      return;
    }
    const auto& cs = p.at("changeSet").as_object();
    for (const char* k : {"added", "replaced"}) {
      for (auto& r : cs.at(k).as_array()) {
        rows[std::string{r.as_object().at("id").as_string()}] = json::serialize(r);
      }
    }
    for (auto& r : cs.at("removed").as_array()) {
      rows.erase(std::string{r.as_object().at("id").as_string()});
    }
  }
};

std::map<std::string, std::string> fresh_query(std::uint16_t port, const std::string& obj) {
  auto r = http(port, "GET", "/api/t/items?obj=" + obj);
  EXPECT_EQ(r.status, 200u) << r.body;
  std::map<std::string, std::string> out;
  auto doc = r.json();
  for (auto& v : doc.as_object()["data"].as_array()) {
    out[std::string{v.as_object().at("id").as_string()}] = json::serialize(v);
  }
  return out;
}

bool is_result(const json::object& f) {
  return f.at("type").as_string() == "QueryResult";
}

TEST(ClusterProcess, RemoteOwnerServesManyLocalClientsThroughOneUpstream) {
  cluster3 cl;
  const int a = 0, b = 1, c = 2;
  auto obj = cl.object_owned_by(c, "o");
  constexpr int clients = 6;
  std::vector<std::unique_ptr<ws_client>> subs;
  for (int k = 0; k < clients; ++k) {
    subs.push_back(std::make_unique<ws_client>(cl.port(a)));
    auto id = subs.back()->expect_connected();
    EXPECT_NE(id.find("@a"), std::string::npos) << id;  // names its holder
    subs.back()->subscribe("q", "T.Items.All", {{"obj", obj}}, 1, "delta");
    auto first = subs.back()->read_until(is_result);
    EXPECT_EQ(first["payload"].as_object()["data"], json::array{});
  }
  // Node A holds one upstream for every local client, and the owner C one replica for A.
  EXPECT_TRUE(cl.wait_member(a, a, [](const json::object& m) {
    return figure(m, "upstreams") == 1 && figure(m, "subscriptions") == clients;
  })) << json::serialize(cl.health(a));
  EXPECT_TRUE(cl.wait_member(a, c, [](const json::object& m) {
    return figure(m, "replicas") == 1;
  })) << json::serialize(cl.health(a));
  EXPECT_TRUE(
      cl.wait_member(c, c, [](const json::object& m) { return figure(m, "replicas") == 1; }));

  // A write sent to B (which owns nothing here) reaches every client on A as the right delta.
  auto vid = put_record(cl.port(b), "t", obj, "items", "r1", R"({"n":1,"color":"red"})");
  ASSERT_FALSE(vid.empty());
  for (auto& s : subs) {
    auto f = s->read_until(is_result);
    auto& cs = f["payload"].as_object()["changeSet"].as_object();
    ASSERT_EQ(cs["added"].as_array().size(), 1u) << json::serialize(f);
    auto& rec = cs["added"].as_array()[0].as_object();
    EXPECT_EQ(rec["id"], "r1");
    EXPECT_EQ(rec["n"], 1);
    EXPECT_TRUE(cs["replaced"].as_array().empty());
    EXPECT_TRUE(cs["removed"].as_array().empty());
  }
  // A replace and a delete through A itself.
  put_record(cl.port(a), "t", obj, "items", "r1", R"({"n":2,"color":"red"})");
  for (auto& s : subs) {
    auto f = s->read_until(is_result);
    auto& cs = f["payload"].as_object()["changeSet"].as_object();
    ASSERT_EQ(cs["replaced"].as_array().size(), 1u) << json::serialize(f);
    EXPECT_EQ(cs["replaced"].as_array()[0].as_object()["n"], 2);
  }
  // The gRPC Data API is forwarded the same way: acknowledged once the owner made it durable.
  {
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(cl.grpc_port(b)),
                                       grpc::InsecureChannelCredentials());
    auto data = weir::v1::Data::NewStub(channel);
    grpc::ClientContext ctx;
    weir::v1::PutRecordRequest req;
    req.set_space("t");
    req.set_object_id(obj);
    req.set_dataset("items");
    req.set_id("r2");
    req.set_record_json(R"({"n":3})");
    weir::v1::WriteReply reply;
    auto status = data->PutRecord(&ctx, req, &reply);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(reply.version_id().empty());
    for (auto& s : subs) {
      auto f = s->read_until(is_result);
      auto& cs = f["payload"].as_object()["changeSet"].as_object();
      ASSERT_EQ(cs["added"].as_array().size(), 1u) << json::serialize(f);
      EXPECT_EQ(cs["added"].as_array()[0].as_object()["id"], "r2");
    }
    // An invalid write is refused by the owner with its own error, relayed unchanged.
    grpc::ClientContext bad_ctx;
    req.set_record_json(R"({"id":"other","n":4})");
    status = data->PutRecord(&bad_ctx, req, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    auto path = "/v1/spaces/t/objects/" + obj + "/datasets/items/records/r2";
    auto forwarded = http(cl.port(b), "PUT", path, R"({"id":"other","n":4})");
    auto at_owner = http(cl.port(c), "PUT", path, R"({"id":"other","n":4})");
    EXPECT_EQ(forwarded.status, 400u);
    EXPECT_EQ(forwarded.body, at_owner.body);
  }
  auto del =
      http(cl.port(a), "DELETE", "/v1/spaces/t/objects/" + obj + "/datasets/items/records/r1");
  EXPECT_EQ(del.status, 200u) << del.body;
  for (auto& s : subs) {
    auto f = s->read_until(is_result);
    auto& cs = f["payload"].as_object()["changeSet"].as_object();
    ASSERT_EQ(cs["removed"].as_array().size(), 1u) << json::serialize(f);
  }
  // The fresh query agrees on every node.
  for (int i = 0; i < cluster3::n; ++i) {
    auto fresh = fresh_query(cl.port(i), obj);
    ASSERT_EQ(fresh.size(), 1u);
    EXPECT_EQ(fresh.begin()->first, "r2");
  }
  // The last client leaving releases the upstream and the owner's replica.
  subs.clear();
  EXPECT_TRUE(cl.wait_member(a, a, [](const json::object& m) {
    return figure(m, "upstreams") == 0 && figure(m, "subscriptions") == 0;
  })) << json::serialize(cl.health(a));
  EXPECT_TRUE(
      cl.wait_member(c, c, [](const json::object& m) { return figure(m, "replicas") == 0; }));
}

TEST(ClusterProcess, SseControlPostsAreForwardedToTheHolderOnly) {
  cluster3 cl;
  const int a = 0, b = 1, c = 2;
  auto obj = cl.object_owned_by(c, "s");
  sse_client stream{cl.port(a)};
  ASSERT_EQ(stream.status(), 200u);
  auto conn = stream.expect_connected();
  ASSERT_NE(conn.find("@a"), std::string::npos) << conn;
  auto request = subscription_request("T.Items.All", {{"obj", obj}}, "delta");

  // Another peer address, or another tenant, gets 404 on every node, and nothing happens.
  for (int i = 0; i < cluster3::n; ++i) {
    auto other_tenant =
        sse_control_post(cl.port(i), "subscribe", control_body(conn, "x", 1, request),
                         {{"x-cratis-tenant-id", "someone-else"}});
    EXPECT_EQ(other_tenant.status, 404u) << "node " << cl.id(i);
    if (loopback_alias_usable("127.0.0.2")) {
      auto other_peer = sse_control_post(cl.port(i), "subscribe",
                                         control_body(conn, "x", 1, request), {}, "127.0.0.2");
      EXPECT_EQ(other_peer.status, 404u) << "node " << cl.id(i);
      auto other_unsub =
          sse_control_post(cl.port(i), "unsubscribe", control_body(conn, "x", 1), {}, "127.0.0.2");
      EXPECT_EQ(other_unsub.status, 404u) << "node " << cl.id(i);
    }
  }
  // A forged id: the right node but an unknown connection, or a node that is not a member.
  auto uuid = conn.substr(0, conn.find('@'));
  EXPECT_EQ(
      sse_control_post(cl.port(b), "subscribe",
                       control_body("00000000-0000-4000-8000-000000000000@a", "x", 1, request))
          .status,
      404u);
  EXPECT_EQ(
      sse_control_post(cl.port(b), "subscribe", control_body(uuid + "@b", "x", 1, request)).status,
      404u);
  EXPECT_EQ(
      sse_control_post(cl.port(b), "subscribe", control_body(uuid + "@zz", "x", 1, request)).status,
      404u);
  EXPECT_TRUE(stream.silent_for(200ms));

  // The caller's own POSTs succeed wherever they land; frames come on A's stream.
  auto sub = sse_control_post(cl.port(b), "subscribe", control_body(conn, "q1", 1, request));
  EXPECT_EQ(sub.status, 200u);
  auto first = stream.read_json();
  EXPECT_EQ(first["type"], "QueryResult");
  EXPECT_EQ(first["queryId"], "q1");
  put_record(cl.port(c), "t", obj, "items", "r1", R"({"n":1})");
  auto delta = stream.read_json();
  EXPECT_EQ(delta["queryId"], "q1");
  EXPECT_EQ(delta["payload"].as_object()["changeSet"].as_object()["added"].as_array().size(), 1u);
  auto unsub = sse_control_post(cl.port(c), "unsubscribe", control_body(conn, "q1", 1));
  EXPECT_EQ(unsub.status, 200u);
  put_record(cl.port(b), "t", obj, "items", "r2", R"({"n":2})");
  EXPECT_TRUE(stream.silent_for(300ms));
  // Subscribe again through C, and on A itself.
  EXPECT_EQ(sse_control_post(cl.port(c), "subscribe", control_body(conn, "q2", 1, request)).status,
            200u);
  auto again = stream.read_json();
  EXPECT_EQ(again["queryId"], "q2");
  EXPECT_EQ(again["payload"].as_object()["data"].as_array().size(), 2u);
  EXPECT_EQ(sse_control_post(cl.port(a), "unsubscribe", control_body(conn, "q2", 1)).status, 200u);
}

/// `name`'s value on `port`'s /metrics (a sample: a name, with its labels if it has any); -1
/// when absent.
double metric(std::uint16_t port, const std::string& name) {
  auto r = http(port, "GET", "/metrics");
  std::istringstream in{r.body};
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(name + " ")) {
      return std::stod(line.substr(name.size() + 1));
    }
  }
  return -1;
}

TEST(ClusterProcess, AMemberThatHangsLosesItsWatchesOnTheOwner) {
  // A gateway member whose process hangs (or whose host vanishes) answers nothing: the owner
  // must not keep its watches, and the queries and units they hold, until TCP gives up hours
  // later. The owner's peer listener pings a silent connection and closes it when the ping goes
  // unanswered for cluster.downAfterMs (1 s here).
  cluster3 cl;
  const int a = 0, c = 2;
  auto obj = cl.object_owned_by(c, "hang");
  put_record(cl.port(c), "t", obj, "items", "r", R"({"n":1})");
  ws_client on_a{cl.port(a)};
  on_a.expect_connected();
  on_a.subscribe("q", "T.Items.All", {{"obj", obj}}, 1, "delta");
  on_a.read_until(is_result);
  ASSERT_EQ(metric(cl.port(c), "weir_replica_watches"), 1);

  ASSERT_EQ(::kill(cl.proc(a).pid(), SIGSTOP), 0);
  auto stopped_at = clock_type::now();
  double watches = 1;
  while (watches != 0 && clock_type::now() - stopped_at < 15s) {
    std::this_thread::sleep_for(100ms);
    watches = metric(cl.port(c), "weir_replica_watches");
  }
  auto took = clock_type::now() - stopped_at;
  ::kill(cl.proc(a).pid(), SIGCONT);
  EXPECT_EQ(watches, 0) << "the owner still held the hung member's watch 15 s later";
  EXPECT_LT(took, 8s);
  std::printf(
      "[ cluster ] a hung member's watch ended on the owner after %lld ms\n",
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
}

TEST(ClusterProcess, OwnerKilledDuringWriteBurstLosesNothingAcknowledged) {
  cluster3 cl;
  const int a = 0, b = 1, c = 2;
  auto obj = cl.object_owned_by(c, "k");
  ws_client on_a{cl.port(a)};
  ws_client on_b{cl.port(b)};
  reconstruction ra, rb;
  for (auto* s : {&on_a, &on_b}) {
    s->expect_connected();
    s->subscribe("q", "T.Items.All", {{"obj", obj}}, 1, "delta");
  }
  ra.apply(on_a.read_until(is_result));
  rb.apply(on_b.read_until(is_result));

  // Two writers, one through A and one through B, each record written once.
  std::mutex mu;
  std::map<std::string, int> acked;
  std::atomic<bool> stop{false};
  std::atomic<int> refused{0};
  auto writer = [&](int node, const std::string& prefix) {
    for (int k = 0; !stop; ++k) {
      auto id = prefix + std::to_string(k);
      auto r = http(cl.port(node), "PUT",
                    "/v1/spaces/t/objects/" + obj + "/datasets/items/records/" + id,
                    "{\"n\":" + std::to_string(k) + "}");
      if (r.status == 200) {
        std::lock_guard lock{mu};
        acked[id] = k;
      } else {
        ++refused;
        std::this_thread::sleep_for(5ms);
      }
    }
  };
  std::thread wa{writer, a, "a"}, wb{writer, b, "b"};
  // The burst is under way (writes acknowledged through both members) when the owner dies.
  auto acked_from = [&](char member) {
    std::lock_guard lock{mu};
    return std::count_if(acked.begin(), acked.end(), [&](auto& e) { return e.first[0] == member; });
  };
  for (auto until = clock_type::now() + 10s;
       (acked_from('a') < 10 || acked_from('b') < 10) && clock_type::now() < until;) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_GE(acked_from('a'), 10);
  ASSERT_GE(acked_from('b'), 10);
  auto killed_at = clock_type::now();
  cl.kill(c);
  // Detected down within a bound (heartbeat 100 ms, down after 1000 ms).
  ASSERT_TRUE(cl.wait_state(a, c, "down", 5s)) << json::serialize(cl.health(a));
  auto detected = clock_type::now() - killed_at;
  EXPECT_LT(detected, 3s);
  std::printf("[ cluster ] owner SIGKILL detected down after %lld ms\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(detected).count()));
  auto degraded = http(cl.port(b), "GET", "/cluster/health");
  EXPECT_EQ(degraded.status, 503u);
  EXPECT_EQ(degraded.json().as_object()["status"], "degraded");
  EXPECT_EQ(degraded.json().as_object()["store"], "embedded");
  // Writes for its units are refused with a clear code, from any node.
  auto refused_write =
      http(cl.port(a), "PUT", "/v1/spaces/t/objects/" + obj + "/datasets/items/records/late",
           R"({"n":-1})");
  EXPECT_EQ(refused_write.status, 503u);
  EXPECT_EQ(refused_write.json().as_object()["error"].as_object()["code"],
            "cluster.owner_unavailable")
      << refused_write.body;
  stop = true;
  wa.join();
  wb.join();
  EXPECT_GT(refused.load(), 0);

  // The owner comes back. Each subscriber applies the deltas still on their way from before
  // the kill, then gets a fresh baseline (a QueryResult with data).
  int baselines_a = ra.baselines, baselines_b = rb.baselines;
  auto restarted_at = clock_type::now();
  cl.start(c);
  ASSERT_TRUE(cl.proc(c).started());
  auto until_baseline = [](reconstruction& r) {
    return [&r](const json::object& f) {
      if (!is_result(f)) {
        return false;
      }
      r.apply(f);
      return f.at("payload").as_object().contains("data");
    };
  };
  on_a.read_until(until_baseline(ra), 10s);
  auto rebased = clock_type::now() - restarted_at;
  std::printf("[ cluster ] fresh baseline on the remote subscriber %lld ms after the restart\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(rebased).count()));
  on_b.read_until(until_baseline(rb), 10s);
  EXPECT_EQ(ra.baselines, baselines_a + 1);
  EXPECT_EQ(rb.baselines, baselines_b + 1);
  EXPECT_TRUE(cl.wait_state(a, c, "up", 5s));
  EXPECT_TRUE(cl.wait_state(b, c, "up", 5s));
  EXPECT_EQ(http(cl.port(a), "GET", "/cluster/health").status, 200u);

  // Every acknowledged write is there; both subscribers equal a fresh query.
  auto fresh = fresh_query(cl.port(b), obj);
  for (auto& [id, k] : acked) {
    auto it = fresh.find(id);
    ASSERT_NE(it, fresh.end()) << "acknowledged write " << id << " lost";
    EXPECT_EQ(json::parse(it->second).as_object()["n"], k);
  }
  EXPECT_GT(acked.size(), 10u);
  EXPECT_EQ(ra.rows, fresh);
  EXPECT_EQ(rb.rows, fresh);
  // And they keep following.
  put_record(cl.port(b), "t", obj, "items", "after", R"({"n":1000})");
  ra.apply(on_a.read_until(is_result));
  EXPECT_EQ(ra.rows, fresh_query(cl.port(a), obj));
}

TEST(ClusterProcess, ReadyzNeedsAQuorumAndSigtermDrains) {
  cluster3 cl;
  for (int i = 0; i < cluster3::n; ++i) {
    EXPECT_EQ(http(cl.port(i), "GET", "/readyz").status, 200u);
    EXPECT_EQ(http(cl.port(i), "GET", "/livez").status, 200u);
  }
  // One member down: two of three still make a quorum, but the cluster is degraded.
  cl.kill(2);
  ASSERT_TRUE(cl.wait_state(0, 2, "down", 5s));
  EXPECT_EQ(http(cl.port(0), "GET", "/readyz").status, 200u);
  EXPECT_EQ(http(cl.port(0), "GET", "/cluster/health").status, 503u);
  // SIGTERM: B drains, tells its clients (1001) and exits in time; A loses its quorum.
  ws_client on_b{cl.port(1)};
  on_b.expect_connected();
  // A watches a unit B owns: B's drain must end that stream itself, not wait for it.
  ws_client on_a{cl.port(0)};
  on_a.expect_connected();
  on_a.subscribe("w", "T.Items.All", {{"obj", cl.object_owned_by(1, "d")}});
  on_a.read_until(is_result);
  ASSERT_TRUE(
      cl.wait_member(1, 1, [](const json::object& m) { return figure(m, "replicas") == 1; }));
  auto t0 = clock_type::now();
  int exit_status = -2;
  std::thread term{[&] { exit_status = cl.proc(1).terminate(15s); }};
  auto last = on_b.read(12s);  // the client reads on, as a client does, and answers the close
  EXPECT_FALSE(last.has_value()) << *last;
  term.join();
  EXPECT_EQ(exit_status, 0) << cl.proc(1).log();
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0);
  EXPECT_LT(took, 3s);  // well inside observableShutdownTimeoutMs (10 s)
  auto closed = on_b.close_status();
  std::printf("[ cluster ] SIGTERM drain took %lld ms\n", static_cast<long long>(took.count()));
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(closed->first, 1001);
  ASSERT_TRUE(cl.wait_state(0, 1, "down", 5s));
  auto not_ready = http(cl.port(0), "GET", "/readyz");
  EXPECT_EQ(not_ready.status, 503u) << not_ready.body;
  EXPECT_EQ(http(cl.port(0), "GET", "/livez").status, 200u);
}

TEST(ClusterProcess, SubscribersOfAnOwnerThatStaysDownGetAnError) {
  cluster3 cl{"  ownerUnavailableErrorMs: 1500\n"};
  const int a = 0, c = 2;
  auto obj = cl.object_owned_by(c, "e");
  ws_client ws{cl.port(a)};
  ws.expect_connected();
  ws.subscribe("q", "T.Items.All", {{"obj", obj}}, 3, "delta");
  ws.read_until(is_result);
  auto killed_at = clock_type::now();
  cl.kill(c);
  // Kept while the owner may come back; ended with the protocol's Error past the bound.
  auto err = ws.read_until([](const json::object& f) { return f.at("type") == "Error"; }, 10s);
  auto after = clock_type::now() - killed_at;
  EXPECT_EQ(err["queryId"], "q");
  EXPECT_EQ(err["revision"], 3);
  EXPECT_EQ(err["payload"], "Observable query failed");
  EXPECT_GE(after, 1500ms);
  EXPECT_LT(after, 6s);
  // The upstream is gone with it; the connection itself stays usable.
  EXPECT_TRUE(cl.wait_member(a, a, [](const json::object& m) {
    return figure(m, "upstreams") == 0 && figure(m, "subscriptions") == 0;
  })) << json::serialize(cl.health(a));
  ws.subscribe("q2", "T.Items.All", {{"obj", cl.object_owned_by(a, "e")}}, 1, "delta");
  EXPECT_EQ(ws.read_until(is_result)["queryId"], "q2");
}

/// What a Watch stream's events rebuild: id → record JSON.
struct watch_replay {
  std::map<std::string, std::string> rows;
  int snapshots = 0;

  void apply(const weir::v1::WatchEvent& ev) {
    if (ev.has_snapshot()) {
      rows.clear();
      for (auto& r : ev.snapshot().records_json()) {
        rows[std::string{json::parse(r).as_object().at("id").as_string()}] = r;
      }
      ++snapshots;
      return;
    }
    for (auto& ch : ev.update().changes()) {
      if (!ch.before_json().empty()) {
        rows.erase(std::string{json::parse(ch.before_json()).as_object().at("id").as_string()});
      }
      if (!ch.after_json().empty()) {
        rows[std::string{json::parse(ch.after_json()).as_object().at("id").as_string()}] =
            ch.after_json();
      }
    }
  }
};

/// Keeps a test's gRPC client connection answering the owner's keepalive pings while the test
/// thread does not read from it. A synchronous client's transport is only read while some call
/// on it is waited on, and the owner closes a connection whose ping goes unanswered for
/// cluster.downAfterMs (1 s here): a test that stops reading for longer (the writes below took
/// 3 s under the sanitizers) would see its stream end instead of a slow gateway's resync. A real
/// gateway's transport is read by gRPC's own threads whether or not a watch is read, so this
/// thread waits in a Read on an empty Watch stream of the same connection, which reads it.
class transport_keeper {
 public:
  explicit transport_keeper(weir::v1::QueryOwner::Stub& stub) {
    ctx_.AddMetadata("x-weir-peer-token", cluster3::peer_token);
    stream_ = stub.Watch(&ctx_);
    reader_ = std::thread{[this] {
      weir::v1::WatchEvent ev;
      while (stream_->Read(&ev)) {
      }
    }};
  }
  ~transport_keeper() {
    ctx_.TryCancel();
    reader_.join();
  }
  transport_keeper(const transport_keeper&) = delete;
  transport_keeper& operator=(const transport_keeper&) = delete;

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<weir::v1::WatchRequest, weir::v1::WatchEvent>> stream_;
  std::thread reader_;
};

TEST(ClusterProcess, SlowGatewayIsResyncedWithASnapshotNotBufferedWithoutBound) {
  cluster3 cl{"  maxStreamQueueBytes: 65536\n"};
  const int c = 2;
  auto obj = cl.object_owned_by(c, "p");
  // A gateway that opens a watch and then does not read: the owner's queue for it fills.
  auto cfg = config::load_config_text(default_queries_yaml(), "queries");
  ASSERT_TRUE(cfg);
  const core::query_definition* def = nullptr;
  for (auto& q : cfg->queries) {
    if (q.name == "T.Items.All") {
      def = &q;
    }
  }
  ASSERT_NE(def, nullptr);
  auto bound = core::bind_query(*def, {{"obj", obj}}, 0, 0, std::nullopt, false);
  ASSERT_TRUE(bound);
  // Small, fixed flow-control windows: the transport cannot soak up what the gateway does not
  // read, so the owner's own queue is what fills.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 65536);
  auto channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(cl.peer_port(c)),
                                           grpc::InsecureChannelCredentials(), args);
  auto stub = weir::v1::QueryOwner::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.AddMetadata("x-weir-peer-token", cluster3::peer_token);  // this test plays a member
  ctx.set_deadline(std::chrono::system_clock::now() + 60s);
  auto stream = stub->Watch(&ctx);
  transport_keeper keeper{*stub};
  weir::v1::WatchRequest open;
  open.set_watch_id(7);
  auto* q = open.mutable_open();
  q->set_query_name("T.Items.All");
  q->set_key(bound->key);
  q->set_definition(bound->from.definition);
  auto* arg = q->add_arguments();
  arg->set_name("obj");
  arg->set_value(obj);
  // A gateway whose definition of the query differs is refused, not served a mix.
  {
    grpc::ClientContext other;
    other.AddMetadata("x-weir-peer-token", cluster3::peer_token);
    auto mismatched = stub->Watch(&other);
    auto wrong = open;
    wrong.mutable_open()->set_definition("0000000000000000");
    ASSERT_TRUE(mismatched->Write(wrong));
    weir::v1::WatchEvent refused;
    ASSERT_TRUE(mismatched->Read(&refused));
    EXPECT_EQ(refused.body_case(), weir::v1::WatchEvent::kError);
    EXPECT_NE(refused.error().find("configured differently"), std::string::npos) << refused.error();
    other.TryCancel();
  }
  ASSERT_TRUE(stream->Write(open));
  ASSERT_TRUE(
      cl.wait_member(c, c, [](const json::object& m) { return figure(m, "replicas") == 1; }));

  // About 4 MB of changes while nobody reads: far past the 64 KiB bound and the transport's
  // flow-control windows.
  std::string pad(400, 'x');
  for (int batch = 0; batch < 200; ++batch) {
    json::array upsert;
    for (int k = 0; k < 20; ++k) {
      upsert.push_back(json::object{
          {"id", "r" + std::to_string(batch * 20 + k)}, {"n", batch * 20 + k}, {"pad", pad}});
    }
    auto r = http(cl.port(c), "POST", "/v1/spaces/t/objects/" + obj + "/datasets/items/records",
                  json::serialize(json::object{{"upsert", std::move(upsert)}}));
    ASSERT_EQ(r.status, 200u) << r.body;
  }
  auto last = put_record(cl.port(c), "t", obj, "items", "end", R"({"n":-1})");
  // Now read: some changes were dropped, and a fresh snapshot replaced them.
  watch_replay replay;
  weir::v1::WatchEvent ev;
  std::uint64_t events = 0;
  while (stream->Read(&ev)) {
    ++events;
    ASSERT_EQ(ev.watch_id(), 7u);
    ASSERT_FALSE(ev.has_error() && ev.body_case() == weir::v1::WatchEvent::kError) << ev.error();
    replay.apply(ev);
    if (replay.rows.count("end")) {
      break;
    }
  }
  EXPECT_GE(replay.snapshots, 2) << "no resync happened";
  EXPECT_LT(events, 201u) << "every change was buffered";
  EXPECT_EQ(replay.rows.size(), 4001u);
  auto fresh = fresh_query(cl.port(0), obj);
  EXPECT_EQ(fresh.size(), replay.rows.size());
  for (auto& [id, text] : fresh) {
    auto it = replay.rows.find(id);
    ASSERT_NE(it, replay.rows.end()) << id;
    EXPECT_EQ(json::parse(it->second), json::parse(text));
  }
  ctx.TryCancel();
  EXPECT_TRUE(
      cl.wait_member(c, c, [](const json::object& m) { return figure(m, "replicas") == 0; }));

  // A gateway that goes away while the owner still has writes queued for it: its replica is
  // released (and the stream finished, so the owner's shutdown does not wait for it).
  {
    auto gone_channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(cl.peer_port(c)),
                                                  grpc::InsecureChannelCredentials(), args);
    auto gone_stub = weir::v1::QueryOwner::NewStub(gone_channel);
    grpc::ClientContext gone;
    gone.AddMetadata("x-weir-peer-token", cluster3::peer_token);
    auto stalled = gone_stub->Watch(&gone);
    open.set_watch_id(8);
    ASSERT_TRUE(stalled->Write(open));
    ASSERT_TRUE(
        cl.wait_member(c, c, [](const json::object& m) { return figure(m, "replicas") == 1; }));
    for (int batch = 0; batch < 50; ++batch) {
      json::array upsert;
      for (int k = 0; k < 20; ++k) {
        upsert.push_back(json::object{{"id", "s" + std::to_string(batch * 20 + k)}, {"pad", pad}});
      }
      auto r = http(cl.port(c), "POST", "/v1/spaces/t/objects/" + obj + "/datasets/items/records",
                    json::serialize(json::object{{"upsert", std::move(upsert)}}));
      ASSERT_EQ(r.status, 200u) << r.body;
    }
    gone.TryCancel();
    stalled.reset();
  }
  EXPECT_TRUE(
      cl.wait_member(c, c, [](const json::object& m) { return figure(m, "replicas") == 0; }));
}

TEST(ClusterProcess, AGatewayReadsAnOwnersStreamNoFasterThanItAppliesItAndLosesNothing) {
  cluster3 cl{"  maxStreamQueueBytes: 65536\n"};
  const int a = 0, c = 2;
  auto obj = cl.object_owned_by(c, "bp");
  ws_client on_a{cl.port(a)};
  on_a.expect_connected();
  on_a.subscribe("q", "T.Items.All", {{"obj", obj}}, 1, "delta");
  reconstruction ra;
  ra.apply(on_a.read_until(is_result));
  // Each write replaces the same 200 records of ~480 bytes: its update (~100 KB on the stream)
  // is over the 64 KiB bound by itself, so the gateway takes it, stops reading until its query
  // actor has applied it, then reads on. The owner meanwhile queues, drops and resyncs as it
  // does for a slow reader (a resync's baseline, the ~100 KB result, stays one frame under
  // the hub's 1 MiB frame bound).
  std::string pad(450, 'x');
  for (int batch = 0; batch < 20; ++batch) {
    json::array upsert;
    for (int k = 0; k < 200; ++k) {
      upsert.push_back(json::object{{"id", "r" + std::to_string(k)}, {"n", batch}, {"pad", pad}});
    }
    auto r = http(cl.port(c), "POST", "/v1/spaces/t/objects/" + obj + "/datasets/items/records",
                  json::serialize(json::object{{"upsert", std::move(upsert)}}));
    ASSERT_EQ(r.status, 200u) << r.body;
  }
  put_record(cl.port(c), "t", obj, "items", "end", R"({"n":-1})");
  on_a.read_until(
      [&ra](const json::object& f) {
        if (!is_result(f)) {
          return false;
        }
        ra.apply(f);
        return ra.rows.count("end") > 0;
      },
      20s);
  EXPECT_EQ(ra.rows.size(), 201u);
  EXPECT_EQ(ra.rows, fresh_query(cl.port(a), obj));
  const std::string member = "{member=\"" + cl.id(c) + "\"}";
  EXPECT_GE(metric(cl.port(a), "weir_peer_stream_pauses_total" + member), 1);
  // Every pause ended in a resume on the same stream, and every event's bytes came back once
  // it was applied.
  EXPECT_EQ(metric(cl.port(a), "weir_peer_streams_started_total" + member), 1);
  EXPECT_EQ(metric(cl.port(a), "weir_peer_stream_errors_total" + member), 0);
  double held = -1;
  for (auto until = clock_type::now() + 5s; clock_type::now() < until;) {
    held = metric(cl.port(a), "weir_peer_stream_held_bytes" + member);
    if (held == 0) {
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(held, 0);
  // And it keeps following.
  put_record(cl.port(c), "t", obj, "items", "after", R"({"n":1})");
  ra.apply(on_a.read_until(is_result));
  EXPECT_EQ(ra.rows, fresh_query(cl.port(a), obj));
}

TEST(ClusterProcess, HealthFeedShowsTheCallersConnectionsOnEveryNode) {
  cluster3 cl;
  const int a = 0, b = 1, c = 2;
  ws_client on_a{cl.port(a)};
  auto id_a = on_a.expect_connected();
  on_a.subscribe("qa", "T.Items.All", {{"obj", cl.object_owned_by(c, "h")}});
  on_a.read_until(is_result);
  sse_client on_b{cl.port(b)};
  auto id_b = on_b.expect_connected();
  EXPECT_EQ(
      sse_control_post(
          cl.port(c), "subscribe",
          control_body(id_b, "qb", 1,
                       subscription_request("T.Items.All", {{"obj", cl.object_owned_by(a, "h")}})))
          .status,
      200u);
  on_b.read_json();
  // Asked on C, which holds neither: both connections, with their subscriptions.
  auto r = http(cl.port(c), "GET", "/.cratis/queries/health");
  ASSERT_EQ(r.status, 200u);
  auto doc = r.json();
  auto& data = doc.as_object()["data"].as_object();
  EXPECT_EQ(data["totalConnections"], 2) << r.body;
  EXPECT_EQ(data["totalSubscriptions"], 2) << r.body;
  std::set<std::string> ids;
  for (auto& conn : data["connections"].as_array()) {
    ids.insert(std::string{conn.as_object().at("connectionId").as_string()});
  }
  EXPECT_EQ(ids, (std::set<std::string>{id_a, id_b}));
  // A hub subscription to the feed on B sees the same, and follows A's connection leaving.
  ws_client feed{cl.port(b)};
  feed.expect_connected();
  feed.subscribe("h", "QueryHealth.ObserveHealth", {}, 1, "full");
  auto first = feed.read_until(is_result);
  EXPECT_EQ(first["payload"].as_object()["data"].as_object()["totalConnections"], 3);
  on_a.unsubscribe("qa");
  auto next = feed.read_until(is_result);
  EXPECT_EQ(next["payload"].as_object()["data"].as_object()["totalSubscriptions"], 2)
      << json::serialize(next);
  // Someone else sees none of them, wherever they ask.
  if (loopback_alias_usable("127.0.0.2")) {
    for (int i = 0; i < cluster3::n; ++i) {
      auto other = http_exact(cl.port(i), "GET", "/.cratis/queries/health", "", {}, "127.0.0.2");
      ASSERT_EQ(other.status, 200u);
      EXPECT_EQ(json::parse(other.body).as_object()["data"].as_object()["totalConnections"], 0);
    }
  }
}

}  // namespace
}  // namespace weir::test

// Durability: what a node acknowledged is exactly what a node restarted on the same data
// directory serves — after a clean stop (in-process) and after SIGKILL of the real `weir` binary
// in the middle of a burst of writes — and versionIds keep increasing across the restart.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <boost/json.hpp>

#include <grpcpp/grpcpp.h>

#include "process_support.hpp"
#include "test_support.hpp"
#include "weir/v1/data.grpc.pb.h"

namespace weir::test {
namespace {

namespace json = boost::json;

std::string record_path(const std::string& obj, const std::string& id) {
  return "/v1/spaces/t/objects/" + obj + "/datasets/items/records/" + id;
}

/// The data array of a fresh full-mode subscription.
json::array full_array(std::uint16_t port, const std::string& query, const json::object& args) {
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("snap", query, args, 1, "full");
  auto f = ws.read_json(10s);
  EXPECT_EQ(f["type"], "QueryResult") << json::serialize(f);
  if (!f.contains("payload")) {
    return {};
  }
  auto* d = f["payload"].as_object().if_contains("data");
  if (!d || !d->is_array()) {
    ADD_FAILURE() << "no array data in " << json::serialize(f);
    return {};
  }
  return d->as_array();
}

/// Records by id (fails on a duplicate id).
std::map<std::string, json::object> by_id(const json::array& rows) {
  std::map<std::string, json::object> out;
  for (auto& r : rows) {
    auto& o = r.as_object();
    std::string id{o.at("id").as_string()};
    EXPECT_TRUE(out.emplace(id, o).second) << "duplicate id " << id;
  }
  return out;
}

std::string ver_of(const json::object& doc) {
  return std::string{doc.at("_ver").as_object().at("id").as_string()};
}

std::string write_ok(std::uint16_t port, const std::string& method, const std::string& target,
                     const std::string& body = "") {
  auto r = http(port, method, target, body);
  EXPECT_EQ(r.status, 200u) << method << " " << target << ": " << r.body;
  if (r.status != 200) {
    return {};
  }
  return std::string{r.json().as_object().at("versionId").as_string()};
}

/// The client-side model of what was acknowledged: per unit, the documents by id.
struct model {
  std::map<std::string, std::map<std::string, json::object>> units;  // obj → id → doc
  std::map<std::string, json::object> objects;                       // obj → property doc
  std::map<std::string, std::string> last_vid;                       // unit ("" = objects)

  void put(const std::string& obj, const std::string& id, json::object doc, const std::string& v) {
    doc.erase("id");
    json::object full{{"id", id}};
    for (auto& kv : doc) {
      full[kv.key()] = kv.value();
    }
    full["_ver"] = json::object{{"id", v}};
    units[obj][id] = std::move(full);
  }

  void saw(const std::string& unit, const std::string& v) {
    auto& last = last_vid[unit];
    EXPECT_LT(last, v) << "unit '" << unit << "'";
    last = v;
  }
};

void expect_matches(std::uint16_t port, const model& m, const std::string& when) {
  SCOPED_TRACE(when);
  for (auto& [obj, docs] : m.units) {
    auto got = by_id(full_array(port, "T.Items.All", {{"obj", obj}}));
    EXPECT_EQ(got.size(), docs.size()) << "unit " << obj;
    for (auto& [id, doc] : docs) {
      auto it = got.find(id);
      if (it == got.end()) {
        ADD_FAILURE() << "unit " << obj << ": acknowledged record " << id << " is missing";
        continue;
      }
      EXPECT_EQ(it->second, doc) << "unit " << obj << " record " << id;
    }
  }
  auto objs = by_id(full_array(port, "T.Objects.All", {}));
  EXPECT_EQ(objs.size(), m.objects.size());
  for (auto& [obj, doc] : m.objects) {
    auto it = objs.find(obj);
    if (it == objs.end()) {
      ADD_FAILURE() << "object document " << obj << " is missing";
      continue;
    }
    EXPECT_EQ(without_modified_at(it->second), doc);
  }
}

TEST(Durability, AcknowledgedStateSurvivesStopAndRestart) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  model m;
  std::vector<std::string> objs{"u0", "u1", "u2", "u3"};
  for (std::size_t u = 0; u < objs.size(); ++u) {
    const auto& obj = objs[u];
    for (int i = 0; i < 10; ++i) {
      auto id = "r" + std::to_string(i);
      json::object doc{{"n", i}, {"color", i % 2 ? "red" : "blue"}, {"tag", "v1"}};
      auto v = write_ok(port, "PUT", record_path(obj, id), json::serialize(doc));
      m.put(obj, id, doc, v);
      m.saw(obj, v);
    }
    for (int i : {1, 3, 5}) {
      auto id = "r" + std::to_string(i);
      auto v = write_ok(port, "PATCH", record_path(obj, id),
                        R"({"$set":{"tag":"v2","meta.k":1},"$inc":{"n":10},"$unset":{"color":1}})");
      auto& d = m.units[obj][id];
      d.erase("color");
      d["tag"] = "v2";
      d["meta"] = json::object{{"k", 1}};
      d["n"] = d["n"].as_int64() + 10;
      d["_ver"] = json::object{{"id", v}};
      m.saw(obj, v);
    }
    for (int i : {2, 4}) {
      auto v = write_ok(port, "DELETE", record_path(obj, "r" + std::to_string(i)));
      m.units[obj].erase("r" + std::to_string(i));
      m.saw(obj, v);
    }
    auto v = write_ok(port, "POST", "/v1/spaces/t/objects/" + obj + "/datasets/items/records",
                      R"({"upsert":[{"id":"b0","n":100},{"id":"r6","n":60,"x":true}],)"
                      R"("delete":["r7"]})");
    m.put(obj, "b0", json::object{{"n", 100}}, v);
    m.put(obj, "r6", json::object{{"n", 60}, {"x", true}}, v);
    m.units[obj].erase("r7");
    m.saw(obj, v);
    json::object prop{{"name", "Object " + std::to_string(u)}};
    auto pv = write_ok(port, "PUT", "/v1/spaces/t/objects/" + obj, json::serialize(prop));
    m.objects[obj] =
        json::object{{"id", obj}, {"name", prop["name"]}, {"_ver", json::object{{"id", pv}}}};
    m.saw("", pv);
  }
  // A deleted object stays deleted.
  write_ok(port, "PUT", record_path("gone", "a"), R"({"n":1})");
  auto gv = write_ok(port, "PUT", "/v1/spaces/t/objects/gone", R"({"name":"Gone"})");
  m.saw("", gv);
  auto dv = write_ok(port, "DELETE", "/v1/spaces/t/objects/gone");
  m.saw("", dv);
  m.units["gone"];
  // Refused writes are not part of the acknowledged state.
  EXPECT_EQ(http(port, "PUT", record_path("u0", "bad"), R"({"id":"other"})").status, 400u);

  expect_matches(port, m, "before the restart");
  node->stop();
  node.reset();

  node = start_node(dir.path());
  ASSERT_TRUE(node);
  port = node->http_port();
  expect_matches(port, m, "after the restart");

  // Sequences continue: no versionId is handed out twice.
  for (auto& obj : objs) {
    auto v = write_ok(port, "PUT", record_path(obj, "after"), R"({"n":1})");
    EXPECT_LT(m.last_vid[obj], v) << "unit " << obj;
  }
  auto v = write_ok(port, "PUT", "/v1/spaces/t/objects/u9", R"({"name":"Nine"})");
  EXPECT_LT(m.last_vid[""], v);
  auto gone = write_ok(port, "PUT", record_path("gone", "b"), R"({"n":2})");
  EXPECT_FALSE(gone.empty());
  node->stop();
}

struct acked_write {
  std::string obj;
  std::string id;
  int n = 0;
  std::string vid;
};

TEST(DurabilityProcess, AcknowledgedWritesSurviveSigkill) {
  temp_dir dir;
  auto config = dir.path() + "/weir.yaml";
  auto data = dir.path() + "/data";
  {
    std::ofstream f{config};
    f << "node: { http: \"127.0.0.1:0\", grpc: \"127.0.0.1:0\", dataDir: \"" << data << "\" }\n"
      << default_queries_yaml();
  }
  auto proc = std::make_unique<weir_process>(config, data);
  auto port = proc->port();
  ASSERT_NE(port, 0);

  constexpr int threads = 4;
  const std::vector<std::string> objs{"k0", "k1", "k2"};
  std::mutex mu;
  std::condition_variable cv;
  std::vector<acked_write> acked;
  std::atomic<bool> killed{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 5000; ++i) {
        acked_write w{objs[static_cast<std::size_t>(i) % objs.size()],
                      "w" + std::to_string(t) + "-" + std::to_string(i),
                      i * threads + t,
                      {}};
        try {
          auto r =
              http(port, "PUT", record_path(w.obj, w.id), R"({"n":)" + std::to_string(w.n) + "}");
          if (r.status != 200) {
            return;
          }
          w.vid = std::string{r.json().as_object().at("versionId").as_string()};
        } catch (const std::exception&) {
          return;  // the node is gone
        }
        std::lock_guard lock{mu};
        acked.push_back(std::move(w));
        cv.notify_all();
        if (killed) {
          return;
        }
      }
    });
  }
  {
    std::unique_lock lock{mu};
    bool enough = cv.wait_for(lock, 30s, [&] { return acked.size() >= 150; });
    EXPECT_TRUE(enough) << "only " << acked.size() << " writes acknowledged";
  }
  proc->kill();
  killed = true;
  for (auto& w : writers) {
    w.join();
  }
  auto log = proc->log();
  proc.reset();
  ASSERT_GE(acked.size(), 1u) << log;

  weir_process again{config, data};
  port = again.port();
  ASSERT_NE(port, 0) << again.log();
  std::map<std::string, std::string> max_vid;
  std::size_t present = 0;
  std::map<std::string, std::map<std::string, json::object>> stored;
  for (auto& obj : objs) {
    stored[obj] = by_id(full_array(port, "T.Items.All", {{"obj", obj}}));
    for (auto& [id, doc] : stored[obj]) {
      max_vid[obj] = std::max(max_vid[obj], ver_of(doc));
      // Anything stored is one of the writes that were sent (acknowledged or not).
      auto dash = id.find('-');
      ASSERT_TRUE(id.size() > 1 && id[0] == 'w' && dash != std::string::npos) << id;
      int t = std::stoi(id.substr(1, dash - 1));
      int i = std::stoi(id.substr(dash + 1));
      EXPECT_EQ(doc.at("n"), i * threads + t) << id;
    }
  }
  for (auto& w : acked) {
    auto& docs = stored[w.obj];
    auto it = docs.find(w.id);
    if (it == docs.end()) {
      ADD_FAILURE() << "acknowledged write " << w.obj << "/" << w.id << " (" << w.vid
                    << ") is lost";
      continue;
    }
    ++present;
    EXPECT_EQ(it->second.at("n"), w.n);
    EXPECT_EQ(ver_of(it->second), w.vid) << w.obj << "/" << w.id;
  }
  EXPECT_EQ(present, acked.size());
  // The restarted node continues each unit's sequence past everything it stored.
  for (auto& obj : objs) {
    auto v = write_ok(port, "PUT", record_path(obj, "after"), R"({"n":-1})");
    EXPECT_LT(max_vid[obj], v) << "unit " << obj;
  }
}

}  // namespace
}  // namespace weir::test

namespace weir::test {
namespace {

// A gRPC write is the first use of its unit, so its shard is spawned on a gRPC thread (see
// actors::spawn_anywhere; in a cluster, where peer channels keep gRPC's threads alive, that
// hung SIGTERM: ClusterProcess.ReadyzNeedsAQuorumAndSigtermDrains). The drain is prompt and the
// write survives the restart.
TEST(DurabilityProcess, SigtermAfterGrpcWritesExitsPromptly) {
  temp_dir dir;
  auto config = dir.path() + "/weir.yaml";
  auto data = dir.path() + "/data";
  auto grpc_port = free_port();
  {
    std::ofstream f{config};
    f << "node: { http: \"127.0.0.1:0\", grpc: \"127.0.0.1:" << grpc_port << "\", dataDir: \""
      << data << "\" }\n"
      << default_queries_yaml();
  }
  auto proc = std::make_unique<weir_process>(config, data);
  ASSERT_TRUE(proc->started());
  {
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(grpc_port),
                                       grpc::InsecureChannelCredentials());
    auto stub = weir::v1::Data::NewStub(channel);
    grpc::ClientContext ctx;
    weir::v1::PutRecordRequest req;
    req.set_space("t");
    req.set_object_id("via-grpc");
    req.set_dataset("items");
    req.set_id("a");
    req.set_record_json(R"({"n":1})");
    weir::v1::WriteReply reply;
    auto status = stub->PutRecord(&ctx, req, &reply);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(proc->terminate(15s), 0) << proc->log();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  proc = std::make_unique<weir_process>(config, data);
  auto r = http(proc->port(), "GET", "/api/t/items?obj=via-grpc");
  ASSERT_EQ(r.status, 200u);
  auto doc = r.json();
  EXPECT_EQ(doc.as_object()["data"].as_array().size(), 1u) << r.body;
}

}  // namespace
}  // namespace weir::test

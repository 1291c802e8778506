// Idempotency-Key on the write API and gRPC Data (issue 23): a write the unit acknowledged
// under a key is answered again with its versionId (Idempotency-Replayed: true) instead of
// being applied twice — across a restart, on another member of a PostgreSQL-backed cluster, and
// for retries that arrive while the original is still being committed; the same key on a
// different write is 422, a malformed key 400.
#include <gtest/gtest.h>

#include <grpcpp/grpcpp.h>

#include <future>
#include <set>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "pg_instance.hpp"
#include "store/rocksdb_store.hpp"
#include "test_support.hpp"
#include "weir/v1/data.grpc.pb.h"

namespace weir::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string rec(const std::string& obj, const std::string& id) {
  return "/v1/spaces/t/objects/" + obj + "/datasets/items/records/" + id;
}

http_response inc(std::uint16_t port, const std::string& key) {
  return http(port, "PATCH", rec("o1", "c"), R"({"$inc":{"n":1}})", {{"Idempotency-Key", key}});
}

long long n_of(std::uint16_t port) {
  auto r = http(port, "POST", "/v1/spaces/t/query", R"({"objectId":"o1","dataset":"items"})");
  auto body = r.json();
  for (const auto& x : body.at("records").as_array()) {
    if (x.at("id") == "c") {
      return x.at("n").to_number<long long>();
    }
  }
  return -1;
}

std::string version_of(const http_response& r) {
  return std::string{r.json().at("versionId").as_string()};
}

struct Idempotency : ::testing::Test {
  temp_dir dir;
};

TEST_F(Idempotency, ARetryUnderTheSameKeyIsAnsweredAgainAndAppliedOnce) {
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "c", R"({"n":0})");
  auto first = inc(port, "inc-1");
  ASSERT_EQ(first.status, 200u) << first.body;
  EXPECT_EQ(first.headers.count("idempotency-replayed"), 0u);
  auto again = inc(port, "inc-1");
  ASSERT_EQ(again.status, 200u) << again.body;
  EXPECT_EQ(version_of(again), version_of(first));
  EXPECT_EQ(again.headers["idempotency-replayed"], "true");
  EXPECT_EQ(n_of(port), 1);
  // Another key is another write.
  ASSERT_EQ(inc(port, "inc-2").status, 200u);
  EXPECT_EQ(n_of(port), 2);
  // The same key on a different write: refused, nothing applied.
  auto reused =
      http(port, "PATCH", rec("o1", "c"), R"({"$inc":{"n":5}})", {{"Idempotency-Key", "inc-1"}});
  EXPECT_EQ(reused.status, 422u) << reused.body;
  EXPECT_NE(reused.body.find("request.idempotency_key_reused"), std::string::npos);
  EXPECT_EQ(n_of(port), 2);
  // Malformed keys.
  for (std::string bad :
       {std::string{"has space"}, std::string(256, 'k'), std::string{"caf\xc3\xa9"}}) {
    auto r = http(port, "PUT", rec("o1", "x"), R"({"n":1})", {{"Idempotency-Key", bad}});
    EXPECT_EQ(r.status, 400u) << r.body;
    EXPECT_NE(r.body.find("request.invalid_idempotency_key"), std::string::npos);
  }
  // Every kind of write takes a key: a batch and a delete replay too.
  auto b1 = http(port, "POST", "/v1/spaces/t/objects/o1/datasets/items/records",
                 R"({"upsert":[{"id":"b","n":1}]})", {{"Idempotency-Key", "batch-1"}});
  auto b2 = http(port, "POST", "/v1/spaces/t/objects/o1/datasets/items/records",
                 R"({"upsert":[{"id":"b","n":1}]})", {{"Idempotency-Key", "batch-1"}});
  ASSERT_EQ(b1.status, 200u);
  EXPECT_EQ(version_of(b2), version_of(b1));
  auto d1 = http(port, "DELETE", rec("o1", "b"), "", {{"Idempotency-Key", "del-1"}});
  auto d2 = http(port, "DELETE", rec("o1", "b"), "", {{"Idempotency-Key", "del-1"}});
  ASSERT_EQ(d1.status, 200u) << d1.body;
  EXPECT_EQ(d2.status, 200u) << d2.body;  // without the key, the second would be 404
  EXPECT_EQ(version_of(d2), version_of(d1));
}

TEST_F(Idempotency, AnObjectDeleteRetriedUnderItsKeyIsAnsweredAsTheFirstTime) {
  // Two units (the object's datasets, then its property document): the key goes to both, so a
  // retry answers as the original did even when nothing is left to delete (else 404).
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  for (bool with_data : {false, true}) {
    auto obj = with_data ? std::string{"full"} : std::string{"docOnly"};
    ASSERT_EQ(http(port, "PUT", "/v1/spaces/t/objects/" + obj, R"({"name":"x"})").status, 200u);
    if (with_data) {
      put_record(port, "t", obj, "items", "r", R"({"n":1})");
    }
    auto key = "delete-" + obj;
    auto first =
        http(port, "DELETE", "/v1/spaces/t/objects/" + obj, "", {{"Idempotency-Key", key}});
    ASSERT_EQ(first.status, 200u) << first.body;
    auto again =
        http(port, "DELETE", "/v1/spaces/t/objects/" + obj, "", {{"Idempotency-Key", key}});
    ASSERT_EQ(again.status, 200u) << again.body;
    EXPECT_EQ(version_of(again), version_of(first)) << obj;
    EXPECT_EQ(again.headers["idempotency-replayed"], "true");
    EXPECT_EQ(http(port, "DELETE", "/v1/spaces/t/objects/" + obj).status, 404u);
  }
}

TEST_F(Idempotency, RetriesThatArriveWhileTheOriginalCommitsWaitForItsOutcome) {
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "c", R"({"n":0})");
  std::vector<std::future<http_response>> all;
  for (int i = 0; i < 8; ++i) {
    all.push_back(std::async(std::launch::async, [&] { return inc(port, "same"); }));
  }
  std::set<std::string> versions;
  for (auto& f : all) {
    auto r = f.get();
    ASSERT_EQ(r.status, 200u) << r.body;
    versions.insert(version_of(r));
  }
  EXPECT_EQ(versions.size(), 1u);
  EXPECT_EQ(n_of(port), 1);
}

TEST_F(Idempotency, KeysSurviveARestartOfTheEmbeddedStore) {
  std::string first;
  {
    auto node = start_node(dir.path());
    ASSERT_TRUE(node);
    put_record(node->http_port(), "t", "o1", "items", "c", R"({"n":0})");
    auto r = inc(node->http_port(), "before-restart");
    ASSERT_EQ(r.status, 200u);
    first = version_of(r);
  }
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto again = inc(node->http_port(), "before-restart");
  ASSERT_EQ(again.status, 200u) << again.body;
  EXPECT_EQ(version_of(again), first);
  EXPECT_EQ(n_of(node->http_port()), 1);
}

/// 40 writes to one unit, each under a key of its own, on a node that remembers 8 per unit.
void forty_keyed_writes(std::uint16_t port) {
  for (int i = 0; i < 40; ++i) {
    auto r = http(port, "PUT", rec("o1", "r" + std::to_string(i)), R"({"n":1})",
                  {{"Idempotency-Key", "k" + std::to_string(i)}});
    ASSERT_EQ(r.status, 200u) << r.body;
  }
}

const char* eight_keys = "store:\n  maxIdempotencyKeysPerUnit: 8\n";

TEST_F(Idempotency, TheEmbeddedStoreKeepsNoMoreKeysThanTheUnitRemembers) {
  // Before, a unit that stayed loaded kept every key it was given on disk until its next load
  // (which read them all, then dropped the expired ones): months of keys at a steady rate.
  {
    auto node = start_node(dir.path(), eight_keys);
    ASSERT_TRUE(node);
    forty_keyed_writes(node->http_port());
  }
  auto st = store::rocksdb_store::open({dir.path(), 16, true});
  ASSERT_TRUE(st) << st.error().message;
  auto unit = (*st)->load_unit({"t", "o1"}, [](auto, auto, auto&&) {});
  ASSERT_TRUE(unit) << unit.error().message;
  // The 8 remembered, and the one the last write's answer made it forget (its deletion goes
  // with the unit's next write).
  EXPECT_LE(unit->keys.size(), 9u);
  std::set<std::string> kept;
  for (const auto& k : unit->keys) {
    kept.insert(k.key);
  }
  for (int i = 32; i < 40; ++i) {
    EXPECT_TRUE(kept.count("k" + std::to_string(i))) << "k" << i;
  }
  (*st)->stop();
}

TEST_F(Idempotency, PostgresKeepsNoMoreKeysThanTheUnitRemembers) {
  pg_instance pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  auto yaml = pg.store_yaml();  // "store: { backend: postgres, … }"
  yaml.insert(yaml.find('{') + 1, " maxIdempotencyKeysPerUnit: 8,");
  auto node = start_node(dir.path(), yaml);
  ASSERT_TRUE(node);
  forty_keyed_writes(node->http_port());
  EXPECT_LE(std::stoi(pg.sql("SELECT count(*) FROM weir_idempotency_keys")), 9);
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_idempotency_keys WHERE key = 'k39'"), "1");
  // A key forgotten is applied again, as documented; one remembered is replayed.
  auto replay =
      http(node->http_port(), "PUT", rec("o1", "r39"), R"({"n":1})", {{"Idempotency-Key", "k39"}});
  EXPECT_EQ(replay.headers["idempotency-replayed"], "true");
}

TEST_F(Idempotency, OnPostgresAnotherNodeOnTheSameDatabaseAnswersTheRetry) {
  // A retry after a failover reaches a node that loaded the unit from the database.
  pg_instance pg;
  ASSERT_TRUE(pg.ok()) << pg.error();
  std::string first;
  {
    temp_dir a;
    auto node = start_node(a.path(), pg.store_yaml());
    ASSERT_TRUE(node);
    put_record(node->http_port(), "t", "o1", "items", "c", R"({"n":0})");
    auto r = inc(node->http_port(), "failover");
    ASSERT_EQ(r.status, 200u) << r.body;
    first = version_of(r);
  }
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_idempotency_keys WHERE key = 'failover'"), "1");
  temp_dir b;
  auto node = start_node(b.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto again = inc(node->http_port(), "failover");
  ASSERT_EQ(again.status, 200u) << again.body;
  EXPECT_EQ(version_of(again), first);
  EXPECT_EQ(again.headers["idempotency-replayed"], "true");
  EXPECT_EQ(pg.sql("SELECT doc->>'n' FROM weir_records WHERE id = 'c'"), "1");
}

TEST_F(Idempotency, GrpcDataCarriesTheKey) {
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(node->grpc_port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = weir::v1::Data::NewStub(channel);
  put_record(node->http_port(), "t", "o1", "items", "c", R"({"n":0})");
  auto call = [&](const std::string& update, weir::v1::WriteReply& reply) {
    weir::v1::PatchRecordRequest req;
    req.set_space("t");
    req.set_object_id("o1");
    req.set_dataset("items");
    req.set_id("c");
    req.set_update_json(update);
    req.set_idempotency_key("grpc-1");
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    return stub->PatchRecord(&ctx, req, &reply);
  };
  weir::v1::WriteReply r1, r2, r3;
  ASSERT_TRUE(call(R"({"$inc":{"n":1}})", r1).ok());
  EXPECT_FALSE(r1.replayed());
  ASSERT_TRUE(call(R"({"$inc":{"n":1}})", r2).ok());
  EXPECT_TRUE(r2.replayed());
  EXPECT_EQ(r2.version_id(), r1.version_id());
  auto s = call(R"({"$inc":{"n":2}})", r3);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("request.idempotency_key_reused"), std::string::npos);
  EXPECT_EQ(n_of(node->http_port()), 1);
}

}  // namespace
}  // namespace weir::test

// `POST /v1/spaces/{space}/batch`: one request carrying a batch for each of several datasets of
// one object or many. Each is applied on its unit as `POST …/records` would apply it, side by
// side (they share group commits); one answer lists every write's outcome in request order. A
// bad write refuses the whole request before any unit takes any of it. An Idempotency-Key
// replays every write; in a cluster, writes for units other members own are forwarded.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "cluster_support.hpp"
#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

using CrossUnitBatch = single_node;

constexpr const char* batch_path = "/v1/spaces/t/batch";

/// The records of (object, dataset), by id, from the one-shot windowed query.
std::map<std::string, json::object> records(std::uint16_t port, const std::string& object,
                                            const std::string& dataset) {
  json::object q{{"objectId", object}, {"dataset", dataset}, {"limit", 1000}, {"sort", {"id"}}};
  auto r = http(port, "POST", "/v1/spaces/t/query", json::serialize(q));
  EXPECT_EQ(r.status, 200u) << r.body;
  std::map<std::string, json::object> out;
  if (r.status == 200) {
    auto body = r.json();
    for (auto& x : body.at("records").as_array()) {
      out[std::string{x.at("id").as_string()}] = x.as_object();
    }
  }
  return out;
}

/// weir_commit_batch_writes_count on /metrics: how many group commits the store ran.
double commit_groups(std::uint16_t port) {
  auto r = http(port, "GET", "/metrics", "");
  std::string key = "\nweir_commit_batch_writes_count ";
  auto at = r.body.find(key);
  EXPECT_NE(at, std::string::npos) << r.body;
  return at == std::string::npos ? -1 : std::stod(r.body.substr(at + key.size()));
}

json::object error_of(const http_response& r) {
  return r.json().as_object().at("error").as_object();
}

TEST_F(CrossUnitBatch, AppliesEachWriteOnItsUnitAndAnswersInRequestOrder) {
  put_record(port, "t", "o2", "items", "gone", R"({"n":0})");
  auto r = http(port, "POST", batch_path, R"({"writes":[
      {"objectId":"o1","dataset":"items","upsert":[{"id":"a","n":1},{"id":"b","n":2}]},
      {"objectId":"o2","dataset":"items","upsert":[{"id":"c","n":3}],"delete":["gone","absent"]},
      {"objectId":"o1","dataset":"notes","upsert":[{"id":"d","text":"x"}]}]})");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.headers["content-type"], "application/json");
  auto answer = r.json().as_object();
  EXPECT_EQ(answer.at("failed"), 0);
  auto& writes = answer.at("writes").as_array();
  ASSERT_EQ(writes.size(), 3u);
  for (auto& w : writes) {
    EXPECT_EQ(w.at("status"), 200) << w;
    EXPECT_FALSE(w.as_object().contains("replayed"));
  }
  auto o1 = records(port, "o1", "items");
  ASSERT_EQ(o1.size(), 2u);
  EXPECT_EQ(o1["a"].at("n"), 1);
  // Every record a write touched carries that write's versionId.
  EXPECT_EQ(o1["a"].at("_ver").at("id"), writes[0].at("versionId"));
  EXPECT_EQ(o1["b"].at("_ver").at("id"), writes[0].at("versionId"));
  auto o2 = records(port, "o2", "items");
  ASSERT_EQ(o2.size(), 1u);
  EXPECT_EQ(o2["c"].at("_ver").at("id"), writes[1].at("versionId"));
  auto notes = records(port, "o1", "notes");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes["d"].at("_ver").at("id"), writes[2].at("versionId"));
}

TEST_F(CrossUnitBatch, WritesToManyUnitsShareGroupCommits) {
  constexpr int units = 40;
  // Each unit loaded first, so that the batch measures only its writes.
  for (int i = 0; i < units; ++i) {
    put_record(port, "t", "g" + std::to_string(i), "items", "warm", R"({"n":0})");
  }
  json::array writes;
  for (int i = 0; i < units; ++i) {
    writes.push_back(json::object{{"objectId", "g" + std::to_string(i)},
                                  {"dataset", "items"},
                                  {"upsert", json::array{json::object{{"id", "x"}, {"n", i}}}}});
  }
  auto before = commit_groups(port);
  auto r = http(port, "POST", batch_path, json::serialize(json::object{{"writes", writes}}));
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.json().at("failed"), 0);
  auto groups = commit_groups(port) - before;
  std::printf("%d writes to %d units in one batch: %g group commits\n", units, units, groups);
  // One request after another would be one group commit per write (40); side by side, the
  // writes queued behind the first fsync go down together.
  EXPECT_GE(groups, 1);
  EXPECT_LE(groups, units / 2) << "the writes did not share group commits";
  for (int i = 0; i < units; ++i) {
    auto got = records(port, "g" + std::to_string(i), "items");
    ASSERT_TRUE(got.count("x")) << i;
    EXPECT_EQ(got["x"].at("n"), i);
  }
}

TEST_F(CrossUnitBatch, ABadWriteRefusesTheWholeRequestBeforeAnyUnitTakesIt) {
  put_record(port, "t", "seed", "items", "s", R"({"n":0})");  // the space exists
  struct bad_case {
    std::string body;
    std::string code;
    int write;  // details.write, or -1 when the request itself is wrong
  };
  const std::string good = R"({"objectId":"o1","dataset":"items","upsert":[{"id":"a","n":1}]})";
  std::vector<bad_case> cases = {
      {R"([1])", "request.not_object", -1},
      {R"({"writes":[],"x":1})", "request.unknown_field", -1},
      {R"({})", "request.missing_field", -1},
      {R"({"writes":{}})", "request.invalid_field", -1},
      {R"({"writes":[]})", "request.invalid_field", -1},
      {R"({"writes":[)" + good + R"(,7]})", "request.not_object", 1},
      {R"({"writes":[)" + good + R"(,{"objectId":"o2","dataset":"items","upsert":[{"n":1}]}]})",
       "request.missing_field", 1},
      {R"({"writes":[)" + good + R"(,{"objectId":"o2","dataset":"items"}]})",
       "request.missing_field", 1},
      {R"({"writes":[)" + good + R"(,{"dataset":"items","upsert":[]}]})", "request.missing_field",
       1},
      {R"({"writes":[)" + good + R"(,{"objectId":5,"dataset":"items","upsert":[]}]})",
       "request.invalid_field", 1},
      {R"({"writes":[)" + good + R"(,{"objectId":"","dataset":"items","upsert":[]}]})",
       "request.invalid_field", 1},
      {R"({"writes":[)" + good + R"(,{"objectId":"o2","dataset":"items","upsert":[],"x":1}]})",
       "request.unknown_field", 1},
      {R"({"writes":[)" + good +
           R"(,{"objectId":"o2","dataset":"items","upsert":[{"id":"z"},{"id":"z"}]}]})",
       "batch.duplicate_id", 1},
      {R"({"writes":[)" + good + R"(,{"objectId":"o2","dataset":"items","delete":["z","z"]}]})",
       "batch.duplicate_id", 1},
      {R"({"writes":[)" + good +
           R"(,{"objectId":"o2","dataset":"items","upsert":[{"id":"z"}],"delete":["z"]}]})",
       "batch.conflict", 1},
      {R"({"writes":[)" + good + "," + good + "]}", "batch.duplicate_target", 1},
      {R"({"writes":[)" + good +
           R"(,{"objectId":"o2","dataset":"items","upsert":[{"id":"z","n":1e400}]}]})",
       "record.invalid_number", -1},
      {R"({"writes":[)" + good +
           R"(,{"objectId":"o2","dataset":"items","upsert":[{"id":"z","_ver":1,"a":)" +
           std::string(70, '[') + std::string(70, ']') + "}]}]}",
       "record.too_deep", -1},
  };
  for (const auto& c : cases) {
    auto r = http(port, "POST", batch_path, c.body);
    EXPECT_EQ(r.status, 400u) << c.body << " → " << r.body;
    if (r.status != 400) {
      continue;
    }
    auto e = error_of(r);
    EXPECT_EQ(e.at("code").as_string(), c.code) << c.body << " → " << r.body;
    if (c.write >= 0) {
      ASSERT_TRUE(e.contains("details")) << r.body;
      EXPECT_EQ(e.at("details").at("write"), c.write) << c.body << " → " << r.body;
    }
  }
  // The good first write of each was not applied.
  EXPECT_TRUE(records(port, "o1", "items").empty());
  EXPECT_TRUE(records(port, "o2", "items").empty());

  std::string many = R"({"writes":[)";
  for (int i = 0; i <= 1000; ++i) {
    many += (i ? "," : "") + std::string{R"({"objectId":"m)"} + std::to_string(i) +
            R"(","dataset":"items","delete":["x"]})";
  }
  many += "]}";
  auto r = http(port, "POST", batch_path, many);
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_EQ(error_of(r).at("code"), "batch.too_many_writes");
  EXPECT_EQ(error_of(r).at("details").at("max"), 1000);

  r = http(port, "GET", batch_path);
  EXPECT_EQ(r.status, 405u);
  EXPECT_EQ(r.headers["allow"], "POST");
  EXPECT_EQ(error_of(r).at("code"), "method.not_allowed");
  r = http(port, "POST", "/v1/spaces/t/batch/x", "{}");
  EXPECT_EQ(r.status, 404u);
  r = http(port, "POST", batch_path, "{not json");
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(error_of(r).at("code"), "request.bad_json");
}

TEST(CrossUnitBatchLimits, RecordsTheirOwnerWouldRefuseOnceStampedRefuseTheWholeRequest) {
  // The owner measures a record with its `_ver` stamp; those checks are made before any unit
  // takes any write, so no write of a batch is applied when one would be refused there.
  temp_dir dir;
  auto node = start_node(dir.path(), "records:\n  maxBytes: 1024\n  maxMembers: 16\n");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "seed", "items", "s", R"({"n":0})");
  const std::string good = R"({"objectId":"o1","dataset":"items","upsert":[{"id":"a","n":1}]})";
  // 1014 bytes as sent: under 1024, over it with the stamp.
  const std::string near = R"({"id":"b","p":")" + std::string(997, 'x') + R"("})";
  ASSERT_EQ(near.size(), 1014u);
  auto r = http(port, "POST", batch_path,
                R"({"writes":[)" + good + R"(,{"objectId":"o2","dataset":"items","upsert":[)" +
                    near + "]}]}");
  EXPECT_EQ(r.status, 413u) << r.body;
  EXPECT_EQ(error_of(r).at("code"), "record.too_large");
  EXPECT_EQ(error_of(r).at("details").at("write"), 1);
  // Sixteen members, seventeen with the stamp's: one over.
  std::string wide = R"({"id":"c")";
  for (int i = 0; i < 15; ++i) {
    wide += ",\"m" + std::to_string(i) + "\":" + std::to_string(i);
  }
  wide += "}";
  r = http(port, "POST", batch_path,
           R"({"writes":[)" + good + R"(,{"objectId":"o2","dataset":"items","upsert":[)" + wide +
               "]}]}");
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_EQ(error_of(r).at("code"), "record.too_many_members");
  EXPECT_TRUE(records(port, "o1", "items").empty());
  EXPECT_TRUE(records(port, "o2", "items").empty());
  // The same records alone: the single batch route refuses them the same way.
  auto single = http(port, "POST", "/v1/spaces/t/objects/o2/datasets/items/records",
                     R"({"upsert":[)" + near + "]}");
  EXPECT_EQ(single.status, 413u) << single.body;
}

TEST_F(CrossUnitBatch, AnIdempotencyKeyReplaysEveryWriteOnce) {
  const std::string body = R"({"writes":[
      {"objectId":"k1","dataset":"items","upsert":[{"id":"a","n":1}]},
      {"objectId":"k2","dataset":"items","upsert":[{"id":"b","n":2}]}]})";
  auto first = http(port, "POST", batch_path, body, {{"Idempotency-Key", "batch-1"}});
  ASSERT_EQ(first.status, 200u) << first.body;
  EXPECT_FALSE(first.headers.count("idempotency-replayed"));
  // Changed since: a replay must not write it back.
  auto later = put_record(port, "t", "k1", "items", "a", R"({"n":10})");
  auto again = http(port, "POST", batch_path, body, {{"Idempotency-Key", "batch-1"}});
  ASSERT_EQ(again.status, 200u) << again.body;
  EXPECT_EQ(again.headers["idempotency-replayed"], "true");
  auto w1 = first.json().at("writes").as_array();  // copies: json() is a temporary
  auto w2 = again.json().at("writes").as_array();
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(w2[i].at("versionId"), w1[i].at("versionId"));
    EXPECT_EQ(w2[i].at("replayed"), true);
  }
  EXPECT_EQ(records(port, "k1", "items")["a"].at("n"), 10);
  // The same writes in another order, and one of them alone in a batch, under the same key:
  // each is remembered by its target, not its place, so nothing is applied again.
  auto swapped = http(port, "POST", batch_path, R"({"writes":[
      {"objectId":"k2","dataset":"items","upsert":[{"id":"b","n":2}]},
      {"objectId":"k1","dataset":"items","upsert":[{"id":"a","n":1}]}]})",
                      {{"Idempotency-Key", "batch-1"}});
  ASSERT_EQ(swapped.status, 200u) << swapped.body;
  EXPECT_EQ(swapped.headers["idempotency-replayed"], "true");
  EXPECT_EQ(swapped.json().at("writes").at(0).at("versionId"), w1[1].at("versionId"));
  EXPECT_EQ(swapped.json().at("writes").at(1).at("versionId"), w1[0].at("versionId"));
  auto alone = http(port, "POST", batch_path, R"({"writes":[
      {"objectId":"k1","dataset":"items","upsert":[{"id":"a","n":1}]}]})",
                    {{"Idempotency-Key", "batch-1"}});
  ASSERT_EQ(alone.status, 200u) << alone.body;
  EXPECT_EQ(alone.json().at("writes").at(0).at("replayed"), true);
  EXPECT_EQ(records(port, "k1", "items")["a"].at("n"), 10);
  // The same key on another batch: each write says so, nothing applied.
  auto other = http(port, "POST", batch_path,
                    R"({"writes":[
      {"objectId":"k1","dataset":"items","upsert":[{"id":"a","n":99}]},
      {"objectId":"k2","dataset":"items","upsert":[{"id":"b","n":2}]}]})",
                    {{"Idempotency-Key", "batch-1"}});
  ASSERT_EQ(other.status, 200u) << other.body;
  auto w3 = other.json().as_object();
  EXPECT_EQ(w3.at("failed"), 1);
  EXPECT_EQ(w3.at("writes").at(0).at("status"), 422);
  EXPECT_EQ(w3.at("writes").at(0).at("error").at("code"), "request.idempotency_key_reused");
  EXPECT_EQ(w3.at("writes").at(1).at("replayed"), true);
  EXPECT_FALSE(other.headers.count("idempotency-replayed"));
  EXPECT_EQ(records(port, "k1", "items")["a"].at("n"), 10);
  // A malformed key refuses the request.
  auto bad = http(port, "POST", batch_path, body, {{"Idempotency-Key", ""}});
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(error_of(bad).at("code"), "request.invalid_idempotency_key");
}

TEST_F(CrossUnitBatch, PipelinedBehindWritesItIsAnsweredInItsPlace) {
  raw_connection c{port};
  ASSERT_TRUE(c.connected());
  header_list h{{"Content-Type", "application/json"}};
  std::string burst =
      build_request(port, "PUT", "/v1/spaces/t/objects/p/datasets/items/records/a", h,
                    R"({"n":1})") +
      build_request(port, "POST", batch_path, h,
                    R"({"writes":[{"objectId":"p","dataset":"items","upsert":[{"id":"a","n":2}]},
                                 {"objectId":"q","dataset":"items","upsert":[{"id":"b","n":3}]}]})") +
      build_request(port, "PUT", "/v1/spaces/t/objects/p/datasets/items/records/a", h,
                    R"({"n":4})");
  c.send_all(burst);
  auto first = read_response(c, false);
  auto batch = read_response(c, false);
  auto last = read_response(c, false);
  ASSERT_EQ(first.status, 200u);
  ASSERT_EQ(batch.status, 200u) << batch.body;
  ASSERT_EQ(last.status, 200u);
  auto v1 = json::parse(first.body).at("versionId").as_string();
  auto vb = json::parse(batch.body).at("writes").at(0).at("versionId").as_string();
  auto v3 = json::parse(last.body).at("versionId").as_string();
  EXPECT_LT(v1, vb);
  EXPECT_LT(vb, v3);
  EXPECT_EQ(records(port, "p", "items")["a"].at("n"), 4);
  EXPECT_EQ(records(port, "q", "items")["b"].at("n"), 3);
}

TEST(CrossUnitBatchCluster, WritesForOtherMembersUnitsAreForwarded) {
  cluster3 cluster;
  json::array writes;
  std::vector<std::string> objects;
  for (int owner = 0; owner < cluster3::n; ++owner) {
    for (int k = 0; k < 2; ++k) {
      auto object = cluster.object_owned_by(owner, "c" + std::to_string(k) + "-");
      objects.push_back(object);
      writes.push_back(
          json::object{{"objectId", object},
                       {"dataset", "items"},
                       {"upsert", json::array{json::object{{"id", "r"}, {"n", owner}}}}});
    }
  }
  // The longest key a caller may send: each write's derived key is still valid where it is
  // forwarded to.
  auto r =
      http(cluster.port(0), "POST", batch_path, json::serialize(json::object{{"writes", writes}}),
           {{"Idempotency-Key", std::string(255, 'k')}});
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.json().at("failed"), 0) << r.body;
  // Every member reads every write (through the owner).
  for (int i = 0; i < cluster3::n; ++i) {
    for (std::size_t w = 0; w < objects.size(); ++w) {
      auto got = records(cluster.port(i), objects[w], "items");
      ASSERT_TRUE(got.count("r")) << objects[w] << " on " << cluster.id(i);
      EXPECT_EQ(got["r"].at("_ver").at("id"), r.json().at("writes").at(w).at("versionId"));
    }
  }
}

}  // namespace
}  // namespace weir::test

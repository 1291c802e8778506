// The HTTP write API (/v1/spaces/...) end to end: record PUT / PATCH / DELETE, atomic batches,
// object property documents, the error envelope and status of every refusal, and that refused
// input never reaches a subscriber or the stored state.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "actors/runtime.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

std::string record_path(const std::string& obj, const std::string& id) {
  return "/v1/spaces/t/objects/" + obj + "/datasets/items/records/" + id;
}

std::string batch_path(const std::string& obj) {
  return "/v1/spaces/t/objects/" + obj + "/datasets/items/records";
}

std::string object_path(const std::string& obj) {
  return "/v1/spaces/t/objects/" + obj;
}

/// A 200 write answer: JSON {"versionId": "<non-empty>"} and nothing else; returns the id.
std::string expect_ok(const http_response& r) {
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.headers.count("content-type") ? r.headers.at("content-type") : "",
            "application/json");
  if (r.status != 200) {
    return {};
  }
  auto v = r.json();
  EXPECT_TRUE(v.is_object()) << r.body;
  if (!v.is_object()) {
    return {};
  }
  auto& o = v.as_object();
  EXPECT_EQ(o.size(), 1u) << r.body;
  auto* vid = o.if_contains("versionId");
  EXPECT_TRUE(vid && vid->is_string() && !vid->as_string().empty()) << r.body;
  return vid && vid->is_string() ? std::string{vid->as_string()} : std::string{};
}

/// An error answer: the status, Content-Type application/json, and the envelope
/// {"error":{"code","message"[,"details"]}} with the given code. Returns the error object.
json::object expect_error(const http_response& r, unsigned status, const std::string& code) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.headers.count("content-type") ? r.headers.at("content-type") : "",
            "application/json");
  json::value v;
  try {
    v = r.json();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "error body is not JSON: " << r.body;
    return {};
  }
  if (!v.is_object() || !v.as_object().contains("error") ||
      !v.as_object().at("error").is_object()) {
    ADD_FAILURE() << "no error object: " << r.body;
    return {};
  }
  EXPECT_EQ(v.as_object().size(), 1u) << r.body;
  auto err = v.as_object().at("error").as_object();
  EXPECT_EQ(err["code"], json::value(code)) << r.body;
  EXPECT_TRUE(err["message"].is_string() && !err["message"].as_string().empty()) << r.body;
  for (auto& kv : err) {
    EXPECT_TRUE(kv.key() == "code" || kv.key() == "message" || kv.key() == "details")
        << "unexpected member " << kv.key() << " in " << r.body;
  }
  if (err.contains("details")) {
    EXPECT_TRUE(err.at("details").is_object()) << r.body;
  }
  return err;
}

/// The data of a fresh full-mode subscription (a new connection each time).
json::value full_data(std::uint16_t port, const std::string& query, const json::object& args) {
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("snap", query, args, 1, "full");
  auto f = ws.read_json();
  EXPECT_EQ(f["type"], "QueryResult");
  if (!f.contains("payload") || !f["payload"].is_object()) {
    ADD_FAILURE() << "QueryResult without a payload";
    return nullptr;
  }
  auto& p = f["payload"].as_object();
  EXPECT_FALSE(p.contains("changeSet"));
  auto* d = p.if_contains("data");
  return d ? *d : json::value(nullptr);
}

json::array items(std::uint16_t port, const std::string& obj) {
  auto d = full_data(port, "T.Items.All", {{"obj", obj}});
  if (!d.is_array()) {
    ADD_FAILURE() << "T.Items.All data is not an array: " << json::serialize(d);
    return {};
  }
  return d.as_array();
}

json::object parse_object(const std::string& text) {
  return json::parse(text).as_object();
}

/// Reads the next QueryResult of `ws` and returns its changeSet (fails when there is none).
json::object next_change_set(ws_client& ws) {
  auto f = ws.read_json();
  EXPECT_EQ(f["type"], "QueryResult");
  if (!f.contains("payload") || !f["payload"].as_object().contains("changeSet")) {
    ADD_FAILURE() << "no changeSet in " << json::serialize(f);
    return {};
  }
  return f["payload"].as_object()["changeSet"].as_object();
}

/// A delta-mode subscription to T.Items.All on `obj`, past its snapshot.
void subscribe_delta(ws_client& ws, const std::string& obj) {
  ws.expect_connected();
  ws.subscribe("d", "T.Items.All", {{"obj", obj}}, 1, "delta");
  auto snap = ws.read_json();
  ASSERT_EQ(snap["type"], "QueryResult");
}

class WriteApi : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = start_node(dir_.path());
    ASSERT_TRUE(node_);
    port_ = node_->http_port();
  }

  temp_dir dir_;
  std::unique_ptr<app::node> node_;
  std::uint16_t port_ = 0;
};

TEST_F(WriteApi, PutRecordTakesIdFromPathAndStampsServerVersion) {
  auto v1 = expect_ok(
      http(port_, "PUT", record_path("o1", "a"), R"({"n":1,"_ver":{"id":"zzzzzz"},"c":"x"})"));
  auto v2 = expect_ok(http(port_, "PUT", record_path("o1", "b"), R"({"id":"b","n":2})"));
  ASSERT_FALSE(v1.empty());
  EXPECT_LT(v1, v2);
  auto data = items(port_, "o1");
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0],
            json::value(parse_object(R"({"id":"a","n":1,"c":"x","_ver":{"id":")" + v1 + R"("}})")));
  EXPECT_EQ(data[1],
            json::value(parse_object(R"({"id":"b","n":2,"_ver":{"id":")" + v2 + R"("}})")));
  // The stored form has "id" first and "_ver" last (the client's _ver was dropped, not kept).
  auto& a = data[0].as_object();
  EXPECT_EQ(a.begin()->key(), "id");
  EXPECT_EQ((a.end() - 1)->key(), "_ver");

  // A PUT replaces the whole document.
  auto v3 = expect_ok(http(port_, "PUT", record_path("o1", "a"), R"({"n":7})"));
  EXPECT_LT(v2, v3);
  data = items(port_, "o1");
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[1],
            json::value(parse_object(R"({"id":"a","n":7,"_ver":{"id":")" + v3 + R"("}})")));
}

TEST_F(WriteApi, PutRecordWithMismatchedBodyIdIsRefused) {
  auto r = http(port_, "PUT", record_path("o1", "a"), R"({"id":"b","n":1})");
  auto err = expect_error(r, 400, "record.id_mismatch");
  EXPECT_EQ(err["details"], json::value(parse_object(R"({"id":"b","pathId":"a"})")));
  auto r2 = http(port_, "PUT", record_path("o1", "a"), R"({"id":5,"n":1})");
  expect_error(r2, 400, "request.invalid_field");
  EXPECT_TRUE(items(port_, "o1").empty());
}

TEST_F(WriteApi, PatchSetsUnsetsAndIncrements) {
  auto v1 = expect_ok(http(port_, "PUT", record_path("o1", "a"),
                           R"({"n":1,"color":"red","stats":{"x":1},"keep":true})"));
  auto v2 = expect_ok(http(port_, "PATCH", record_path("o1", "a"),
                           R"({"$set":{"deep.er.v":5,"color":"blue"},"$unset":{"stats":true},)"
                           R"("$inc":{"n":2,"m":1.5}})"));
  EXPECT_LT(v1, v2);
  auto data = items(port_, "o1");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0], json::value(parse_object(
                         R"({"id":"a","n":3,"color":"blue","keep":true,"deep":{"er":{"v":5}},)"
                         R"("m":1.5,"_ver":{"id":")" +
                         v2 + R"("}})")));
  EXPECT_TRUE(data[0].as_object().at("n").is_int64());

  // $set into an existing object keeps its siblings; $unset of a missing path is a no-op.
  auto v3 = expect_ok(http(port_, "PATCH", record_path("o1", "a"),
                           R"({"$set":{"deep.er.w":"x"},"$unset":{"nothing.here":1}})"));
  EXPECT_LT(v2, v3);
  data = items(port_, "o1");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].as_object().at("deep"), json::value(parse_object(R"({"er":{"v":5,"w":"x"}})")));
  EXPECT_EQ(data[0].as_object().at("_ver"), json::value(parse_object(R"({"id":")" + v3 + R"("})")));

  // $inc of a string is a type mismatch and changes nothing.
  auto r = http(port_, "PATCH", record_path("o1", "a"), R"({"$inc":{"color":1}})");
  expect_error(r, 400, "update.type_mismatch");
  EXPECT_EQ(items(port_, "o1")[0].as_object().at("_ver").as_object().at("id"), json::value(v3));
}

TEST_F(WriteApi, PatchRefusals) {
  auto v1 = expect_ok(http(port_, "PUT", record_path("o1", "a"), R"({"n":1})"));
  auto err = expect_error(http(port_, "PATCH", record_path("o1", "a"), R"({"$push":{"n":1}})"), 400,
                          "update.unknown_operator");
  EXPECT_EQ(err["details"].as_object()["operator"], "$push");
  err = expect_error(http(port_, "PATCH", record_path("o1", "zz"), R"({"$set":{"n":1}})"), 404,
                     "record.not_found");
  EXPECT_EQ(err["details"].as_object()["id"], "zz");
  expect_error(http(port_, "PATCH", record_path("o1", "a"), R"({"$set":{"_ver.id":"x"}})"), 400,
               "update.forbidden_field");
  expect_error(http(port_, "PATCH", record_path("o1", "a"), R"({"$set":{}})"), 400, "update.empty");
  auto data = items(port_, "o1");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0],
            json::value(parse_object(R"({"id":"a","n":1,"_ver":{"id":")" + v1 + R"("}})")));
}

TEST_F(WriteApi, DeleteRecordThenMissingIs404) {
  put_record(port_, "t", "o1", "items", "a", R"({"n":1})");
  auto vb = put_record(port_, "t", "o1", "items", "b", R"({"n":2})");
  auto vd = expect_ok(http(port_, "DELETE", record_path("o1", "a")));
  EXPECT_LT(vb, vd);
  auto data = items(port_, "o1");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].as_object().at("id"), "b");
  auto err = expect_error(http(port_, "DELETE", record_path("o1", "a")), 404, "record.not_found");
  EXPECT_EQ(err["details"], json::value(parse_object(R"({"id":"a","dataset":"items"})")));
  expect_error(http(port_, "DELETE", record_path("o2", "a")), 404, "record.not_found");
}

TEST_F(WriteApi, BatchAppliesAtomicallyWithOneVersion) {
  auto vx = put_record(port_, "t", "o1", "items", "x", R"({"n":0})");
  put_record(port_, "t", "o1", "items", "y", R"({"n":5})");
  ws_client ws{port_};
  subscribe_delta(ws, "o1");
  auto vid = expect_ok(http(port_, "POST", batch_path("o1"),
                            R"({"upsert":[{"id":"a","n":1},{"id":"b","n":2},{"id":"y","n":6}],)"
                            R"("delete":["x","absent"]})"));
  EXPECT_LT(vx, vid);
  // One frame carries the whole batch.
  auto cs = next_change_set(ws);
  auto ver = R"(,"_ver":{"id":")" + vid + R"("}})";
  EXPECT_EQ(cs["added"],
            json::parse(R"([{"id":"a","n":1)" + ver + R"(,{"id":"b","n":2)" + ver + "]"));
  EXPECT_EQ(cs["replaced"], json::parse(R"([{"id":"y","n":6)" + ver + "]"));
  ASSERT_EQ(cs["removed"].as_array().size(), 1u);
  EXPECT_EQ(cs["removed"].as_array()[0].as_object().at("id"), "x");
  auto data = items(port_, "o1");
  ASSERT_EQ(data.size(), 3u);
  for (auto& r : data) {
    EXPECT_EQ(r.as_object().at("_ver").as_object().at("id"), json::value(vid))
        << json::serialize(r);
  }
  EXPECT_EQ(data[0].as_object().at("id"), "a");
  EXPECT_EQ(data[1].as_object().at("id"), "b");
  EXPECT_EQ(data[2].as_object().at("id"), "y");
}

TEST_F(WriteApi, BatchWithAnInvalidItemAppliesNothing) {
  auto vx = put_record(port_, "t", "o1", "items", "x", R"({"n":0})");
  ws_client ws{port_};
  subscribe_delta(ws, "o1");
  auto err = expect_error(http(port_, "POST", batch_path("o1"),
                               R"({"upsert":[{"id":"c","n":3},{"n":4}],"delete":["x"]})"),
                          400, "request.missing_field");
  EXPECT_EQ(err["details"], json::value(parse_object(R"({"field":"id","index":1})")));
  err = expect_error(http(port_, "POST", batch_path("o1"),
                          R"({"upsert":[{"id":"c","n":3},{"id":7,"n":4}],"delete":["x"]})"),
                     400, "request.invalid_field");
  EXPECT_EQ(err["details"].as_object()["field"], "id");
  EXPECT_EQ(err["details"].as_object()["index"], 1);
  expect_error(http(port_, "POST", batch_path("o1"), R"({"upsert":[{"id":"c","n":3},"no"]})"), 400,
               "request.not_object");
  expect_error(
      http(port_, "POST", batch_path("o1"), R"({"upsert":[{"id":"c","n":3}],"delete":[1]})"), 400,
      "request.invalid_field");
  expect_error(http(port_, "POST", batch_path("o1"), R"({"upsert":{"id":"c"}})"), 400,
               "request.invalid_field");
  expect_error(http(port_, "POST", batch_path("o1"), R"({})"), 400, "request.missing_field");
  // Nothing of any refused batch is stored...
  auto data = items(port_, "o1");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0],
            json::value(parse_object(R"({"id":"x","n":0,"_ver":{"id":")" + vx + R"("}})")));
  // ...nor published: the next frame the subscriber gets is the next good write, alone.
  auto vs = put_record(port_, "t", "o1", "items", "s", R"({"n":9})");
  auto cs = next_change_set(ws);
  EXPECT_EQ(json::value(cs), json::parse(R"({"added":[{"id":"s","n":9,"_ver":{"id":")" + vs +
                                         R"("}}],"replaced":[],"removed":[]})"));
}

TEST_F(WriteApi, BatchDuplicateConflictAndUnknownField) {
  auto err = expect_error(
      http(port_, "POST", batch_path("o1"), R"({"upsert":[{"id":"a","n":1},{"id":"a","n":2}]})"),
      400, "batch.duplicate_id");
  EXPECT_EQ(err["details"], json::value(parse_object(R"({"id":"a"})")));
  err = expect_error(http(port_, "POST", batch_path("o1"),
                          R"({"upsert":[{"id":"a","n":1},{"id":"b","n":2}],"delete":["b"]})"),
                     400, "batch.conflict");
  EXPECT_EQ(err["details"], json::value(parse_object(R"({"id":"b"})")));
  err = expect_error(
      http(port_, "POST", batch_path("o1"), R"({"upsert":[{"id":"a","n":1}],"remove":["b"]})"), 400,
      "request.unknown_field");
  EXPECT_EQ(err["details"],
            json::value(parse_object(R"({"fields":["remove"],"accepted":["upsert","delete"]})")));
  EXPECT_TRUE(items(port_, "o1").empty());
}

TEST_F(WriteApi, MalformedBodies) {
  put_record(port_, "t", "o1", "items", "a", R"({"n":1})");
  for (auto& [method, target] :
       std::vector<std::pair<std::string, std::string>>{{"PUT", record_path("o1", "a")},
                                                        {"PATCH", record_path("o1", "a")},
                                                        {"POST", batch_path("o1")},
                                                        {"PUT", object_path("o1")}}) {
    SCOPED_TRACE(method + " " + target);
    expect_error(http(port_, method, target, R"({"n":)"), 400, "request.bad_json");
    expect_error(http(port_, method, target, "{\"n\":1} trailing"), 400, "request.bad_json");
    expect_error(http(port_, method, target, ""), 400, "request.bad_json");
    expect_error(http(port_, method, target, "[1,2]"), 400, "request.not_object");
    expect_error(http(port_, method, target, "\"text\""), 400, "request.not_object");
  }
  auto data = items(port_, "o1");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].as_object().at("n"), 1);
  EXPECT_TRUE(full_data(port_, "T.Objects.One", {{"obj", "o1"}}).is_null());
}

TEST(WriteApiLimits, BodyOverMaxBodyBytesIs413) {
  temp_dir dir;
  auto node = start_node(dir.path(), "http: { maxBodyBytes: 1024 }");
  ASSERT_TRUE(node);
  auto port = node->http_port();
  std::string small = R"({"pad":")" + std::string(900, 'x') + R"("})";
  expect_ok(http(port, "PUT", record_path("o1", "small"), small));
  std::string big = R"({"pad":")" + std::string(2000, 'x') + R"("})";
  auto r = http(port, "PUT", record_path("o1", "big"), big);
  auto err = expect_error(r, 413, "request.too_large");
  EXPECT_EQ(err["details"], json::value(parse_object(R"({"limit":1024})")));
  auto data = items(port, "o1");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].as_object().at("id"), "small");
}

TEST_F(WriteApi, UnknownRouteAndWrongMethod) {
  for (auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/nope"},
           {"PUT", "/v1/spaces/t"},
           {"PUT", "/v1/spaces/t/things/o1"},
           {"PUT", "/v1/spaces/t/objects/o1/datasets/items"},
           {"PUT", "/v1/spaces/t/objects/o1/datasets/items/records/a/more"},
           {"PUT", "/v2/spaces/t/objects/o1"}}) {
    SCOPED_TRACE(method + " " + target);
    expect_error(http(port_, method, target, R"({"n":1})"), 404, "route.not_found");
  }
  struct wrong {
    std::string method, target, allow;
  };
  for (auto& w : std::vector<wrong>{{"GET", record_path("o1", "a"), "PUT, PATCH, DELETE"},
                                    {"POST", record_path("o1", "a"), "PUT, PATCH, DELETE"},
                                    {"POST", object_path("o1"), "PUT, PATCH, DELETE"},
                                    {"GET", object_path("o1"), "PUT, PATCH, DELETE"},
                                    {"PUT", batch_path("o1"), "POST"},
                                    {"DELETE", batch_path("o1"), "POST"}}) {
    SCOPED_TRACE(w.method + " " + w.target);
    auto r = http(port_, w.method, w.target, R"({"n":1})");
    expect_error(r, 405, "method.not_allowed");
    EXPECT_EQ(r.headers.count("allow") ? r.headers.at("allow") : "<none>", w.allow);
  }
  EXPECT_TRUE(items(port_, "o1").empty());
}

TEST_F(WriteApi, ObjectDocumentAndDeleteObject) {
  auto v0 = expect_ok(http(port_, "PUT", object_path("o9"), R"({"name":"Nine","_ver":"x"})"));
  auto doc = without_modified_at(full_data(port_, "T.Objects.One", {{"obj", "o9"}}));
  EXPECT_EQ(
      doc, json::value(parse_object(R"({"id":"o9","name":"Nine","_ver":{"id":")" + v0 + R"("}})")));
  expect_error(http(port_, "PUT", object_path("o9"), R"({"id":"o8"})"), 400, "record.id_mismatch");
  put_record(port_, "t", "o9", "items", "a", R"({"n":1})");
  put_record(port_, "t", "o9", "items", "b", R"({"n":2})");
  put_record(port_, "t", "o8", "items", "other", R"({"n":3})");

  ws_client ws{port_};
  ws.expect_connected();
  ws.subscribe("items", "T.Items.All", {{"obj", "o9"}}, 1, "delta");
  ws.subscribe("doc", "T.Objects.One", {{"obj", "o9"}}, 1, "full");
  bool items_snap = false, doc_snap = false;
  for (int i = 0; i < 2; ++i) {
    auto f = ws.read_json();
    items_snap = items_snap || f["queryId"] == "items";
    doc_snap = doc_snap || f["queryId"] == "doc";
  }
  ASSERT_TRUE(items_snap && doc_snap);

  expect_ok(http(port_, "DELETE", object_path("o9")));
  bool saw_removal = false, saw_absent = false;
  for (int i = 0; i < 2; ++i) {
    auto f = ws.read_json();
    auto& p = f["payload"].as_object();
    if (f["queryId"] == "items") {
      auto& cs = p.at("changeSet").as_object();
      EXPECT_TRUE(cs.at("added").as_array().empty());
      EXPECT_TRUE(cs.at("replaced").as_array().empty());
      auto& removed = cs.at("removed").as_array();
      ASSERT_EQ(removed.size(), 2u);
      EXPECT_EQ(removed[0].as_object().at("id"), "a");
      EXPECT_EQ(removed[1].as_object().at("id"), "b");
      saw_removal = true;
    } else {
      EXPECT_EQ(f["queryId"], "doc");
      EXPECT_TRUE(!p.contains("data") || p.at("data").is_null()) << json::serialize(f);
      saw_absent = true;
    }
  }
  EXPECT_TRUE(saw_removal && saw_absent);
  EXPECT_TRUE(items(port_, "o9").empty());
  EXPECT_TRUE(full_data(port_, "T.Objects.One", {{"obj", "o9"}}).is_null());
  // Another object's data is untouched.
  EXPECT_EQ(items(port_, "o8").size(), 1u);

  expect_error(http(port_, "DELETE", object_path("o9")), 404, "object.not_found");
  expect_error(http(port_, "DELETE", object_path("never")), 404, "object.not_found");
  // An object with only datasets (no property document) is deletable too.
  expect_ok(http(port_, "DELETE", object_path("o8")));
  EXPECT_TRUE(items(port_, "o8").empty());
}

TEST_F(WriteApi, VersionIdsStrictlyIncreaseOnAUnit) {
  // 70 writes cross the encoding's first length change ("0z" → "10-").
  std::string prev;
  put_record(port_, "t", "o1", "items", "base", R"({"n":0})");
  for (int i = 0; i < 70; ++i) {
    http_response r;
    switch (i % 4) {
      case 0:
        r = http(port_, "PUT", record_path("o1", "r" + std::to_string(i)), R"({"n":1})");
        break;
      case 1:
        r = http(port_, "PATCH", record_path("o1", "base"), R"({"$inc":{"n":1}})");
        break;
      case 2:
        r = http(port_, "DELETE", record_path("o1", "r" + std::to_string(i - 2)));
        break;
      default:
        r = http(port_, "POST", batch_path("o1"),
                 R"({"upsert":[{"id":"b)" + std::to_string(i) + R"(","n":2}]})");
        break;
    }
    auto vid = expect_ok(r);
    ASSERT_FALSE(vid.empty()) << "write " << i;
    EXPECT_LT(prev, vid) << "write " << i << ": " << prev << " then " << vid;
    EXPECT_GT(vid.compare(prev), 0);
    prev = vid;
  }
}

TEST_F(WriteApi, BadInputChangesNothing) {
  auto va = put_record(port_, "t", "o1", "items", "a", R"({"n":1,"color":"red"})");
  ws_client ws{port_};
  subscribe_delta(ws, "o1");
  http(port_, "PUT", record_path("o1", "a"), R"({"n":)");
  http(port_, "PUT", record_path("o1", "a"), R"({"id":"zz","n":2})");
  http(port_, "PUT", record_path("o1", "a"), "[]");
  http(port_, "PATCH", record_path("o1", "a"), R"({"$rename":{"n":"m"}})");
  http(port_, "PATCH", record_path("o1", "a"), R"({"$inc":{"color":1}})");
  http(port_, "PATCH", record_path("o1", "missing"), R"({"$set":{"n":2}})");
  http(port_, "DELETE", record_path("o1", "missing"));
  http(port_, "POST", batch_path("o1"), R"({"upsert":[{"id":"a","n":2},{"id":"a","n":3}]})");
  http(port_, "POST", batch_path("o1"), R"({"upsert":[{"id":"a","n":2}],"delete":["a"]})");
  http(port_, "GET", record_path("o1", "a"));
  auto data = items(port_, "o1");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0], json::value(parse_object(R"({"id":"a","n":1,"color":"red","_ver":{"id":")" +
                                              va + R"("}})")));
  // The first frame after the refusals is the next good write's, and nothing follows it.
  auto vb = put_record(port_, "t", "o1", "items", "b", R"({"n":2})");
  EXPECT_LT(va, vb);
  auto cs = next_change_set(ws);
  EXPECT_EQ(json::value(cs), json::parse(R"({"added":[{"id":"b","n":2,"_ver":{"id":")" + vb +
                                         R"("}}],"replaced":[],"removed":[]})"));
  EXPECT_TRUE(ws.silent_for(200ms));
}

}  // namespace
}  // namespace weir::test

namespace weir::test {
namespace {

// A write that cannot reach its unit (here: the runtime already stopped) is still answered,
// once, with server.unavailable, and leaves nothing counted in flight.
TEST(WriteAnswer, DroppedWriteIsAnsweredUnavailable) {
  temp_dir dir;
  auto node = start_node(dir.path());
  auto& rt = node->runtime();
  rt.shutdown();
  int answers = 0;
  std::string code;
  actors::write_command cmd;
  cmd.kind = actors::write_kind::put_record;
  cmd.space = "t";
  cmd.object = "o";
  cmd.dataset = "items";
  cmd.id = "a";
  cmd.body = boost::json::object{{"n", 1}};
  rt.submit(std::move(cmd), [&](core::result<actors::write_outcome> r) {
    ++answers;
    code = r ? "" : r.error().code;
  });
  EXPECT_EQ(answers, 1);
  EXPECT_EQ(code, "server.unavailable");
  EXPECT_EQ(rt.in_flight_writes(), 0u);
  node->stop();
}

}  // namespace
}  // namespace weir::test

// The gRPC Data service from a real client: the HTTP write API's operations, their versionIds,
// errors as status codes carrying the Weir error JSON, and gRPC writes reaching hub subscribers.
#include <gtest/gtest.h>

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "test_support.hpp"
#include "weir/v1/data.grpc.pb.h"

namespace weir::test {
namespace {

namespace json = boost::json;

json::value full_data(std::uint16_t port, const std::string& query, const json::object& args) {
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("snap", query, args, 1, "full");
  auto f = ws.read_json();
  EXPECT_EQ(f["type"], "QueryResult");
  if (!f.contains("payload")) {
    return nullptr;
  }
  auto* d = f["payload"].as_object().if_contains("data");
  return d ? *d : json::value(nullptr);
}

json::object parse_object(const std::string& text) {
  return json::parse(text).as_object();
}

class GrpcData : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = start_node(dir_.path());
    ASSERT_TRUE(node_);
    port_ = node_->http_port();
    ASSERT_NE(node_->grpc_port(), 0);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(node_->grpc_port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = weir::v1::Data::NewStub(channel_);
  }

  void TearDown() override {
    stub_.reset();
    channel_.reset();
    if (node_) {
      node_->stop();
    }
  }

  /// Runs one unary call with a deadline; returns its status and fills `reply`.
  template <class Req, class Fn>
  grpc::Status call(Fn fn, const Req& req, weir::v1::WriteReply& reply) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    return ((*stub_).*fn)(&ctx, req, &reply);
  }

  weir::v1::PutRecordRequest put_req(const std::string& obj, const std::string& id,
                                     const std::string& json_text) {
    weir::v1::PutRecordRequest r;
    r.set_space("t");
    r.set_object_id(obj);
    r.set_dataset("items");
    r.set_id(id);
    r.set_record_json(json_text);
    return r;
  }

  std::string put(const std::string& obj, const std::string& id, const std::string& json_text) {
    weir::v1::WriteReply reply;
    auto s = call(&weir::v1::Data::Stub::PutRecord, put_req(obj, id, json_text), reply);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_FALSE(reply.version_id().empty());
    return reply.version_id();
  }

  /// Asserts a failed status: its code, a message starting with the Weir code, and error_details
  /// holding {"code","message"[,"details"]}. Returns the parsed details object.
  json::object expect_status(const grpc::Status& s, grpc::StatusCode code,
                             const std::string& weir_code) {
    EXPECT_EQ(s.error_code(), code) << s.error_message();
    EXPECT_EQ(s.error_message().rfind(weir_code + ": ", 0), 0u) << s.error_message();
    json::value v;
    try {
      v = json::parse(s.error_details());
    } catch (const std::exception&) {
      ADD_FAILURE() << "error_details is not JSON: " << s.error_details();
      return {};
    }
    if (!v.is_object()) {
      ADD_FAILURE() << "error_details is not an object: " << s.error_details();
      return {};
    }
    auto& o = v.as_object();
    EXPECT_EQ(o["code"], json::value(weir_code)) << s.error_details();
    EXPECT_TRUE(o["message"].is_string() && !o["message"].as_string().empty());
    EXPECT_EQ(s.error_message(), weir_code + ": " + std::string{o["message"].as_string()});
    return o;
  }

  temp_dir dir_;
  std::unique_ptr<app::node> node_;
  std::uint16_t port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<weir::v1::Data::Stub> stub_;
};

TEST_F(GrpcData, EveryOperationWritesAndReturnsIncreasingVersions) {
  // Object property document (the space's objects unit).
  weir::v1::PutObjectRequest po;
  po.set_space("t");
  po.set_object_id("g1");
  po.set_document_json(R"({"name":"Gee","_ver":{"id":"client"}})");
  weir::v1::WriteReply reply;
  auto s = call(&weir::v1::Data::Stub::PutObject, po, reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto vo = reply.version_id();
  ASSERT_FALSE(vo.empty());
  EXPECT_EQ(without_modified_at(full_data(port_, "T.Objects.One", {{"obj", "g1"}})),
            json::value(parse_object(R"({"id":"g1","name":"Gee","_ver":{"id":")" + vo + R"("}})")));

  auto v1 = put("g1", "a", R"({"n":1,"color":"red"})");
  auto v2 = put("g1", "b", R"({"id":"b","n":2})");
  EXPECT_LT(v1, v2);

  weir::v1::PatchRecordRequest pr;
  pr.set_space("t");
  pr.set_object_id("g1");
  pr.set_dataset("items");
  pr.set_id("a");
  pr.set_update_json(R"({"$set":{"meta.k":"v"},"$inc":{"n":10},"$unset":{"color":true}})");
  s = call(&weir::v1::Data::Stub::PatchRecord, pr, reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto v3 = reply.version_id();
  EXPECT_LT(v2, v3);

  weir::v1::DeleteRecordRequest dr;
  dr.set_space("t");
  dr.set_object_id("g1");
  dr.set_dataset("items");
  dr.set_id("b");
  s = call(&weir::v1::Data::Stub::DeleteRecord, dr, reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto v4 = reply.version_id();
  EXPECT_LT(v3, v4);

  auto data = full_data(port_, "T.Items.All", {{"obj", "g1"}});
  EXPECT_EQ(data,
            json::parse(R"([{"id":"a","n":11,"meta":{"k":"v"},"_ver":{"id":")" + v3 + R"("}}])"));

  weir::v1::BatchRequest br;
  br.set_space("t");
  br.set_object_id("g1");
  br.set_dataset("items");
  br.add_upsert_json(R"({"id":"c","n":3})");
  br.add_upsert_json(R"({"id":"d","n":4,"_ver":{"id":"zzz"}})");
  br.add_delete_ids("a");
  s = call(&weir::v1::Data::Stub::Batch, br, reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto v5 = reply.version_id();
  EXPECT_LT(v4, v5);
  data = full_data(port_, "T.Items.All", {{"obj", "g1"}});
  auto ver = R"(,"_ver":{"id":")" + v5 + R"("}})";
  EXPECT_EQ(data, json::parse(R"([{"id":"c","n":3)" + ver + R"(,{"id":"d","n":4)" + ver + "]"));

  weir::v1::DeleteObjectRequest dor;
  dor.set_space("t");
  dor.set_object_id("g1");
  s = call(&weir::v1::Data::Stub::DeleteObject, dor, reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(reply.version_id().empty());
  EXPECT_EQ(full_data(port_, "T.Items.All", {{"obj", "g1"}}), json::array{});
  EXPECT_TRUE(full_data(port_, "T.Objects.One", {{"obj", "g1"}}).is_null());

  // HTTP and gRPC writes share one sequence per unit.
  auto vh = put_record(port_, "t", "g1", "items", "h", R"({"n":5})");
  EXPECT_LT(v5, vh);
  auto vg = put("g1", "i", R"({"n":6})");
  EXPECT_LT(vh, vg);
}

TEST_F(GrpcData, ErrorsCarryStatusCodesAndWeirErrorJson) {
  weir::v1::WriteReply reply;
  auto s = call(&weir::v1::Data::Stub::PutRecord, put_req("g2", "a", R"({"n":)"), reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "request.bad_json");
  EXPECT_TRUE(reply.version_id().empty());

  s = call(&weir::v1::Data::Stub::PutRecord, put_req("g2", "a", "[1]"), reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "request.not_object");

  s = call(&weir::v1::Data::Stub::PutRecord, put_req("g2", "a", R"({"id":"b"})"), reply);
  auto e = expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "record.id_mismatch");
  EXPECT_EQ(e["details"], json::value(parse_object(R"({"id":"b","pathId":"a"})")));

  s = call(&weir::v1::Data::Stub::PutRecord, put_req("g2", "", R"({"n":1})"), reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "request.invalid_field");

  weir::v1::PatchRecordRequest pr;
  pr.set_space("t");
  pr.set_object_id("g2");
  pr.set_dataset("items");
  pr.set_id("missing");
  pr.set_update_json(R"({"$set":{"n":1}})");
  s = call(&weir::v1::Data::Stub::PatchRecord, pr, reply);
  e = expect_status(s, grpc::StatusCode::NOT_FOUND, "record.not_found");
  EXPECT_EQ(e["details"], json::value(parse_object(R"({"id":"missing","dataset":"items"})")));

  pr.set_update_json(R"({"$push":{"n":1}})");
  s = call(&weir::v1::Data::Stub::PatchRecord, pr, reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "update.unknown_operator");

  weir::v1::DeleteRecordRequest dr;
  dr.set_space("t");
  dr.set_object_id("g2");
  dr.set_dataset("items");
  dr.set_id("missing");
  s = call(&weir::v1::Data::Stub::DeleteRecord, dr, reply);
  expect_status(s, grpc::StatusCode::NOT_FOUND, "record.not_found");

  weir::v1::DeleteObjectRequest dor;
  dor.set_space("t");
  dor.set_object_id("never");
  s = call(&weir::v1::Data::Stub::DeleteObject, dor, reply);
  expect_status(s, grpc::StatusCode::NOT_FOUND, "object.not_found");

  weir::v1::BatchRequest br;
  br.set_space("t");
  br.set_object_id("g2");
  br.set_dataset("items");
  br.add_upsert_json(R"({"id":"a","n":1})");
  br.add_upsert_json("{oops");
  s = call(&weir::v1::Data::Stub::Batch, br, reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "request.bad_json");

  br.clear_upsert_json();
  br.add_upsert_json(R"({"id":"a","n":1})");
  br.add_upsert_json(R"({"id":"a","n":2})");
  s = call(&weir::v1::Data::Stub::Batch, br, reply);
  e = expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "batch.duplicate_id");
  EXPECT_EQ(e["details"], json::value(parse_object(R"({"id":"a"})")));

  br.clear_upsert_json();
  br.add_upsert_json(R"({"id":"a","n":1})");
  br.add_delete_ids("a");
  s = call(&weir::v1::Data::Stub::Batch, br, reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "batch.conflict");

  weir::v1::PutObjectRequest po;
  po.set_space("t");
  po.set_object_id("g2");
  po.set_document_json("nope");
  s = call(&weir::v1::Data::Stub::PutObject, po, reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "request.bad_json");

  // None of it was applied.
  EXPECT_EQ(full_data(port_, "T.Items.All", {{"obj", "g2"}}), json::array{});
  EXPECT_TRUE(full_data(port_, "T.Objects.One", {{"obj", "g2"}}).is_null());
}

TEST_F(GrpcData, HostileDocumentsAreRefusedWithTheirCodes) {
  // Issue 22 through gRPC: what the HTTP write API refuses, Data refuses with the same codes.
  weir::v1::WriteReply reply;
  put("g3", "r", R"({"n":1})");
  weir::v1::PatchRecordRequest pr;
  pr.set_space("t");
  pr.set_object_id("g3");
  pr.set_dataset("items");
  pr.set_id("r");
  std::string path = "a";
  for (int i = 0; i < 120000; ++i) {
    path += ".a";
  }
  pr.set_update_json(R"({"$set":{")" + path + R"(":1}})");
  auto s = call(&weir::v1::Data::Stub::PatchRecord, pr, reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "record.too_deep");
  pr.set_update_json(R"({"$inc":{"n":1e400}})");
  s = call(&weir::v1::Data::Stub::PatchRecord, pr, reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "record.invalid_number");
  s = call(&weir::v1::Data::Stub::PutRecord, put_req("g3", "big", R"({"n":1e400})"), reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "record.invalid_number");
  // (Text that is not UTF-8 cannot arrive here: protobuf refuses it in string fields.)
  s = call(&weir::v1::Data::Stub::PutRecord, put_req("g3", "deep", std::string(100000, '[')),
           reply);
  expect_status(s, grpc::StatusCode::INVALID_ARGUMENT, "record.too_deep");
  // The record is as it was, and the node serves.
  auto rows = full_data(port_, "T.Items.All", {{"obj", "g3"}});
  ASSERT_EQ(rows.as_array().size(), 1u);
  EXPECT_EQ(rows.as_array()[0].at("n"), json::value(1));
}

TEST_F(GrpcData, GrpcWriteReachesAHubSubscriberAsADelta) {
  auto v1 = put("g3", "a", R"({"n":1})");
  ws_client ws{port_};
  ws.expect_connected();
  ws.subscribe("q", "T.Items.All", {{"obj", "g3"}}, 1, "delta");
  auto snap = ws.read_json();
  ASSERT_EQ(snap["type"], "QueryResult");
  EXPECT_EQ(snap["payload"].as_object()["data"],
            json::parse(R"([{"id":"a","n":1,"_ver":{"id":")" + v1 + R"("}}])"));

  auto v2 = put("g3", "b", R"({"n":2,"color":"red"})");
  auto f = ws.read_json();
  EXPECT_EQ(f["type"], "QueryResult");
  EXPECT_EQ(f["queryId"], "q");
  auto& p = f["payload"].as_object();
  EXPECT_TRUE(!p.contains("data") || p.at("data").is_null());
  EXPECT_EQ(p.at("changeSet"),
            json::parse(R"({"added":[{"id":"b","n":2,"color":"red","_ver":{"id":")" + v2 +
                        R"("}}],"replaced":[],"removed":[]})"));

  weir::v1::BatchRequest br;
  br.set_space("t");
  br.set_object_id("g3");
  br.set_dataset("items");
  br.add_upsert_json(R"({"id":"a","n":3})");
  br.add_delete_ids("b");
  weir::v1::WriteReply reply;
  auto s = call(&weir::v1::Data::Stub::Batch, br, reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  f = ws.read_json();
  auto& cs = f["payload"].as_object().at("changeSet").as_object();
  EXPECT_TRUE(cs.at("added").as_array().empty());
  EXPECT_EQ(cs.at("replaced"),
            json::parse(R"([{"id":"a","n":3,"_ver":{"id":")" + reply.version_id() + R"("}}])"));
  ASSERT_EQ(cs.at("removed").as_array().size(), 1u);
  EXPECT_EQ(cs.at("removed").as_array()[0].as_object().at("id"), "b");
}

/// PutRecord {"n":1} as space t, dataset items, with a 10 s deadline. Waits for the channel to
/// connect (wait_for_ready): eight channels opening at once to a loaded node may see a first
/// connect attempt fail, and without it every call of that channel would then fail at once
/// with UNAVAILABLE, which is not what the test is about.
grpc::Status put_with(weir::v1::Data::Stub& stub, const std::string& object,
                      const std::string& id) {
  weir::v1::PutRecordRequest r;
  r.set_space("t");
  r.set_object_id(object);
  r.set_dataset("items");
  r.set_id(id);
  r.set_record_json(R"({"n":1})");
  weir::v1::WriteReply reply;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  ctx.set_wait_for_ready(true);
  return stub.PutRecord(&ctx, r, &reply);
}

// The node-wide bound on Data calls in flight (http.maxDataCallsInFlight): however many
// connections a backend opens, the calls beyond it are refused at once with UNAVAILABLE
// server.overloaded (nothing applied), the others succeed, and the slots come back.
TEST(GrpcDataBound, CallsBeyondTheNodeWideBoundAreRefusedWithoutBeingApplied) {
  temp_dir dir;
  auto node = start_node(dir.path(), "http: { maxDataCallsInFlight: 2 }\n");
  ASSERT_TRUE(node);
  constexpr int clients = 8, per_client = 25;
  std::atomic<int> ok{0}, overloaded{0}, other{0};
  std::mutex first_other_mu;
  std::string first_other;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      // Each client its own connection, as a backend spreading its calls would.
      grpc::ChannelArguments args;
      args.SetInt("weir.test.client", c);
      auto channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(node->grpc_port()),
                                               grpc::InsecureChannelCredentials(), args);
      auto stub = weir::v1::Data::NewStub(channel);
      for (int i = 0; i < per_client; ++i) {
        auto s = put_with(*stub, "o" + std::to_string(c), "r" + std::to_string(i));
        if (s.ok()) {
          ++ok;
        } else if (s.error_code() == grpc::StatusCode::UNAVAILABLE &&
                   s.error_message().rfind("server.overloaded: ", 0) == 0) {
          ++overloaded;
        } else {
          if (++other == 1) {
            std::lock_guard lock{first_other_mu};
            first_other = std::to_string(s.error_code()) + " " + s.error_message();
          }
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(other.load(), 0) << "the first: " << first_other;
  EXPECT_GT(ok.load(), 0);
  EXPECT_GT(overloaded.load(), 0) << "8 connections never had more than 2 calls in flight";
  // Exactly the acknowledged writes exist.
  int stored = 0;
  for (int c = 0; c < clients; ++c) {
    auto r = http(node->http_port(), "POST", "/v1/spaces/t/query",
                  R"({"objectId":"o)" + std::to_string(c) + R"(","dataset":"items"})",
                  {{"Content-Type", "application/json"}});
    ASSERT_EQ(r.status, 200u) << r.body;
    stored += static_cast<int>(r.json().at("records").as_array().size());
  }
  EXPECT_EQ(stored, ok.load());
  // Once the calls are done, the slots are free again.
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(node->grpc_port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = weir::v1::Data::NewStub(channel);
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(put_with(*stub, "after", "r" + std::to_string(i)).ok());
  }
}

}  // namespace
}  // namespace weir::test

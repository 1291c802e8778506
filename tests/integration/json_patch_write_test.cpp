// PATCH with Content-Type: application/json-patch+json: an RFC 6902 patch on a record or on an
// object's property document, applied atomically by the unit's owner; its failures answer with
// the failing operation's index and change nothing; subscribers see the result like any write.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

const std::map<std::string, std::string> json_patch{
    {"Content-Type", "application/json-patch+json"}};
const std::string record = "/v1/spaces/t/objects/o1/datasets/items/records/r1";

json::value current(std::uint16_t port) {
  auto body = http(port, "GET", "/api/t/items?obj=o1").json();
  for (auto& row : body.at("data").as_array()) {
    if (row.at("id") == "r1") {
      auto o = row.as_object();
      o.erase("_ver");
      return o;
    }
  }
  return nullptr;
}

TEST(JsonPatchWrite, APatchAppliesToTheRecordAndReachesSubscribers) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "r1", R"({"n":1,"tags":["a"],"color":"red"})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q", "T.Items.All", {{"obj", "o1"}}, 1, "delta");
  ws.read_json();  // the snapshot
  auto r = http(port, "PATCH", record,
                R"([{"op":"test","path":"/n","value":1},{"op":"replace","path":"/n","value":2},
                    {"op":"add","path":"/tags/-","value":"b"},{"op":"remove","path":"/color"}])",
                json_patch);
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_TRUE(r.json().as_object().contains("versionId"));
  EXPECT_EQ(current(port), json::parse(R"({"id":"r1","n":2,"tags":["a","b"]})"));
  auto f = ws.read_json();
  EXPECT_EQ(f.at("type"), "QueryResult");
  auto& replaced = f.at("payload").at("changeSet").at("replaced").as_array();
  ASSERT_EQ(replaced.size(), 1u);
  EXPECT_EQ(replaced[0].at("n"), 2);
}

TEST(JsonPatchWrite, FailuresNameTheOperationAndChangeNothing) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "r1", R"({"n":1})");
  auto before = current(port);
  struct bad_case {
    std::string patch;
    unsigned status;
    std::string code;
  };
  for (const auto& [patch, status, code] : std::vector<bad_case>{
           {R"([{"op":"replace","path":"/n","value":5},{"op":"test","path":"/n","value":1}])", 409,
            "patch.test_failed"},
           {R"([{"op":"add","path":"/x","value":1},{"op":"remove","path":"/missing"}])", 422,
            "patch.path_not_found"},
           {R"([{"op":"add","path":"/tags/3","value":1}])", 422, "patch.path_not_found"},
           {R"([{"op":"replace","path":"/id","value":"other"}])", 400, "record.id_mismatch"},
           {R"([{"op":"replace","path":"","value":[1]}])", 422, "patch.invalid_result"},
           {R"([{"op":"spam","path":"/n"}])", 400, "patch.invalid"},
           {R"({"op":"add"})", 400, "patch.invalid"},
       }) {
    SCOPED_TRACE(patch);
    auto r = http(port, "PATCH", record, patch, json_patch);
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(r.json().at("error").at("code").as_string(), code) << r.body;
    EXPECT_EQ(current(port), before);
  }
  auto indexed = http(port, "PATCH", record,
                      R"([{"op":"add","path":"/x","value":1},{"op":"test","path":"/n","value":9}])",
                      json_patch);
  EXPECT_EQ(indexed.json().at("error").at("details").at("index"), 1);
  // A patch on a record that does not exist.
  auto missing = http(port, "PATCH", "/v1/spaces/t/objects/o1/datasets/items/records/nope",
                      R"([{"op":"add","path":"/x","value":1}])", json_patch);
  EXPECT_EQ(missing.status, 404u);
  // Weir's own PATCH body still works on records.
  EXPECT_EQ(http(port, "PATCH", record, R"({"$set":{"n":3}})").status, 200u);
}

TEST(JsonPatchWrite, APropertyDocumentTakesAJsonPatch) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  ASSERT_EQ(http(port, "PUT", "/v1/spaces/t/objects/p1", R"({"name":"Ada","tags":[]})").status,
            200u);
  auto r = http(port, "PATCH", "/v1/spaces/t/objects/p1",
                R"([{"op":"add","path":"/tags/0","value":"x"},
                    {"op":"replace","path":"/name","value":"Grace"}])",
                json_patch);
  ASSERT_EQ(r.status, 200u) << r.body;
  auto doc = http(port, "GET", "/api/t/objects/one?obj=p1").json().at("data");
  ASSERT_TRUE(doc.is_object()) << json::serialize(doc);
  doc.as_object().erase("_ver");
  EXPECT_EQ(without_modified_at(doc), json::parse(R"({"id":"p1","name":"Grace","tags":["x"]})"));
  // Only a JSON Patch is accepted there.
  auto wrong = http(port, "PATCH", "/v1/spaces/t/objects/p1", R"({"name":"x"})");
  EXPECT_EQ(wrong.status, 415u);
  EXPECT_EQ(wrong.json().at("error").at("code"), "request.unsupported_media_type");
  auto none = http(port, "PATCH", "/v1/spaces/t/objects/nobody",
                   R"([{"op":"add","path":"/a","value":1}])", json_patch);
  EXPECT_EQ(none.status, 404u);
}

}  // namespace
}  // namespace weir::test

// Arc hub §3 and §5 over the wire: what each transfer mode carries (full, delta, legacy), the
// single-document rule, change sets for updates, deletes and filter moves, the §5.1 JSON-set
// fallback, the order of change-set entries, paging, the QueryResult envelope, and that a client
// applying delta change sets ends with exactly what a fresh full subscription sees.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "core/change_set.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

const json::object items_o1{{"obj", "o1"}};
using ids = std::vector<std::string>;

bool is_result(const json::object& f, std::string_view query_id) {
  auto* t = f.if_contains("type");
  auto* q = f.if_contains("queryId");
  return t && t->is_string() && t->get_string() == "QueryResult" && q && q->is_string() &&
         q->get_string() == query_id;
}

const json::object& payload(const json::object& f) {
  return f.at("payload").as_object();
}

std::vector<std::string> ids_of(const json::array& items) {
  std::vector<std::string> out;
  for (auto& v : items) {
    out.emplace_back(v.as_object().at("id").as_string());
  }
  return out;
}

const json::array& cs_part(const json::object& f, std::string_view part) {
  return payload(f).at("changeSet").as_object().at(part).as_array();
}

/// The record as stored: the body with "id" first and the server's "_ver" stamp last.
json::value stored(const std::string& id, const std::string& body, const std::string& version) {
  json::object out;
  out["id"] = id;
  auto parsed = json::parse(body);
  for (auto& kv : parsed.as_object()) {
    out[kv.key()] = kv.value();
  }
  out["_ver"] = json::object{{"id", version}};
  return out;
}

json::value parse(std::string_view s) {
  return json::parse(s);
}

std::string batch(std::uint16_t port, const std::string& body) {
  auto r = http(port, "POST", "/v1/spaces/t/objects/o1/datasets/items/records", body);
  EXPECT_EQ(r.status, 200u) << r.body;
  return r.status == 200 ? std::string{r.json().as_object()["versionId"].as_string()} : "";
}

/// Reads exactly one QueryResult for each of `query_ids`, in any order (different query keys are
/// served by different query actors); any other frame, or a second one for an id, fails.
std::map<std::string, json::object> read_each(ws_client& ws, std::set<std::string> query_ids) {
  std::map<std::string, json::object> out;
  while (out.size() < query_ids.size()) {
    auto f = ws.read_json();
    if (f.empty()) {
      return out;
    }
    auto* q = f.if_contains("queryId");
    std::string qid = q && q->is_string() ? std::string{q->get_string()} : "";
    if (f["type"] != "QueryResult" || !query_ids.count(qid) || out.count(qid)) {
      ADD_FAILURE() << "unexpected frame: " << json::serialize(f);
      return out;
    }
    out[qid] = f;
  }
  return out;
}

using HubTransferModes = single_node;

TEST_F(HubTransferModes, FullSendsTheWholeSnapshotEveryTimeAndNeverAChangeSet) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "full");
  auto f1 = ws.read_json();
  EXPECT_FALSE(payload(f1).contains("changeSet"));
  EXPECT_EQ(ids_of(payload(f1).at("data").as_array()), ids{"a"});
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto f2 = ws.read_json();
  EXPECT_FALSE(payload(f2).contains("changeSet"));
  EXPECT_EQ(ids_of(payload(f2).at("data").as_array()), (ids{"a", "b"}));
  auto r = http(port, "DELETE", "/v1/spaces/t/objects/o1/datasets/items/records/a");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto f3 = ws.read_json();
  EXPECT_FALSE(payload(f3).contains("changeSet"));
  EXPECT_EQ(ids_of(payload(f3).at("data").as_array()), ids{"b"});
}

TEST_F(HubTransferModes, DeltaSendsDataFirstThenOnlyChangeSets) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  auto f1 = ws.read_json();
  EXPECT_FALSE(payload(f1).contains("changeSet"));
  EXPECT_EQ(ids_of(payload(f1).at("data").as_array()), ids{"a"});
  auto v = put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto f2 = ws.read_json();
  EXPECT_FALSE(payload(f2).contains("data")) << json::serialize(f2);
  EXPECT_EQ(payload(f2).at("changeSet"),
            parse(R"({"added":[)" + json::serialize(stored("b", R"({"n":2})", v)) +
                  R"(],"replaced":[],"removed":[]})"));
}

TEST_F(HubTransferModes, DeltaMatchesTheModeCaseInsensitively) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "DELTA");
  ws.subscribe("q2", "T.Items.All", items_o1, 1, "Full");
  auto first = read_each(ws, {"q1", "q2"});
  EXPECT_FALSE(payload(first["q1"]).contains("changeSet"));
  EXPECT_FALSE(payload(first["q2"]).contains("changeSet"));
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  auto second = read_each(ws, {"q1", "q2"});
  auto& d1 = second["q1"];
  EXPECT_FALSE(payload(d1).contains("data"));
  EXPECT_EQ(ids_of(cs_part(d1, "added")), ids{"b"});
  // "Full" is full: a later emission has data and no change set.
  auto& d2 = second["q2"];
  EXPECT_FALSE(payload(d2).contains("changeSet"));
  EXPECT_EQ(ids_of(payload(d2).at("data").as_array()), (ids{"a", "b"}));
}

void expect_legacy(ws_client& ws, const std::string& query_id, std::uint16_t port,
                   const std::string& next_id, int next_n) {
  auto f1 = ws.read_until([&](auto& f) { return is_result(f, query_id); });
  // First emission: data plus a change set computed against an empty baseline.
  EXPECT_EQ(ids_of(payload(f1).at("data").as_array()), (ids{"a", "b"}));
  ASSERT_TRUE(payload(f1).contains("changeSet")) << json::serialize(f1);
  EXPECT_EQ(cs_part(f1, "added"), payload(f1).at("data"));
  EXPECT_TRUE(cs_part(f1, "replaced").empty());
  EXPECT_TRUE(cs_part(f1, "removed").empty());
  put_record(port, "t", "o1", "items", next_id, R"({"n":)" + std::to_string(next_n) + "}");
  auto f2 = ws.read_until([&](auto& f) { return is_result(f, query_id); });
  EXPECT_EQ(ids_of(payload(f2).at("data").as_array()), (ids{"a", "b", next_id}));
  EXPECT_EQ(ids_of(cs_part(f2, "added")), ids{next_id});
  EXPECT_TRUE(cs_part(f2, "replaced").empty());
  EXPECT_TRUE(cs_part(f2, "removed").empty());
}

TEST_F(HubTransferModes, AbsentModeIsLegacyDataPlusChangeSet) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1);
  expect_legacy(ws, "q1", port, "c", 3);
}

TEST_F(HubTransferModes, UnknownModeTextIsLegacy) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "weird");
  expect_legacy(ws, "q1", port, "c", 3);
}

TEST_F(HubTransferModes, NullModeIsLegacy) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "", {{"transferMode", nullptr}});
  expect_legacy(ws, "q1", port, "c", 3);
}

TEST_F(HubTransferModes, NonStringModeIsMalformed) {
  ws_client ws{port};
  ws.expect_connected();
  for (auto mode : {json::value(5), json::value(true), json::value(json::array{"delta"}),
                    json::value(json::object{{"m", "delta"}})}) {
    SCOPED_TRACE(json::serialize(mode));
    ws.subscribe("q1", "T.Items.All", items_o1, 1, "", {{"transferMode", mode}});
    auto t = ws.read();
    ASSERT_TRUE(t);
    EXPECT_EQ(*t, R"({"type":"Error","payload":"Malformed query control"})");
  }
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  EXPECT_TRUE(is_result(ws.read_json(), "q1"));  // q1 was untouched, revision 1 still free
}

TEST_F(HubTransferModes, SingleDocumentSendsDataInEveryModeAndNeverAChangeSet) {
  auto r = http(port, "PUT", "/v1/spaces/t/objects/o1", R"({"name":"first","size":1})");
  ASSERT_EQ(r.status, 200u) << r.body;
  std::string v1{r.json().as_object()["versionId"].as_string()};
  ws_client ws{port};
  ws.expect_connected();
  const std::vector<std::pair<std::string, std::string>> subs{
      {"qf", "full"}, {"qd", "delta"}, {"ql", ""}, {"qw", "weird"}};
  for (auto& [qid, mode] : subs) {
    ws.subscribe(qid, "T.Objects.One", items_o1, 1, mode);
  }
  std::map<std::string, json::object> first;
  while (first.size() < subs.size()) {
    auto f = ws.read_json();
    ASSERT_EQ(f["type"], "QueryResult") << json::serialize(f);
    first[std::string{f["queryId"].as_string()}] = f;
  }
  for (auto& [qid, f] : first) {
    SCOPED_TRACE(qid);
    EXPECT_FALSE(payload(f).contains("changeSet")) << json::serialize(f);
    EXPECT_EQ(without_modified_at(payload(f).at("data")),
              stored("o1", R"({"name":"first","size":1})", v1));
    EXPECT_EQ(payload(f).at("paging"),
              parse(R"({"page":0,"size":0,"totalItems":0,"totalPages":0})"));
  }
  r = http(port, "PUT", "/v1/spaces/t/objects/o1", R"({"name":"second","size":2})");
  ASSERT_EQ(r.status, 200u) << r.body;
  std::string v2{r.json().as_object()["versionId"].as_string()};
  std::map<std::string, json::object> second;
  while (second.size() < subs.size()) {
    auto f = ws.read_json();
    ASSERT_EQ(f["type"], "QueryResult") << json::serialize(f);
    second[std::string{f["queryId"].as_string()}] = f;
  }
  for (auto& [qid, f] : second) {
    SCOPED_TRACE(qid);
    EXPECT_FALSE(payload(f).contains("changeSet")) << json::serialize(f);
    EXPECT_EQ(without_modified_at(payload(f).at("data")),
              stored("o1", R"({"name":"second","size":2})", v2));
  }
}

TEST_F(HubTransferModes, SingleDocumentThatDoesNotExistYetOmitsData) {
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Objects.One", {{"obj", "o9"}}, 1, "delta");
  auto f = ws.read_json();
  EXPECT_TRUE(is_result(f, "q1"));
  EXPECT_FALSE(payload(f).contains("data")) << json::serialize(f);
  EXPECT_FALSE(payload(f).contains("changeSet"));
  EXPECT_EQ(payload(f).at("isSuccess"), true);
  auto r = http(port, "PUT", "/v1/spaces/t/objects/o9", R"({"name":"now"})");
  ASSERT_EQ(r.status, 200u) << r.body;
  std::string v{r.json().as_object()["versionId"].as_string()};
  auto g = ws.read_json();
  EXPECT_FALSE(payload(g).contains("changeSet"));
  EXPECT_EQ(without_modified_at(payload(g).at("data")), stored("o9", R"({"name":"now"})", v));
}

TEST_F(HubTransferModes, UpdateIsReplacedWithTheNewItemAndDeleteIsRemovedWithTheOldOne) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1,"color":"red"})");
  put_record(port, "t", "o1", "items", "b", R"({"n":2,"color":"blue"})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  auto snap = ws.read_json();
  auto& data = payload(snap).at("data").as_array();
  ASSERT_EQ(data.size(), 2u);
  json::value old_b = data[1];

  auto v = put_record(port, "t", "o1", "items", "a", R"({"n":1,"color":"green"})");
  auto f = ws.read_json();
  EXPECT_FALSE(payload(f).contains("data"));
  EXPECT_EQ(
      payload(f).at("changeSet"),
      parse(R"({"added":[],"replaced":[)" +
            json::serialize(stored("a", R"({"n":1,"color":"green"})", v)) + R"(],"removed":[]})"));

  // A PATCH is an update too.
  auto p = http(port, "PATCH", "/v1/spaces/t/objects/o1/datasets/items/records/a",
                R"({"$inc":{"n":10}})");
  ASSERT_EQ(p.status, 200u) << p.body;
  std::string vp{p.json().as_object()["versionId"].as_string()};
  auto g = ws.read_json();
  EXPECT_EQ(payload(g).at("changeSet"),
            parse(R"({"added":[],"replaced":[)" +
                  json::serialize(stored("a", R"({"n":11,"color":"green"})", vp)) +
                  R"(],"removed":[]})"));

  auto r = http(port, "DELETE", "/v1/spaces/t/objects/o1/datasets/items/records/b");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto h = ws.read_json();
  EXPECT_FALSE(payload(h).contains("data"));
  json::object expected{
      {"added", json::array{}}, {"replaced", json::array{}}, {"removed", json::array{old_b}}};
  EXPECT_EQ(payload(h).at("changeSet"), json::value(expected));
}

TEST_F(HubTransferModes, FilteredQueryAddsAndRemovesRecordsThatMoveAcrossTheFilter) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1,"color":"red"})");
  put_record(port, "t", "o1", "items", "b", R"({"n":2,"color":"blue"})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.ByColor", {{"obj", "o1"}, {"color", "red"}}, 1, "delta");
  auto snap = ws.read_json();
  auto& data = payload(snap).at("data").as_array();
  ASSERT_EQ(ids_of(data), ids{"a"});
  json::value old_a = data[0];

  // b turns red: it enters the result.
  auto vb = put_record(port, "t", "o1", "items", "b", R"({"n":2,"color":"red"})");
  auto f = ws.read_json();
  EXPECT_EQ(payload(f).at("changeSet"),
            parse(R"({"added":[)" + json::serialize(stored("b", R"({"n":2,"color":"red"})", vb)) +
                  R"(],"replaced":[],"removed":[]})"));
  // a turns blue: it leaves, and removed carries the item as the client last saw it.
  put_record(port, "t", "o1", "items", "a", R"({"n":1,"color":"blue"})");
  auto g = ws.read_json();
  json::object expected{
      {"added", json::array{}}, {"replaced", json::array{}}, {"removed", json::array{old_a}}};
  EXPECT_EQ(payload(g).at("changeSet"), json::value(expected));
  // A blue record changing stays outside: no frame. A witness on the same query key proves it.
  put_record(port, "t", "o1", "items", "a", R"({"n":1,"color":"blue","x":1})");
  ws.subscribe("w", "T.Items.ByColor", {{"obj", "o1"}, {"color", "red"}}, 1, "delta");
  auto w = ws.read_json();
  EXPECT_TRUE(is_result(w, "w")) << json::serialize(w);
  EXPECT_EQ(ids_of(payload(w).at("data").as_array()), ids{"b"});
}

TEST_F(HubTransferModes, AmbiguousIdentityFallsBackToJsonSetComparison) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  // Both "id" and "ID": not exactly one id-like key, so this item has no identity (§5.1 step 1)
  // and the whole comparison falls back to JSON sets (step 3).
  put_record(port, "t", "o1", "items", "x", R"({"n":2,"ID":"X"})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  auto snap = ws.read_json();
  auto& data = payload(snap).at("data").as_array();
  ASSERT_EQ(ids_of(data), (ids{"a", "x"}));
  json::value old_x = data[1];

  auto v = put_record(port, "t", "o1", "items", "x", R"({"n":2,"ID":"X","more":true})");
  auto f = ws.read_json();
  EXPECT_FALSE(payload(f).contains("data"));
  json::object expected{{"added", json::array{stored("x", R"({"n":2,"ID":"X","more":true})", v)}},
                        {"replaced", json::array{}},
                        {"removed", json::array{old_x}}};
  EXPECT_EQ(payload(f).at("changeSet"), json::value(expected));

  // With the fallback in force, an ordinary update of "a" also shows as removed + added.
  json::value old_a = data[0];
  auto va = put_record(port, "t", "o1", "items", "a", R"({"n":1,"k":1})");
  auto g = ws.read_json();
  json::object expected_a{{"added", json::array{stored("a", R"({"n":1,"k":1})", va)}},
                          {"replaced", json::array{}},
                          {"removed", json::array{old_a}}};
  EXPECT_EQ(payload(g).at("changeSet"), json::value(expected_a));
}

TEST_F(HubTransferModes, ChangeSetOrderFollowsCurrentOrderAndPreviousOrderForRemovals) {
  batch(port,
        R"({"upsert":[{"id":"a","n":1},{"id":"c","n":3},{"id":"d","n":4},{"id":"f","n":6}]})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  auto snap = ws.read_json();
  ASSERT_EQ(ids_of(payload(snap).at("data").as_array()), (ids{"a", "c", "d", "f"}));
  // One batch, listed out of order on purpose.
  batch(port, R"({"upsert":[{"id":"e","n":5},{"id":"c","n":3,"v":2},{"id":"b","n":2},)"
              R"({"id":"a","n":1,"v":2}],"delete":["f","d"]})");
  auto f = ws.read_json();
  EXPECT_FALSE(payload(f).contains("data"));
  EXPECT_EQ(ids_of(cs_part(f, "added")), (ids{"b", "e"}));
  EXPECT_EQ(ids_of(cs_part(f, "replaced")), (ids{"a", "c"}));
  EXPECT_EQ(ids_of(cs_part(f, "removed")), (ids{"d", "f"}));
  // One write, one frame.
  EXPECT_TRUE(ws.silent_for(300ms));
}

TEST_F(HubTransferModes, ChangeSetOrderInTheFallbackPath) {
  batch(port, R"({"upsert":[{"id":"a","n":1},{"id":"c","n":3},{"id":"d","n":4},)"
              R"({"id":"f","n":6},{"id":"z","n":99,"Id":"Z"}]})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 1, "delta");
  ASSERT_EQ(ids_of(payload(ws.read_json()).at("data").as_array()), (ids{"a", "c", "d", "f", "z"}));
  batch(port, R"({"upsert":[{"id":"e","n":5},{"id":"b","n":2}],"delete":["f","d"]})");
  auto f = ws.read_json();
  EXPECT_EQ(ids_of(cs_part(f, "added")), (ids{"b", "e"}));
  EXPECT_TRUE(cs_part(f, "replaced").empty());
  EXPECT_EQ(ids_of(cs_part(f, "removed")), (ids{"d", "f"}));
}

TEST_F(HubTransferModes, PagingReportsTheWindowAndShiftsWhenAnItemIsInsertedBeforeIt) {
  batch(port, R"({"upsert":[{"id":"i1","n":1},{"id":"i2","n":2},{"id":"i3","n":3},)"
              R"({"id":"i4","n":4},{"id":"i5","n":5}]})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("p", "T.Items.All", items_o1, 1, "delta", {{"page", 1}, {"pageSize", 2}});
  ws.subscribe("u", "T.Items.All", items_o1, 1, "delta");
  ws.subscribe("pf", "T.Items.All", items_o1, 1, "full", {{"page", 2}, {"pageSize", 2}});
  auto snaps = read_each(ws, {"p", "u", "pf"});
  ASSERT_EQ(snaps.size(), 3u);
  auto& p = snaps["p"];
  auto& u = snaps["u"];
  auto& pf = snaps["pf"];
  EXPECT_EQ(ids_of(payload(p).at("data").as_array()), (ids{"i3", "i4"}));
  EXPECT_EQ(payload(p).at("paging"), parse(R"({"page":1,"size":2,"totalItems":5,"totalPages":3})"));
  EXPECT_EQ(payload(u).at("data").as_array().size(), 5u);
  EXPECT_EQ(payload(u).at("paging"), parse(R"({"page":0,"size":0,"totalItems":0,"totalPages":0})"));
  EXPECT_EQ(ids_of(payload(pf).at("data").as_array()), ids{"i5"});
  EXPECT_EQ(payload(pf).at("paging"),
            parse(R"({"page":2,"size":2,"totalItems":5,"totalPages":3})"));

  // i0 sorts first: page 1 was [i3,i4] and becomes [i2,i3].
  SCOPED_TRACE("insert before the page");
  put_record(port, "t", "o1", "items", "i0", R"({"n":0})");
  auto second = read_each(ws, {"p", "u", "pf"});
  ASSERT_EQ(second.size(), 3u);
  auto& p2 = second["p"];
  EXPECT_FALSE(payload(p2).contains("data"));
  EXPECT_EQ(ids_of(cs_part(p2, "added")), ids{"i2"});
  EXPECT_TRUE(cs_part(p2, "replaced").empty());
  EXPECT_EQ(ids_of(cs_part(p2, "removed")), ids{"i4"});
  EXPECT_EQ(payload(p2).at("paging"),
            parse(R"({"page":1,"size":2,"totalItems":6,"totalPages":3})"));
  EXPECT_EQ(ids_of(cs_part(second["u"], "added")), ids{"i0"});
  EXPECT_EQ(second["u"]["payload"].at("paging"),
            parse(R"({"page":0,"size":0,"totalItems":0,"totalPages":0})"));
  auto& pf2 = second["pf"];
  EXPECT_EQ(ids_of(payload(pf2).at("data").as_array()), (ids{"i4", "i5"}));
  EXPECT_EQ(payload(pf2).at("paging"),
            parse(R"({"page":2,"size":2,"totalItems":6,"totalPages":3})"));

  // A change beyond the page alters only the totals: still a frame, with an empty change set.
  SCOPED_TRACE("insert after the page");
  put_record(port, "t", "o1", "items", "i9", R"({"n":9})");
  auto third = read_each(ws, {"p", "u", "pf"});
  ASSERT_EQ(third.size(), 3u);
  auto& p3 = third["p"];
  EXPECT_EQ(payload(p3).at("changeSet"), parse(R"({"added":[],"replaced":[],"removed":[]})"));
  EXPECT_EQ(payload(p3).at("paging"),
            parse(R"({"page":1,"size":2,"totalItems":7,"totalPages":4})"));
  EXPECT_EQ(ids_of(third["pf"]["payload"].at("data").as_array()), (ids{"i4", "i5"}));
  EXPECT_EQ(third["pf"]["payload"].at("paging"),
            parse(R"({"page":2,"size":2,"totalItems":7,"totalPages":4})"));
}

TEST_F(HubTransferModes, QueryResultEnvelopeFields) {
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("q1", "T.Items.All", items_o1, 7, "delta");
  auto check = [](const json::object& f, bool with_data, bool with_cs) {
    EXPECT_EQ(f.size(), 4u) << json::serialize(f);
    EXPECT_EQ(f.at("type"), "QueryResult");
    EXPECT_EQ(f.at("queryId"), "q1");
    EXPECT_EQ(f.at("revision"), 7);
    auto& p = f.at("payload").as_object();
    EXPECT_EQ(p.size(), 10u + (with_data ? 1 : 0) + (with_cs ? 1 : 0)) << json::serialize(p);
    ASSERT_TRUE(p.contains("correlationId") && p.at("correlationId").is_string());
    std::string cid{p.at("correlationId").as_string()};
    EXPECT_TRUE(std::regex_match(
        cid, std::regex{"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"}))
        << cid;
    EXPECT_EQ(p.contains("data"), with_data);
    EXPECT_EQ(p.contains("changeSet"), with_cs);
    EXPECT_EQ(p.at("isReady"), true);
    EXPECT_EQ(p.at("isAuthorized"), true);
    EXPECT_EQ(p.at("isValid"), true);
    EXPECT_EQ(p.at("hasExceptions"), false);
    EXPECT_EQ(p.at("isSuccess"), true);
    EXPECT_EQ(p.at("validationResults"), json::array{});
    EXPECT_EQ(p.at("exceptionMessages"), json::array{});
    EXPECT_EQ(p.at("exceptionStackTrace"), "");
    EXPECT_EQ(p.at("paging"), parse(R"({"page":0,"size":0,"totalItems":0,"totalPages":0})"));
  };
  check(ws.read_json(), true, false);
  put_record(port, "t", "o1", "items", "b", R"({"n":2})");
  check(ws.read_json(), false, true);
}

/// Applies one delta change set to `state` (by id), as a client does.
void apply(std::map<std::string, json::object>& state, const json::object& cs) {
  for (auto& v : cs.at("removed").as_array()) {
    state.erase(std::string{v.as_object().at("id").as_string()});
  }
  for (auto part : {"replaced", "added"}) {
    for (auto& v : cs.at(part).as_array()) {
      state[std::string{v.as_object().at("id").as_string()}] = v.as_object();
    }
  }
}

json::array sorted_by_n(const std::map<std::string, json::object>& state) {
  std::vector<json::object> v;
  for (auto& [id, o] : state) {
    v.push_back(o);
  }
  std::sort(v.begin(), v.end(), [](const json::object& a, const json::object& b) {
    return a.at("n").to_number<double>() < b.at("n").to_number<double>();
  });
  json::array out;
  for (auto& o : v) {
    out.push_back(o);
  }
  return out;
}

/// arc-hub §5.1's reference algorithm over two full results, as the change set object a delta
/// subscriber must receive.
json::value reference_change_set(const json::array& previous, const json::array& current) {
  std::string text;
  core::append_change_set_json(text, core::compute_change_set(previous, current));
  return json::parse(text);
}

// Once some row lacks an identity, every change set is the JSON-set comparison of the whole
// previous and current results (§5.1 step 3). Weir computes it from what each write changed;
// here random writes (updates, inserts, deletes, batches, rows gaining and losing an "ID") are
// checked against the reference run over consecutive full results, for an unbounded query and
// for a page of a paged one, byte for byte in order.
TEST_F(HubTransferModes, TheJsonSetFallbackIsTheReferencesOnEveryWrite) {
  std::mt19937 rng{2026};
  auto body = [&](int k) {
    json::object o;
    o["n"] = static_cast<int>(rng() % 12);
    if (rng() % 3 == 0) {
      o["ID"] = "X" + std::to_string(k);  // a second id-like key: no identity
    }
    if (rng() % 2 == 0) {
      o["tag"] = std::string(1 + rng() % 20, static_cast<char>('a' + rng() % 3));
    }
    return o;
  };
  std::string seed = R"({"upsert":[)";
  for (int k = 0; k < 14; ++k) {
    auto o = body(k);
    o["id"] = "r" + std::to_string(k);
    seed += (k ? "," : "") + json::serialize(o);
  }
  batch(port, seed + "]}");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("d", "T.Items.All", items_o1, 1, "delta");
  ws.subscribe("f", "T.Items.All", items_o1, 1, "full");
  ws.subscribe("pd", "T.Items.All", items_o1, 1, "delta", {{"page", 1}, {"pageSize", 4}});
  ws.subscribe("pf", "T.Items.All", items_o1, 1, "full", {{"page", 1}, {"pageSize", 4}});
  auto first = read_each(ws, {"d", "f", "pd", "pf"});
  ASSERT_EQ(first.size(), 4u);
  json::array full = payload(first["f"]).at("data").as_array();
  json::array page = payload(first["pf"]).at("data").as_array();
  auto page_of = [](const json::array& all) {
    json::array out;
    for (std::size_t i = 4; i < 8 && i < all.size(); ++i) {
      out.push_back(all[i]);
    }
    return out;
  };
  ASSERT_EQ(page, page_of(full));
  std::set<std::string> live;
  for (auto& v : full) {
    live.insert(std::string{v.at("id").as_string()});
  }
  int fallback_frames = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Every write changes the unbounded result (a version stamp at least), so "d" and "f" get
    // one frame each; the page gets one when its rows or the total change.
    auto pick = [&] {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      return *it;
    };
    std::string ops = R"({"upsert":[)";
    std::set<std::string> touched;
    int upserts = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < upserts; ++i) {
      int k = static_cast<int>(rng() % 18);
      auto id = "r" + std::to_string(k);
      if (!touched.insert(id).second) {
        continue;
      }
      auto o = body(k);
      o["id"] = id;
      ops += (touched.size() > 1 ? "," : "") + json::serialize(o);
    }
    ops += "]";
    if (live.size() > 6 && rng() % 2 == 0) {
      auto gone = pick();
      if (!touched.count(gone)) {
        ops += R"(,"delete":[")" + gone + R"("])";
      }
    }
    batch(port, ops + "}");
    json::object d, f, pd, pf;
    while (d.empty() || f.empty()) {
      auto fr = ws.read_json();
      ASSERT_FALSE(fr.empty()) << "no frame";
      auto q = std::string{fr.at("queryId").as_string()};
      (q == "d" ? d : q == "f" ? f : q == "pd" ? pd : pf) = fr;
    }
    auto now = payload(f).at("data").as_array();
    EXPECT_EQ(payload(d).at("changeSet"), reference_change_set(full, now))
        << "before " << json::serialize(full) << "\nafter " << json::serialize(now);
    auto now_page = page_of(now);
    bool page_moved = now_page != page || now.size() != full.size();
    if (page_moved) {
      while (pd.empty() || pf.empty()) {
        auto fr = ws.read_json();
        ASSERT_FALSE(fr.empty()) << "no page frame";
        auto q = std::string{fr.at("queryId").as_string()};
        (q == "pd" ? pd : pf) = fr;
      }
      EXPECT_EQ(payload(pf).at("data").as_array(), now_page);
      EXPECT_EQ(payload(pd).at("changeSet"), reference_change_set(page, now_page))
          << "before " << json::serialize(page) << "\nafter " << json::serialize(now_page);
      page = now_page;
    }
    bool identity_less = false;
    for (auto& v : full) {
      identity_less = identity_less || v.as_object().contains("ID");
    }
    for (auto& v : now) {
      identity_less = identity_less || v.as_object().contains("ID");
    }
    fallback_frames += identity_less ? 1 : 0;
    full = now;
    live.clear();
    for (auto& v : full) {
      live.insert(std::string{v.at("id").as_string()});
    }
  }
  EXPECT_GE(fallback_frames, 20) << "the writes must exercise the fallback";
  EXPECT_TRUE(ws.silent_for(200ms));
}

TEST_F(HubTransferModes, DeltasReconstructWhatAFreshFullSubscriptionSees) {
  batch(port, R"({"upsert":[{"id":"a","n":1,"c":"red"},{"id":"b","n":2,"c":"blue"},)"
              R"({"id":"c","n":3,"c":"red"}]})");
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("d", "T.Items.All", items_o1, 1, "delta");
  ws.subscribe("f", "T.Items.All", items_o1, 1, "full");
  ws.subscribe("l", "T.Items.All", items_o1, 1);
  std::map<std::string, json::object> state_d, state_l;
  for (int got = 0; got < 3; ++got) {
    auto f = ws.read_json();
    auto q = std::string{f["queryId"].as_string()};
    if (q == "d") {
      for (auto& v : payload(f).at("data").as_array()) {
        state_d[std::string{v.at("id").as_string()}] = v.as_object();
      }
    } else if (q == "l") {
      apply(state_l, payload(f).at("changeSet").as_object());
    }
  }
  const std::vector<std::function<void()>> writes{
      [&] { put_record(port, "t", "o1", "items", "d", R"({"n":4,"c":"green"})"); },
      [&] {
        auto r = http(port, "PATCH", "/v1/spaces/t/objects/o1/datasets/items/records/a",
                      R"({"$set":{"c":"yellow","deep.x":1}})");
        EXPECT_EQ(r.status, 200u) << r.body;
      },
      [&] {
        auto r = http(port, "DELETE", "/v1/spaces/t/objects/o1/datasets/items/records/b");
        EXPECT_EQ(r.status, 200u) << r.body;
      },
      [&] {
        // Moves c after d: the order changes, not just the content.
        auto r = http(port, "PATCH", "/v1/spaces/t/objects/o1/datasets/items/records/c",
                      R"({"$inc":{"n":2},"$unset":{"c":true}})");
        EXPECT_EQ(r.status, 200u) << r.body;
      },
      [&] {
        batch(port, R"({"upsert":[{"id":"e","n":0},{"id":"d","n":4,"c":"teal"},)"
                    R"({"id":"b","n":2.5}],"delete":["a"]})");
      },
      [&] { put_record(port, "t", "o1", "items", "a", R"({"n":7})"); },
      [&] { batch(port, R"({"delete":["e","b"],"upsert":[{"id":"g","n":-1}]})"); },
  };
  for (std::size_t i = 0; i < writes.size(); ++i) {
    SCOPED_TRACE("write " + std::to_string(i));
    writes[i]();
    json::array full;
    bool got_d = false, got_f = false, got_l = false;
    while (!(got_d && got_f && got_l)) {
      auto f = ws.read_json();
      ASSERT_EQ(f["type"], "QueryResult") << json::serialize(f);
      auto q = std::string{f["queryId"].as_string()};
      auto& p = payload(f);
      if (q == "d") {
        ASSERT_FALSE(got_d) << "two delta frames for one write";
        EXPECT_FALSE(p.contains("data"));
        apply(state_d, p.at("changeSet").as_object());
        got_d = true;
      } else if (q == "f") {
        ASSERT_FALSE(got_f) << "two full frames for one write";
        full = p.at("data").as_array();
        got_f = true;
      } else if (q == "l") {
        ASSERT_FALSE(got_l) << "two legacy frames for one write";
        apply(state_l, p.at("changeSet").as_object());
        EXPECT_EQ(sorted_by_n(state_l), p.at("data"));
        got_l = true;
      }
    }
    EXPECT_EQ(sorted_by_n(state_d), json::value(full));
  }
  // A fresh full subscription agrees with the reconstruction.
  ws_client fresh{port};
  fresh.expect_connected();
  fresh.subscribe("x", "T.Items.All", items_o1, 1, "full");
  auto x = fresh.read_json();
  EXPECT_EQ(sorted_by_n(state_d), payload(x).at("data"));
  EXPECT_EQ(ids_of(payload(x).at("data").as_array()), (ids{"g", "d", "c", "a"}));
}

}  // namespace
}  // namespace weir::test

// Request validation of the windowed query / subscribe HTTP API against a real node
// (windowed-subscribe §1-§4, seed 002, core/windowed_request.hpp): every refusal with its exact
// status, error code and details, the order in which the checks run (which error wins when a
// body has several problems), the JSON error envelope of a refused stream (never a 200
// text/event-stream), the methods each path takes, the body cap, a deleted object, GET /v1/auth,
// and the head of an accepted stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "sse_test_support.hpp"
#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

/// One windowed endpoint: the scope ("object", "objects", "datasets") and query or subscribe.
struct endpoint {
  std::string scope;
  bool subscribe = false;
};

const std::vector<endpoint>& all_endpoints() {
  static const std::vector<endpoint> eps = {{"object", false},   {"object", true},
                                            {"objects", false},  {"objects", true},
                                            {"datasets", false}, {"datasets", true}};
  return eps;
}

std::string path_of(const endpoint& ep, const std::string& space = "t") {
  return windowed_path(space, ep.scope, ep.subscribe);
}

/// A valid body's addressing for `ep`: {objectId, dataset}, {dataset} or {}.
json::object base_body(const endpoint& ep) {
  json::object o;
  if (ep.scope == "object") {
    o["objectId"] = "o1";
  }
  if (ep.scope != "objects") {
    o["dataset"] = "items";
  }
  return o;
}

/// `base_body(ep)` with the members of `extra` set over it, serialized.
std::string body_with(const endpoint& ep, const json::object& extra) {
  auto o = base_body(ep);
  for (const auto& kv : extra) {
    o[kv.key()] = kv.value();
  }
  return json::serialize(o);
}

/// The fields `ep` accepts, in the order the server lists them.
std::vector<std::string> accepted_for(const endpoint& ep) {
  std::vector<std::string> out;
  if (ep.scope == "object") {
    out.push_back("objectId");
  }
  if (ep.scope != "objects") {
    out.push_back("dataset");
  }
  for (const char* f : {"filter", "sort", "limit", "offset", "includeTotal"}) {
    out.push_back(f);
  }
  if (ep.subscribe) {
    out.push_back("mailboxCapacity");
    out.push_back("driftBudgetPercent");
  }
  out.push_back("projection");
  out.push_back("includeDeleted");
  return out;
}

/// The answer to one POST: for a subscribe, the head (and the body of a refusal) read by the
/// SSE client, so an accepted stream never blocks the test.
struct reply {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;                            // empty for an accepted stream
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string{} : it->second;
  }
};

reply post(std::uint16_t port, const std::string& target, bool subscribe, const std::string& body) {
  reply r;
  if (subscribe) {
    sse_client::options o;
    o.method = "POST";
    o.target = target;
    o.headers = {{"Content-Type", "application/json"}};
    o.body = body;
    sse_client c{port, o};
    r.status = c.status();
    r.headers = c.response().headers;
    if (r.status != 200) {
      r.body = c.response().body;
    }
    c.close();
    return r;
  }
  auto h = http(port, "POST", target, body, {{"Content-Type", "application/json"}});
  r.status = h.status;
  r.headers = h.headers;
  r.body = h.body;
  return r;
}

reply post(std::uint16_t port, const endpoint& ep, const std::string& body,
           const std::string& space = "t") {
  return post(port, path_of(ep, space), ep.subscribe, body);
}

reply from_http(const http_response& h) {
  return reply{h.status, h.headers, h.body};
}

/// An error answer (§3): the status, Content-Type application/json (never a text/event-stream),
/// and exactly {"error":{"code","message"[,"details"]}} with `code` and a non-empty message.
/// Returns the error object.
json::object expect_error(const reply& r, unsigned status, const std::string& code) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json") << r.body;
  EXPECT_FALSE(r.header("content-type").starts_with("text/event-stream"));
  json::value v;
  boost::system::error_code ec;
  v = json::parse(r.body, ec);
  if (ec) {
    ADD_FAILURE() << "error body is not JSON: '" << r.body << "'";
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
  for (const auto& kv : err) {
    EXPECT_TRUE(kv.key() == "code" || kv.key() == "message" || kv.key() == "details")
        << "unexpected member " << kv.key() << " in " << r.body;
  }
  if (err.contains("details")) {
    EXPECT_TRUE(err.at("details").is_object()) << r.body;
  }
  return err;
}

/// The error's details (an empty object when there are none).
json::object details_of(const json::object& err) {
  const auto* d = err.if_contains("details");
  return d && d->is_object() ? d->as_object() : json::object{};
}

/// 400 request.invalid_field (or `code`) with details.field == `field`.
void expect_field_error(const reply& r, const std::string& code, const std::string& field) {
  auto err = expect_error(r, 400, code);
  EXPECT_EQ(details_of(err)["field"], json::value(field)) << r.body;
}

/// The request was accepted: a …/query answers 200 JSON {records,…}; a subscribe answers
/// 200 text/event-stream.
void expect_accepted(const reply& r, bool subscribe) {
  ASSERT_EQ(r.status, 200u) << r.body;
  if (subscribe) {
    EXPECT_EQ(r.header("content-type"), "text/event-stream");
    return;
  }
  EXPECT_EQ(r.header("content-type"), "application/json");
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  ASSERT_FALSE(ec) << r.body;
  ASSERT_TRUE(v.is_object()) << r.body;
  ASSERT_TRUE(v.as_object().contains("records")) << r.body;
  EXPECT_TRUE(v.as_object().at("records").is_array()) << r.body;
}

std::string trace(const endpoint& ep, const std::string& body) {
  return "POST " + path_of(ep) + " " + body;
}

std::vector<std::string> sorted_strings(const json::value& v) {
  std::vector<std::string> out;
  if (!v.is_array()) {
    ADD_FAILURE() << "not an array: " << json::serialize(v);
    return out;
  }
  for (const auto& e : v.as_array()) {
    if (!e.is_string()) {
      ADD_FAILURE() << "not a string: " << json::serialize(e);
      continue;
    }
    out.emplace_back(e.as_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> strings(const json::value& v) {
  std::vector<std::string> out;
  if (!v.is_array()) {
    ADD_FAILURE() << "not an array: " << json::serialize(v);
    return out;
  }
  for (const auto& e : v.as_array()) {
    out.emplace_back(e.is_string() ? std::string{e.as_string()} : json::serialize(e));
  }
  return out;
}

class WindowedValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = start_node(dir_.path());
    ASSERT_NE(node_, nullptr);
    port_ = node_->http_port();
    // Space "t" exists once something was written into it.
    put_record(port_, "t", "o1", "items", "r1", R"({"n":1})");
  }

  temp_dir dir_;
  std::unique_ptr<app::node> node_;
  std::uint16_t port_ = 0;
};

// 1. Step 1 of §2: a space never written to is 404 space.not_found on every endpoint, whatever
// the body (it is resolved before the body is read).
TEST_F(WindowedValidation, UnknownSpaceIsNotFoundOnEveryEndpointBeforeTheBody) {
  for (const auto& ep : all_endpoints()) {
    std::vector<std::string> bodies = {
        body_with(ep, {}),
        "",
        "not json",
        "[1]",
        R"({"bogus":1})",
        R"({"objectId":"null","dataset":"items"})",
        body_with(ep, {{"filter", json::object{{"a", json::object{{"$foo", 1}}}}}}),
        body_with(ep, {{"limit", 5}}),
        body_with(ep, {{"includeDeleted", true}}),
    };
    for (const auto& body : bodies) {
      SCOPED_TRACE(trace(ep, body) + " on space nosuch");
      auto r = post(port_, ep, body, "nosuch");
      auto err = expect_error(r, 404, "space.not_found");
      auto d = details_of(err);
      if (d.contains("space")) {
        EXPECT_EQ(d["space"], json::value("nosuch")) << r.body;
      }
    }
  }
}

// 2. An empty, whitespace-only or unparsable body, or one that is not a JSON object.
TEST_F(WindowedValidation, BadJsonBodies) {
  for (const auto& ep : all_endpoints()) {
    for (std::string body :
         {"", "   \n\t ", "{", "not json", R"({"objectId":)", "[]",
          R"([{"objectId":"o1","dataset":"items"}])", "\"text\"", "5", "null", "true"}) {
      SCOPED_TRACE(trace(ep, body));
      expect_error(post(port_, ep, body), 400, "request.bad_json");
    }
  }
}

// 3. The closed field set: details.fields lists the offending keys, details.accepted the
// endpoint's accepted set, and the message names both.
TEST_F(WindowedValidation, UnknownFieldsListTheOffendersAndTheAcceptedSet) {
  for (const auto& ep : all_endpoints()) {
    auto accepted = accepted_for(ep);
    std::vector<std::pair<json::object, std::vector<std::string>>> cases = {
        {{{"filters", json::object{}}}, {"filters"}},
        {{{"filters", json::object{}}, {"foo", 1}, {"Limit", 5}}, {"Limit", "filters", "foo"}},
    };
    if (!ep.subscribe) {
      cases.push_back({{{"mailboxCapacity", 64}}, {"mailboxCapacity"}});
      cases.push_back({{{"driftBudgetPercent", 30}}, {"driftBudgetPercent"}});
      cases.push_back({{{"mailboxCapacity", 64}, {"driftBudgetPercent", 30}},
                       {"driftBudgetPercent", "mailboxCapacity"}});
    }
    if (ep.scope == "objects") {
      cases.push_back({{{"objectId", "o1"}}, {"objectId"}});
      cases.push_back({{{"dataset", "items"}}, {"dataset"}});
    }
    if (ep.scope == "datasets") {
      cases.push_back({{{"objectId", "o1"}}, {"objectId"}});
    }
    for (const auto& [extra, unknown] : cases) {
      auto body = body_with(ep, extra);
      SCOPED_TRACE(trace(ep, body));
      auto r = post(port_, ep, body);
      auto err = expect_error(r, 400, "request.unknown_field");
      auto d = details_of(err);
      EXPECT_EQ(sorted_strings(d["fields"]), unknown) << r.body;
      EXPECT_EQ(strings(d["accepted"]), accepted) << r.body;
      std::string message =
          err["message"].is_string() ? std::string{err["message"].as_string()} : std::string{};
      for (const auto& u : unknown) {
        EXPECT_NE(message.find("\"" + u + "\""), std::string::npos) << message;
      }
      for (const auto& a : accepted) {
        EXPECT_NE(message.find(a), std::string::npos) << message;
      }
    }
  }
}

// 4. objectId and dataset: missing, "" and null are missing; a non-string is invalid; a
// serialized nil is object.id_required.
TEST_F(WindowedValidation, AddressingFields) {
  for (const auto& ep : all_endpoints()) {
    if (ep.scope == "objects") {
      continue;
    }
    std::vector<std::string> ids;
    if (ep.scope == "object") {
      ids.push_back("objectId");
    }
    ids.push_back("dataset");
    for (const auto& field : ids) {
      for (const json::value& v : {json::value(""), json::value(nullptr)}) {
        auto o = base_body(ep);
        o[field] = v;
        auto body = json::serialize(o);
        SCOPED_TRACE(trace(ep, body));
        expect_field_error(post(port_, ep, body), "request.missing_field", field);
      }
      {
        auto o = base_body(ep);
        o.erase(field);
        auto body = json::serialize(o);
        SCOPED_TRACE(trace(ep, body));
        expect_field_error(post(port_, ep, body), "request.missing_field", field);
      }
      for (const json::value& v :
           {json::value(5), json::value(true), json::value(json::array{"o1"}),
            json::value(json::object{{"id", "o1"}})}) {
        auto o = base_body(ep);
        o[field] = v;
        auto body = json::serialize(o);
        SCOPED_TRACE(trace(ep, body));
        expect_field_error(post(port_, ep, body), "request.invalid_field", field);
      }
    }
    if (ep.scope == "object") {
      for (const char* nil : {"null", "None", "undefined"}) {
        auto body = body_with(ep, {{"objectId", nil}});
        SCOPED_TRACE(trace(ep, body));
        expect_error(post(port_, ep, body), 400, "object.id_required");
      }
      // objectId is checked before dataset.
      for (const std::string body : {"{}", R"({"objectId":""})", R"({"dataset":""})"}) {
        SCOPED_TRACE(trace(ep, body));
        expect_field_error(post(port_, ep, body), "request.missing_field", "objectId");
      }
      {
        std::string body = R"({"objectId":"o1"})";
        SCOPED_TRACE(trace(ep, body));
        expect_field_error(post(port_, ep, body), "request.missing_field", "dataset");
      }
    }
  }
}

// §2: an unknown dataset reads as empty; it is not an error and the stream stays live.
TEST_F(WindowedValidation, UnknownDatasetReadsAsEmpty) {
  endpoint query{"object", false};
  auto q = post(port_, query, body_with(query, {{"dataset", "nope"}}));
  expect_accepted(q, false);
  EXPECT_EQ(json::parse(q.body).as_object().at("records"), json::array{}) << q.body;

  windowed_stream s{port_, "t", "object", R"({"objectId":"o1","dataset":"nope"})"};
  ASSERT_EQ(s.status(), 200u) << s.client().response().body;
  auto snap = s.open();
  EXPECT_EQ(snap["records"], json::array{});
  EXPECT_FALSE(s.client().ended());
}

// 5. The filter: not an object, an unknown operator, a grammar error; null and {} are fine.
TEST_F(WindowedValidation, FilterErrors) {
  for (const auto& ep : all_endpoints()) {
    for (const json::value& f : {json::value("x"), json::value(5), json::value(true),
                                 json::value(json::array{json::object{{"a", 1}}})}) {
      auto body = body_with(ep, {{"filter", f}});
      SCOPED_TRACE(trace(ep, body));
      expect_field_error(post(port_, ep, body), "request.invalid_field", "filter");
    }
    {
      auto body = body_with(ep, {{"filter", json::parse(R"({"a":{"$foo":1}})")}});
      SCOPED_TRACE(trace(ep, body));
      auto r = post(port_, ep, body);
      auto d = details_of(expect_error(r, 400, "filter.unknown_operator"));
      EXPECT_EQ(d["operator"], json::value("$foo")) << r.body;
      EXPECT_EQ(d["path"], json::value("a")) << r.body;
    }
    {
      auto body = body_with(ep, {{"filter", json::parse(R"({"b.c":{"$gt":1,"$bar":2}})")}});
      SCOPED_TRACE(trace(ep, body));
      auto r = post(port_, ep, body);
      auto d = details_of(expect_error(r, 400, "filter.unknown_operator"));
      EXPECT_EQ(d["operator"], json::value("$bar")) << r.body;
      EXPECT_EQ(d["path"], json::value("b.c")) << r.body;
    }
    {
      auto body = body_with(ep, {{"filter", json::parse(R"({"$foo":[{"a":1}]})")}});
      SCOPED_TRACE(trace(ep, body));
      auto r = post(port_, ep, body);
      auto d = details_of(expect_error(r, 400, "filter.unknown_operator"));
      EXPECT_EQ(d["operator"], json::value("$foo")) << r.body;
    }
    for (const char* bad : {R"({"$and":5})", R"({"a":{"$in":3}})", R"({"$or":[]})",
                            R"({"$nor":[5]})", R"({"a":{"$size":"x"}})", R"({"a":{"$not":{}}})",
                            R"({"a":{"$regex":"("}})", R"({"a":{"$exists":"yes"}})"}) {
      auto body = body_with(ep, {{"filter", json::parse(bad)}});
      SCOPED_TRACE(trace(ep, body));
      expect_error(post(port_, ep, body), 400, "filter.invalid");
    }
    for (const json::value& f : {json::value(nullptr), json::value(json::object{})}) {
      auto body = body_with(ep, {{"filter", f}});
      SCOPED_TRACE(trace(ep, body));
      expect_accepted(post(port_, ep, body), ep.subscribe);
    }
    // A filter is evaluated on every record a pass reads: more than 256 terms is refused (an $or
    // of 129 equalities, 258), a long $in of scalars is one term and is taken.
    {
      json::array branches;
      for (int i = 0; i < 129; ++i) {
        branches.push_back(json::object{{"a", i}});
      }
      auto body = body_with(ep, {{"filter", json::object{{"$or", std::move(branches)}}}});
      SCOPED_TRACE(trace(ep, "(a long filter)"));
      auto r = post(port_, ep, body);
      expect_error(r, 400, "filter.invalid");
      EXPECT_NE(r.body.find("more than 256 terms"), std::string::npos) << r.body;
    }
    {
      json::array values;
      for (int i = 0; i < 20000; ++i) {
        values.push_back(i);
      }
      auto body = body_with(
          ep, {{"filter", json::object{{"a", json::object{{"$in", std::move(values)}}}}}});
      SCOPED_TRACE(trace(ep, "(a long filter)"));
      expect_accepted(post(port_, ep, body), ep.subscribe);
    }
  }
}

// 6. A live window has to be ordered: limit > 0 without sort is refused on subscribe only.
TEST_F(WindowedValidation, LimitWithoutSortOnSubscribeOnly) {
  for (const auto& ep : all_endpoints()) {
    auto body = body_with(ep, {{"limit", 5}});
    SCOPED_TRACE(trace(ep, body));
    auto r = post(port_, ep, body);
    if (ep.subscribe) {
      expect_field_error(r, "request.invalid_field", "limit");
    } else {
      expect_accepted(r, false);
    }
    // With a sort, or with a limit that means "unbounded", both are accepted.
    for (const auto& extra :
         {json::object{{"limit", 5}, {"sort", json::array{"n"}}}, json::object{{"limit", 0}},
          json::object{{"limit", -1}}, json::object{{"limit", nullptr}}}) {
      auto ok = body_with(ep, extra);
      SCOPED_TRACE(trace(ep, ok));
      expect_accepted(post(port_, ep, ok), ep.subscribe);
    }
  }
}

// 7. Decision 3: a field of the wrong JSON type is refused with its name, never defaulted.
TEST_F(WindowedValidation, WrongJsonTypesAreInvalidFields) {
  for (const auto& ep : all_endpoints()) {
    std::vector<std::pair<json::object, std::string>> cases = {
        {{{"limit", "x"}}, "limit"},
        {{{"limit", 1.5}}, "limit"},
        {{{"limit", true}}, "limit"},
        {{{"limit", "x"}, {"sort", json::array{"n"}}}, "limit"},
        {{{"offset", "1"}}, "offset"},
        {{{"offset", 0.5}}, "offset"},
        {{{"includeTotal", "true"}}, "includeTotal"},
        {{{"includeTotal", 1}}, "includeTotal"},
        {{{"sort", "x"}}, "sort"},
        {{{"sort", json::array{1}}}, "sort"},
        {{{"sort", json::array{"a..b"}}}, "sort"},
        {{{"sort", json::array{"n", "-"}}}, "sort"},
        {{{"sort", json::object{{"n", 1}}}}, "sort"},
        {{{"sort", json::array(33, json::value("n"))}}, "sort"},  // at most 32 keys
        {{{"includeDeleted", "yes"}}, "includeDeleted"},
    };
    if (ep.subscribe) {
      cases.push_back({{{"mailboxCapacity", "big"}}, "mailboxCapacity"});
      cases.push_back({{{"mailboxCapacity", 16.5}}, "mailboxCapacity"});
      cases.push_back({{{"driftBudgetPercent", true}}, "driftBudgetPercent"});
      cases.push_back({{{"driftBudgetPercent", "30"}}, "driftBudgetPercent"});
    }
    for (const auto& [extra, field] : cases) {
      auto body = body_with(ep, extra);
      SCOPED_TRACE(trace(ep, body));
      expect_field_error(post(port_, ep, body), "request.invalid_field", field);
    }
    // The right types, including integral numbers written as 5.0 and out-of-range values that
    // the spec clamps or defaults, are accepted.
    std::vector<json::object> fine = {
        {{"limit", 5.0}, {"sort", json::array{"-n", "a.b"}}},
        {{"offset", 2}, {"includeTotal", true}},
        {{"offset", -3}, {"includeTotal", false}},
        {{"sort", json::array{}}},
        {{"sort", json::array(32, json::value("n"))}},
    };
    if (ep.subscribe) {
      fine.push_back({{"mailboxCapacity", 1}, {"driftBudgetPercent", 0}});
      fine.push_back({{"mailboxCapacity", -5}, {"driftBudgetPercent", 500}});
    }
    for (const auto& extra : fine) {
      auto body = body_with(ep, extra);
      SCOPED_TRACE(trace(ep, body));
      expect_accepted(post(port_, ep, body), ep.subscribe);
    }
  }
}

// 8. Projection errors (§9): all request.invalid_field with details.field "projection".
TEST_F(WindowedValidation, ProjectionErrors) {
  json::object many;
  for (int i = 0; i < 129; ++i) {
    many["f" + std::to_string(i)] = 1;
  }
  json::object max;
  for (int i = 0; i < 128; ++i) {
    max["f" + std::to_string(i)] = 1;
  }
  struct bad_case {
    json::value projection;
    std::string path;  // the offending path when the error names one
  };
  std::vector<bad_case> bad = {
      {json::object{{"id", 0}}, "id"},
      {json::object{{"id", -1}}, "id"},
      {json::object{{"id", false}}, "id"},
      {many, ""},
      {json::object{{"a.b.c.d.e.f.g.h.i", 1}}, "a.b.c.d.e.f.g.h.i"},
      {json::object{{"a..b", 1}}, "a..b"},
      {json::object{{"a.*", 1}}, "a.*"},
      {json::object{{"*", 1}}, "*"},
      {json::object{{"", 1}}, ""},
      {json::object{{"a", 2}}, "a"},
      {json::object{{"a", "yes"}}, "a"},
      {json::object{{"a", 0.5}}, "a"},
      {json::value("a"), ""},
      {json::array{"a"}, ""},
  };
  for (const auto& ep : all_endpoints()) {
    for (const auto& c : bad) {
      auto body = body_with(ep, {{"projection", c.projection}});
      SCOPED_TRACE(trace(ep, body));
      auto r = post(port_, ep, body);
      auto d = details_of(expect_error(r, 400, "request.invalid_field"));
      EXPECT_EQ(d["field"], json::value("projection")) << r.body;
      if (!c.path.empty() && d.contains("path")) {
        EXPECT_EQ(d["path"], json::value(c.path)) << r.body;
      }
    }
    for (const auto& p : {json::value(max), json::value(json::object{{"a.b.c.d.e.f.g.h", 1}}),
                          json::value(json::object{{"id", 1}, {"n", true}}),
                          json::value(json::object{{"n", -1}, {"_ver", 0}}),
                          json::value(json::object{}), json::value(nullptr)}) {
      auto body = body_with(ep, {{"projection", p}});
      SCOPED_TRACE(trace(ep, body));
      expect_accepted(post(port_, ep, body), ep.subscribe);
    }
  }
}

// 9. includeDeleted is snapshot-only: true is refused on subscribe, fine on …/query.
TEST_F(WindowedValidation, IncludeDeletedIsSnapshotOnly) {
  for (const auto& ep : all_endpoints()) {
    auto body = body_with(ep, {{"includeDeleted", true}});
    SCOPED_TRACE(trace(ep, body));
    auto r = post(port_, ep, body);
    if (ep.subscribe) {
      expect_field_error(r, "request.invalid_field", "includeDeleted");
    } else {
      expect_accepted(r, false);
    }
    for (const json::value& v : {json::value(false), json::value(nullptr)}) {
      auto ok = body_with(ep, {{"includeDeleted", v}});
      SCOPED_TRACE(trace(ep, ok));
      expect_accepted(post(port_, ep, ok), ep.subscribe);
    }
  }
}

// 10. The validation order of §2 over HTTP: the earlier check wins.
TEST_F(WindowedValidation, ValidationOrder) {
  const endpoint query{"object", false};
  const endpoint sub{"object", true};
  struct order_case {
    std::string body;
    std::string code;
    std::string field;  // details.field; "" when the error has none to check
    bool subscribe_only;
  };
  std::vector<order_case> cases = {
      // 3 (unknown field) beats 4 (missing objectId).
      {R"({"bogus":1,"filter":{"$and":5}})", "request.unknown_field", "", false},
      // 4 (missing objectId) beats 5 (bad filter).
      {R"({"dataset":"items","filter":{"a":{"$foo":1}}})", "request.missing_field", "objectId",
       false},
      {R"({"objectId":"o1","filter":{"$and":5}})", "request.missing_field", "dataset", false},
      {R"({"objectId":"null","dataset":"items","filter":{"$and":5}})", "object.id_required", "",
       false},
      // 5 (bad filter) beats 6 (sort / number types).
      {R"({"objectId":"o1","dataset":"items","filter":5,"sort":"x"})", "request.invalid_field",
       "filter", false},
      {R"({"objectId":"o1","dataset":"items","filter":{"$and":5},"limit":"x"})", "filter.invalid",
       "", false},
      // 5 (bad filter) beats 6 (limit without sort).
      {R"({"objectId":"o1","dataset":"items","filter":{"$and":5},"limit":5})", "filter.invalid", "",
       true},
      {R"({"objectId":"o1","dataset":"items","filter":{"a":{"$foo":1}},"limit":5})",
       "filter.unknown_operator", "", true},
      // 6 beats 7 (bad projection).
      {R"({"objectId":"o1","dataset":"items","limit":5,"projection":{"a..b":1}})",
       "request.invalid_field", "limit", true},
      {R"({"objectId":"o1","dataset":"items","sort":[1],"projection":{"a..b":1}})",
       "request.invalid_field", "sort", false},
      {R"({"objectId":"o1","dataset":"items","offset":"1","projection":{"a..b":1}})",
       "request.invalid_field", "offset", false},
      // 7 (bad projection) beats 8 (includeDeleted).
      {R"({"objectId":"o1","dataset":"items","projection":{"id":0},"includeDeleted":true})",
       "request.invalid_field", "projection", true},
      {R"({"objectId":"o1","dataset":"items","projection":{"id":0},"includeDeleted":"yes"})",
       "request.invalid_field", "projection", false},
  };
  for (const auto& c : cases) {
    for (const auto& ep : {query, sub}) {
      if (c.subscribe_only && !ep.subscribe) {
        continue;
      }
      SCOPED_TRACE(trace(ep, c.body));
      auto r = post(port_, ep, c.body);
      auto err = expect_error(r, 400, c.code);
      if (!c.field.empty()) {
        EXPECT_EQ(details_of(err)["field"], json::value(c.field)) << r.body;
      }
    }
  }
  // On …/query the same bodies get past the subscribe-only checks to the next problem.
  {
    std::string body = R"({"objectId":"o1","dataset":"items","limit":5,"projection":{"a..b":1}})";
    SCOPED_TRACE(trace(query, body));
    expect_field_error(post(port_, query, body), "request.invalid_field", "projection");
  }
  {
    std::string body =
        R"({"objectId":"o1","dataset":"items","projection":{"a":2},"includeDeleted":true})";
    SCOPED_TRACE(trace(query, body));
    expect_field_error(post(port_, query, body), "request.invalid_field", "projection");
  }
}

/// A valid body for `ep` of exactly `size` bytes (a filter on a padded string).
std::string padded_body(const endpoint& ep, std::size_t size) {
  auto o = base_body(ep);
  o["filter"] = json::object{{"pad", ""}};
  auto text = json::serialize(o);
  EXPECT_LE(text.size(), size);
  o["filter"] = json::object{{"pad", std::string(size - text.size(), 'x')}};
  text = json::serialize(o);
  EXPECT_EQ(text.size(), size);
  return text;
}

// 11. A body over http.maxBodyBytes is 413 request.too_large; one at the limit is read.
TEST_F(WindowedValidation, BodyOverMaxBodyBytesIsTooLarge) {
  temp_dir dir;
  auto node = start_node(dir.path(), "http: { maxBodyBytes: 1024 }");
  ASSERT_NE(node, nullptr);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "r1", R"({"n":1})");
  for (const auto& ep : all_endpoints()) {
    for (std::size_t size : {2048, 1025}) {
      SCOPED_TRACE("POST " + path_of(ep) + " with a " + std::to_string(size) + "-byte body");
      expect_error(post(port, ep, padded_body(ep, size)), 413, "request.too_large");
    }
    SCOPED_TRACE("POST " + path_of(ep) + " with a 1024-byte body");
    expect_accepted(post(port, ep, padded_body(ep, 1024)), ep.subscribe);
  }
}

// §2 step 1 before step 2: the space is resolved before the body is read, so an unknown space
// is 404 space.not_found even when the body is over the cap (as for every other bad body).
TEST_F(WindowedValidation, UnknownSpaceWinsOverBodyTooLarge) {
  temp_dir dir;
  auto node = start_node(dir.path(), "http: { maxBodyBytes: 1024 }");
  ASSERT_NE(node, nullptr);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "r1", R"({"n":1})");
  for (const auto& ep : all_endpoints()) {
    SCOPED_TRACE("POST " + path_of(ep, "nosuch") + " with a 2048-byte body");
    expect_error(post(port, ep, padded_body(ep, 2048), "nosuch"), 404, "space.not_found");
  }
}

// A foreign page's POST (no preflight needed) is refused for its Origin before anything else is
// looked at: it learns neither whether the space exists nor how large a body may be.
TEST_F(WindowedValidation, UntrustedOriginIsRefusedBeforeTheSpaceAndTheBody) {
  temp_dir dir;
  auto node = start_node(dir.path(), "http: { maxBodyBytes: 1024 }");
  ASSERT_NE(node, nullptr);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "r1", R"({"n":1})");
  const std::map<std::string, std::string> foreign{{"Origin", "https://evil.example"},
                                                   {"Content-Type", "application/json"}};
  for (const auto& ep : all_endpoints()) {
    for (const std::string space : {"t", "nosuch"}) {
      for (std::size_t size : {512, 2048}) {
        SCOPED_TRACE("POST " + path_of(ep, space) + " with a " + std::to_string(size) +
                     "-byte body from a foreign Origin");
        expect_error(
            from_http(http(port, "POST", path_of(ep, space), padded_body(ep, size), foreign)), 403,
            "request.origin_forbidden");
      }
    }
  }
}

// 12. Windowed paths take POST only (405, Allow: POST), except that other methods on
// /v1/spaces/{s}/objects/query are the write API's object "query".
TEST_F(WindowedValidation, WrongMethodIsNotAllowed) {
  for (const std::string target :
       {"/v1/spaces/t/query", "/v1/spaces/t/query/subscribe", "/v1/spaces/t/datasets/query",
        "/v1/spaces/t/datasets/query/subscribe", "/v1/spaces/t/objects/query/subscribe"}) {
    for (const std::string method : {"GET", "PUT", "DELETE", "PATCH"}) {
      SCOPED_TRACE(method + " " + target);
      std::string body = method == "PUT" || method == "PATCH" ? R"({"dataset":"items"})" : "";
      auto r = from_http(http(port_, method, target, body));
      auto err = expect_error(r, 405, "method.not_allowed");
      EXPECT_EQ(r.header("allow"), "POST");
      auto d = details_of(err);
      if (d.contains("allow")) {
        EXPECT_EQ(d["allow"], json::value("POST")) << r.body;
      }
    }
  }
  // PUT /v1/spaces/t/objects/query writes the property document of an object named "query".
  auto put = http(port_, "PUT", "/v1/spaces/t/objects/query", R"({"title":"q"})");
  ASSERT_EQ(put.status, 200u) << put.body;
  EXPECT_EQ(put.headers["content-type"], "application/json");
  auto put_json = put.json();
  auto vid = put_json.as_object().if_contains("versionId");
  EXPECT_TRUE(vid && vid->is_string() && !vid->as_string().empty()) << put.body;
  auto rows = windowed_query(port_, "t", "objects", "{}");
  ASSERT_EQ(rows.status, 200u) << rows.body;
  auto by_id = by_record_id(rows.json().as_object().at("records"));
  ASSERT_TRUE(by_id.count("query")) << rows.body;
  EXPECT_EQ(by_id["query"].as_object()["title"], json::value("q")) << rows.body;
  // DELETE there deletes that object, not a windowed refusal.
  auto del = http(port_, "DELETE", "/v1/spaces/t/objects/query");
  EXPECT_EQ(del.status, 200u) << del.body;
  auto after = windowed_query(port_, "t", "objects", "{}");
  ASSERT_EQ(after.status, 200u) << after.body;
  EXPECT_FALSE(by_record_id(after.json().as_object().at("records")).count("query")) << after.body;
}

// 13. Every refusal of a subscribe is the JSON envelope, never the start of a stream.
TEST_F(WindowedValidation, RefusedSubscribeIsNeverAStream) {
  for (const auto& ep : all_endpoints()) {
    if (!ep.subscribe) {
      continue;
    }
    std::vector<std::pair<std::string, std::string>> cases = {
        {"", "request.bad_json"},
        {R"({"bogus":1})", "request.unknown_field"},
        {body_with(ep, {{"limit", 5}}), "request.invalid_field"},
        {body_with(ep, {{"includeDeleted", true}}), "request.invalid_field"},
        {body_with(ep, {{"filter", json::parse(R"({"a":{"$foo":1}})")}}),
         "filter.unknown_operator"},
    };
    for (const auto& [body, code] : cases) {
      SCOPED_TRACE(trace(ep, body));
      windowed_stream s{port_, "t", ep.scope, body};
      EXPECT_NE(s.status(), 200u);
      EXPECT_NE(s.client().header("content-type"), "text/event-stream");
      EXPECT_TRUE(s.client().ended());
      reply r{s.status(), s.client().response().headers, s.client().response().body};
      expect_error(r, 400, code);
    }
  }
}

// 14. A deleted object is 410 object.deleted on query and subscribe (after the body validated),
// and usable again once written to.
TEST_F(WindowedValidation, DeletedObjectIsGone) {
  put_record(port_, "t", "gone", "items", "g1", R"({"n":1})");
  const endpoint query{"object", false};
  const endpoint sub{"object", true};
  const std::string body = R"({"objectId":"gone","dataset":"items"})";
  expect_accepted(post(port_, query, body), false);
  auto del = http(port_, "DELETE", "/v1/spaces/t/objects/gone");
  ASSERT_EQ(del.status, 200u) << del.body;

  for (const auto& ep : {query, sub}) {
    SCOPED_TRACE(trace(ep, body));
    expect_error(post(port_, ep, body), 410, "object.deleted");
    // Another dataset of the deleted object is gone as well.
    auto other = R"({"objectId":"gone","dataset":"other"})";
    SCOPED_TRACE(trace(ep, other));
    expect_error(post(port_, ep, other), 410, "object.deleted");
  }
  // Body validation still comes first (step 9 is last).
  {
    std::string bad = R"({"objectId":"gone","dataset":"items","limit":5})";
    SCOPED_TRACE(trace(sub, bad));
    expect_field_error(post(port_, sub, bad), "request.invalid_field", "limit");
  }
  {
    std::string bad = R"({"objectId":"gone","dataset":"items","bogus":1})";
    SCOPED_TRACE(trace(query, bad));
    expect_error(post(port_, query, bad), 400, "request.unknown_field");
  }

  put_record(port_, "t", "gone", "items", "g2", R"({"n":2})");
  auto q = post(port_, query, body);
  expect_accepted(q, false);
  auto rows = by_record_id(json::parse(q.body).as_object().at("records"));
  EXPECT_TRUE(rows.count("g2")) << q.body;
  windowed_stream s{port_, "t", "object", body};
  ASSERT_EQ(s.status(), 200u) << s.client().response().body;
  auto snap = s.open();
  ASSERT_TRUE(snap.contains("records"));
  EXPECT_TRUE(by_record_id(snap["records"]).count("g2")) << json::serialize(snap);
}

// 15. GET /v1/auth answers who the caller is; other methods are 405.
TEST_F(WindowedValidation, Auth) {
  auto r = http(port_, "GET", "/v1/auth");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.headers["content-type"], "application/json");
  EXPECT_EQ(r.json(), json::parse(R"({"authorized":true,"accountId":""})")) << r.body;
  for (const std::string method : {"POST", "PUT", "DELETE"}) {
    SCOPED_TRACE(method + " /v1/auth");
    auto n = from_http(http(port_, method, "/v1/auth", method == "DELETE" ? "" : "{}"));
    expect_error(n, 405, "method.not_allowed");
    EXPECT_NE(n.header("allow").find("GET"), std::string::npos) << n.header("allow");
  }
}

// 16. An accepted subscribe: 200 with the stream's headers, then ready and snapshot first.
TEST_F(WindowedValidation, AcceptedSubscribeHeadersAndFirstFrames) {
  for (const auto& ep : all_endpoints()) {
    if (!ep.subscribe) {
      continue;
    }
    for (bool total : {false, true}) {
      auto body = body_with(ep, {{"sort", json::array{"n"}}, {"limit", 10}});
      if (total) {
        body = body_with(ep, {{"sort", json::array{"n"}}, {"limit", 10}, {"includeTotal", true}});
      }
      SCOPED_TRACE(trace(ep, body));
      windowed_stream s{port_, "t", ep.scope, body};
      ASSERT_EQ(s.status(), 200u) << s.client().response().body;
      EXPECT_EQ(s.client().header("content-type"), "text/event-stream");
      EXPECT_EQ(s.client().header("cache-control"), "no-cache");
      EXPECT_EQ(s.client().header("x-accel-buffering"), "no");
      EXPECT_EQ(s.client().header("connection"), "keep-alive");
      auto ready = s.next();
      ASSERT_TRUE(ready);
      EXPECT_EQ(ready->raw, "event: ready\ndata: {}");
      auto snap = s.next();
      ASSERT_TRUE(snap);
      EXPECT_EQ(snap->event, "snapshot") << snap->raw;
      EXPECT_EQ(snap->raw.rfind("event: snapshot\ndata: {", 0), 0u) << snap->raw;
      ASSERT_TRUE(snap->data.is_object()) << snap->raw;
      const auto& o = snap->data.as_object();
      ASSERT_TRUE(o.contains("records") && o.at("records").is_array()) << snap->raw;
      if (ep.scope != "objects") {
        auto rows = by_record_id(o.at("records"));
        auto id = ep.scope == "object" ? "r1" : "o1/r1";
        EXPECT_EQ(rows.size(), 1u) << snap->raw;
        EXPECT_TRUE(rows.count(id)) << snap->raw;
      }
      EXPECT_EQ(o.contains("total"), total) << snap->raw;
      EXPECT_EQ(o.contains("hasNext"), total) << snap->raw;
      if (total) {
        EXPECT_TRUE(o.at("total").is_number()) << snap->raw;
        EXPECT_EQ(o.at("hasNext"), json::value(false)) << snap->raw;
      }
      EXPECT_FALSE(s.client().ended());
      s.close();
    }
  }
}

}  // namespace
}  // namespace weir::test

// Tests for core/windowed_request: the closed field set of every windowed endpoint, the
// validation order that decides which error wins (windowed-subscribe §2), Decision 3's type
// checks, the defaults and clamps, the window key and the canonical body.
#include "core/windowed_request.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

using boost::json::parse;

constexpr windowed_scope all_scopes[] = {windowed_scope::object, windowed_scope::objects,
                                         windowed_scope::datasets};

const char* const every_field[] = {"objectId",     "dataset",         "filter",
                                   "sort",         "limit",           "offset",
                                   "includeTotal", "mailboxCapacity", "driftBudgetPercent",
                                   "projection",   "includeDeleted"};

/// The text overload (a string literal alone would be ambiguous with the boost::json::value one).
result<windowed_request> req(windowed_scope scope, bool subscribe, std::string_view body) {
  return parse_windowed_request(scope, subscribe, "spc", body);
}

result<windowed_request> object_sub(std::string_view body) {
  return req(windowed_scope::object, true, body);
}

result<windowed_request> object_query(std::string_view body) {
  return req(windowed_scope::object, false, body);
}

/// A valid value for `field` that is accepted wherever the field is.
std::string valid_value(std::string_view field) {
  if (field == "objectId") {
    return R"("obj_1")";
  }
  if (field == "dataset") {
    return R"("chat_messages")";
  }
  if (field == "filter") {
    return R"({"a":1})";
  }
  if (field == "sort") {
    return R"(["-n"])";
  }
  if (field == "limit") {
    return "5";
  }
  if (field == "offset") {
    return "2";
  }
  if (field == "includeTotal") {
    return "true";
  }
  if (field == "mailboxCapacity") {
    return "64";
  }
  if (field == "driftBudgetPercent") {
    return "40";
  }
  if (field == "projection") {
    return R"({"a":1})";
  }
  return "false";  // includeDeleted
}

std::string body_of(const std::vector<std::string_view>& fields) {
  std::string out = "{";
  for (auto f : fields) {
    if (out.size() > 1) {
      out.push_back(',');
    }
    out.append("\"").append(f).append("\":").append(valid_value(f));
  }
  out.push_back('}');
  return out;
}

/// The smallest valid body for a scope (its addressing fields).
std::string minimal(windowed_scope scope) {
  switch (scope) {
    case windowed_scope::object:
      return R"({"objectId":"o","dataset":"d")";
    case windowed_scope::objects:
      return "{";
    case windowed_scope::datasets:
      return R"({"dataset":"d")";
  }
  return "{";
}

/// `minimal(scope)` plus `extra` members ("\"limit\":5").
std::string with(windowed_scope scope, std::string_view extra) {
  std::string out = minimal(scope);
  if (!extra.empty()) {
    if (out.size() > 1) {
      out.push_back(',');
    }
    out.append(extra);
  }
  out.push_back('}');
  return out;
}

void expect_error(const result<windowed_request>& r, std::string_view code, std::string_view field,
                  std::string_view context) {
  ASSERT_FALSE(r) << context;
  EXPECT_EQ(r.error().code, code) << context << ": " << r.error().message;
  EXPECT_FALSE(r.error().message.empty()) << context;
  if (!field.empty()) {
    const auto* f = r.error().details.if_contains("field");
    ASSERT_NE(f, nullptr) << context << ": " << boost::json::serialize(r.error().details);
    ASSERT_TRUE(f->is_string()) << context;
    EXPECT_EQ(std::string_view{f->get_string()}, field) << context;
  }
}

// ---- accepted fields -----------------------------------------------------------------------

TEST(WindowedRequest, ToString) {
  EXPECT_EQ(to_string(windowed_scope::object), "object");
  EXPECT_EQ(to_string(windowed_scope::objects), "objects");
  EXPECT_EQ(to_string(windowed_scope::datasets), "datasets");
}

TEST(WindowedRequest, AcceptedFieldsPerEndpoint) {
  using list = std::vector<std::string_view>;
  EXPECT_EQ(accepted_fields(windowed_scope::object, false),
            (list{"objectId", "dataset", "filter", "sort", "limit", "offset", "includeTotal",
                  "projection", "includeDeleted"}));
  EXPECT_EQ(accepted_fields(windowed_scope::object, true),
            (list{"objectId", "dataset", "filter", "sort", "limit", "offset", "includeTotal",
                  "mailboxCapacity", "driftBudgetPercent", "projection", "includeDeleted"}));
  EXPECT_EQ(
      accepted_fields(windowed_scope::objects, false),
      (list{"filter", "sort", "limit", "offset", "includeTotal", "projection", "includeDeleted"}));
  EXPECT_EQ(accepted_fields(windowed_scope::objects, true),
            (list{"filter", "sort", "limit", "offset", "includeTotal", "mailboxCapacity",
                  "driftBudgetPercent", "projection", "includeDeleted"}));
  EXPECT_EQ(accepted_fields(windowed_scope::datasets, false),
            (list{"dataset", "filter", "sort", "limit", "offset", "includeTotal", "projection",
                  "includeDeleted"}));
  EXPECT_EQ(accepted_fields(windowed_scope::datasets, true),
            (list{"dataset", "filter", "sort", "limit", "offset", "includeTotal", "mailboxCapacity",
                  "driftBudgetPercent", "projection", "includeDeleted"}));
}

TEST(WindowedRequest, EveryAcceptedFieldTogetherParses) {
  for (auto scope : all_scopes) {
    for (bool sub : {false, true}) {
      auto body = body_of(accepted_fields(scope, sub));
      auto r = req(scope, sub, body);
      ASSERT_TRUE(r) << body << ": " << r.error().code << " " << r.error().message;
      EXPECT_EQ(r->scope, scope);
      EXPECT_EQ(r->subscribe, sub);
      EXPECT_EQ(r->space, "spc");
      EXPECT_EQ(r->object_id, scope == windowed_scope::object ? "obj_1" : "") << body;
      EXPECT_EQ(r->dataset, scope == windowed_scope::objects ? "objects" : "chat_messages") << body;
      EXPECT_EQ(r->limit, 5U);
      EXPECT_EQ(r->offset, 2U);
      EXPECT_TRUE(r->include_total);
      EXPECT_EQ(r->mailbox_capacity, sub ? 64U : default_mailbox_capacity);
      EXPECT_EQ(r->drift_budget_percent, sub ? 40U : default_drift_budget_percent);
      EXPECT_TRUE(r->proj.active());
      EXPECT_FALSE(r->include_deleted);
      EXPECT_EQ(r->sort_keys, (std::vector<std::string>{"-n"}));
      ASSERT_EQ(r->order.keys().size(), 1U);
      EXPECT_EQ(r->order.keys()[0], (sort_key{"n", true}));
      EXPECT_EQ(r->filter_json, parse(R"({"a":1})"));
      EXPECT_FALSE(r->where.matches_all());
    }
  }
}

TEST(WindowedRequest, EveryFieldOutsideTheSetIsUnknown) {
  for (auto scope : all_scopes) {
    for (bool sub : {false, true}) {
      auto accepted = accepted_fields(scope, sub);
      for (std::string_view field : every_field) {
        if (std::find(accepted.begin(), accepted.end(), field) != accepted.end()) {
          continue;
        }
        // The rest of the body is valid, so only the unknown field is wrong.
        auto fields = accepted;
        fields.push_back(field);
        auto body = body_of(fields);
        auto r = req(scope, sub, body);
        std::string ctx = std::string{to_string(scope)} + (sub ? " subscribe " : " query ") + body;
        expect_error(r, "request.unknown_field", "", ctx);
        if (!r) {
          EXPECT_EQ(r.error().details.at("fields"), (boost::json::array{field})) << ctx;
        }
      }
    }
  }
}

TEST(WindowedRequest, UnknownFieldNamesSpecifics) {
  // The concrete cases of the brief, spelled out.
  auto q = object_query(R"({"objectId":"o","dataset":"d","mailboxCapacity":16})");
  expect_error(q, "request.unknown_field", "", "mailboxCapacity on query");
  q = object_query(R"({"objectId":"o","dataset":"d","driftBudgetPercent":30})");
  expect_error(q, "request.unknown_field", "", "driftBudgetPercent on query");
  auto o = req(windowed_scope::objects, true, R"({"objectId":"o"})");
  expect_error(o, "request.unknown_field", "", "objectId on objects");
  o = req(windowed_scope::objects, false, R"({"dataset":"objects"})");
  expect_error(o, "request.unknown_field", "", "dataset on objects");
  auto d = req(windowed_scope::datasets, true, R"({"objectId":"o"})");
  expect_error(d, "request.unknown_field", "", "objectId on datasets");
}

TEST(WindowedRequest, UnknownFieldDetailsAndMessage) {
  auto r = object_sub(R"({"objectId":"o","dataset":"d","filters":{}})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "request.unknown_field");
  EXPECT_EQ(r.error().message,
            "unknown field \"filters\"; accepted fields: objectId, dataset, filter, sort, limit, "
            "offset, includeTotal, mailboxCapacity, driftBudgetPercent, projection, "
            "includeDeleted");
  EXPECT_EQ(boost::json::serialize(r.error().details),
            R"({"fields":["filters"],"accepted":["objectId","dataset","filter","sort","limit",)"
            R"("offset","includeTotal","mailboxCapacity","driftBudgetPercent","projection",)"
            R"("includeDeleted"]})");

  // Several offenders: all listed, in body order; the accepted list follows the endpoint.
  auto many =
      req(windowed_scope::objects, false, R"({"zeta":1,"limit":2,"objectId":"o","Sort":[]})");
  ASSERT_FALSE(many);
  EXPECT_EQ(many.error().code, "request.unknown_field");
  EXPECT_EQ(many.error().details.at("fields"), parse(R"(["zeta","objectId","Sort"])"));
  EXPECT_EQ(many.error().details.at("accepted"),
            parse(R"(["filter","sort","limit","offset","includeTotal","projection",)"
                  R"("includeDeleted"])"));
  EXPECT_EQ(many.error().message,
            "unknown fields \"zeta\", \"objectId\", \"Sort\"; accepted fields: filter, sort, "
            "limit, offset, includeTotal, projection, includeDeleted");
}

// ---- the body itself -----------------------------------------------------------------------

TEST(WindowedRequest, BadJson) {
  std::string deep(100, '[');
  deep.append(100, ']');
  const std::vector<std::string> bodies{"",    " ", " \t\r\n ", "{",     "nope", "{\"objectId\":}",
                                        "[1]", "5", "null",     "\"x\"", "true", "{\"a\":1} x",
                                        deep};
  for (const auto& body : bodies) {
    for (auto scope : all_scopes) {
      auto r = req(scope, true, body);
      expect_error(r, "request.bad_json", "", "body: " + body);
    }
  }
  // The already-parsed overload refuses non-objects the same way.
  auto r = parse_windowed_request(windowed_scope::object, false, "spc", parse("[]"));
  expect_error(r, "request.bad_json", "", "parsed []");
}

TEST(WindowedRequest, ParsedOverloadMatchesTextOverload) {
  const char* body = R"({"objectId":"o","dataset":"d","sort":["n"],"limit":3})";
  auto a = object_sub(body);
  auto b = parse_windowed_request(windowed_scope::object, true, "spc", parse(body));
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(a->key, b->key);
}

// ---- addressing ----------------------------------------------------------------------------

TEST(WindowedRequest, ObjectIdAndDataset) {
  struct error_case {
    const char* body;
    const char* code;
    const char* field;
  };
  const error_case cases[] = {
      {R"({"dataset":"d"})", "request.missing_field", "objectId"},
      {R"({"objectId":"","dataset":"d"})", "request.missing_field", "objectId"},
      {R"({"objectId":null,"dataset":"d"})", "request.missing_field", "objectId"},
      {R"({"objectId":5,"dataset":"d"})", "request.invalid_field", "objectId"},
      {R"({"objectId":["o"],"dataset":"d"})", "request.invalid_field", "objectId"},
      {R"({"objectId":"null","dataset":"d"})", "object.id_required", "objectId"},
      {R"({"objectId":"None","dataset":"d"})", "object.id_required", "objectId"},
      {R"({"objectId":"undefined","dataset":"d"})", "object.id_required", "objectId"},
      {R"({"objectId":"a\u0001b","dataset":"d"})", "request.invalid_field", "objectId"},
      // objectId is checked before dataset.
      {R"({})", "request.missing_field", "objectId"},
      {R"({"dataset":5})", "request.missing_field", "objectId"},
      {R"({"objectId":"null","dataset":5})", "object.id_required", "objectId"},
      {R"({"objectId":"o"})", "request.missing_field", "dataset"},
      {R"({"objectId":"o","dataset":""})", "request.missing_field", "dataset"},
      {R"({"objectId":"o","dataset":null})", "request.missing_field", "dataset"},
      {R"({"objectId":"o","dataset":true})", "request.invalid_field", "dataset"},
  };
  for (bool sub : {false, true}) {
    for (const auto& c : cases) {
      auto r = req(windowed_scope::object, sub, c.body);
      expect_error(r, c.code, c.field, c.body);
    }
  }
  // Near misses of the serialized nils are ordinary ids; "null" is only refused as objectId.
  for (const char* id : {"NULL", "none", "nil", "Undefined", "null "}) {
    auto body = std::string{R"({"objectId":")"} + id + R"(","dataset":"null"})";
    auto r = object_query(body);
    ASSERT_TRUE(r) << body << ": " << r.error().message;
    EXPECT_EQ(r->object_id, id);
    EXPECT_EQ(r->dataset, "null");
  }
}

TEST(WindowedRequest, DatasetsScopeNeedsDataset) {
  for (bool sub : {false, true}) {
    expect_error(req(windowed_scope::datasets, sub, "{}"), "request.missing_field", "dataset",
                 "{}");
    expect_error(req(windowed_scope::datasets, sub, R"({"dataset":""})"), "request.missing_field",
                 "dataset", "\"\"");
    expect_error(req(windowed_scope::datasets, sub, R"({"dataset":1})"), "request.invalid_field",
                 "dataset", "1");
    auto r = req(windowed_scope::datasets, sub, R"({"dataset":"x"})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->dataset, "x");
    EXPECT_EQ(r->object_id, "");
  }
}

TEST(WindowedRequest, ObjectsScopeReadsTheObjectsDataset) {
  for (bool sub : {false, true}) {
    auto r = req(windowed_scope::objects, sub, "{}");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->dataset, "objects");
    EXPECT_EQ(r->object_id, "");
    EXPECT_TRUE(r->where.matches_all());
    EXPECT_TRUE(r->filter_json.is_null());
    EXPECT_FALSE(r->proj.active());
  }
}

// ---- validation order ----------------------------------------------------------------------

TEST(WindowedRequest, ValidationOrder) {
  struct order_case {
    const char* what;
    const char* body;
    const char* code;
    const char* field;  // "" : no field check
  };
  const order_case cases[] = {
      {"unknown field beats missing objectId", R"({"filters":{}})", "request.unknown_field", ""},
      {"unknown field beats everything",
       R"({"objectId":"null","filter":[],"sort":1,"limit":5,"projection":{"id":0},)"
       R"("includeDeleted":true,"extra":1})",
       "request.unknown_field", ""},
      {"missing objectId beats bad filter", R"({"dataset":"d","filter":[]})",
       "request.missing_field", "objectId"},
      {"missing dataset beats bad filter", R"({"objectId":"o","filter":{"a":{"$bogus":1}}})",
       "request.missing_field", "dataset"},
      {"id_required beats bad filter", R"({"objectId":"None","dataset":"d","filter":"x"})",
       "object.id_required", "objectId"},
      {"bad filter type beats bad sort", R"({"objectId":"o","dataset":"d","filter":"x","sort":1})",
       "request.invalid_field", "filter"},
      {"bad filter beats limit without sort",
       R"({"objectId":"o","dataset":"d","filter":{"a":{"$bogus":1}},"limit":5})",
       "filter.unknown_operator", ""},
      {"bad filter beats bad limit type",
       R"({"objectId":"o","dataset":"d","filter":{"a":{"$bogus":1}},"limit":"x"})",
       "filter.unknown_operator", ""},
      {"bad sort beats bad limit type", R"({"objectId":"o","dataset":"d","sort":"n","limit":"x"})",
       "request.invalid_field", "sort"},
      {"bad mailboxCapacity type beats limit without sort",
       R"({"objectId":"o","dataset":"d","limit":5,"mailboxCapacity":"big"})",
       "request.invalid_field", "mailboxCapacity"},
      {"limit without sort beats bad projection",
       R"({"objectId":"o","dataset":"d","limit":5,"projection":{"id":0}})", "request.invalid_field",
       "limit"},
      {"limit without sort beats includeDeleted",
       R"({"objectId":"o","dataset":"d","limit":5,"includeDeleted":true})", "request.invalid_field",
       "limit"},
      {"bad projection beats includeDeleted",
       R"({"objectId":"o","dataset":"d","projection":{"a":2},"includeDeleted":true})",
       "request.invalid_field", "projection"},
      {"bad projection beats bad includeDeleted type",
       R"({"objectId":"o","dataset":"d","projection":"a","includeDeleted":"yes"})",
       "request.invalid_field", "projection"},
      {"includeDeleted last", R"({"objectId":"o","dataset":"d","includeDeleted":true})",
       "request.invalid_field", "includeDeleted"},
  };
  for (const auto& c : cases) {
    expect_error(object_sub(c.body), c.code, c.field, c.what);
  }
}

TEST(WindowedRequest, FilterErrors) {
  for (bool sub : {false, true}) {
    for (const char* f : {"[]", "[{\"a\":1}]", "\"a\"", "1", "true"}) {
      auto body = with(windowed_scope::object, std::string{"\"filter\":"} + f);
      expect_error(req(windowed_scope::object, sub, body), "request.invalid_field", "filter", body);
    }
    auto unknown = with(windowed_scope::object, R"("filter":{"a":{"$bogus":1}})");
    auto r = req(windowed_scope::object, sub, unknown);
    expect_error(r, "filter.unknown_operator", "", unknown);
    if (!r) {
      EXPECT_EQ(r.error().details.at("operator"), "$bogus");
    }
    auto invalid = with(windowed_scope::object, R"("filter":{"a":{"$in":5}})");
    expect_error(req(windowed_scope::object, sub, invalid), "filter.invalid", "", invalid);
  }
  // null and {} both match everything.
  for (const char* f : {"null", "{}"}) {
    auto r = object_sub(with(windowed_scope::object, std::string{"\"filter\":"} + f));
    ASSERT_TRUE(r) << f;
    EXPECT_TRUE(r->where.matches_all()) << f;
  }
}

// ---- Decision 3: wrong JSON types ----------------------------------------------------------

TEST(WindowedRequest, WrongTypesAreInvalidFields) {
  struct type_case {
    const char* member;
    const char* field;
    bool subscribe_only;
  };
  const type_case cases[] = {
      {R"("limit":"x")", "limit", false},
      {R"("limit":1.5)", "limit", false},
      {R"("limit":true)", "limit", false},
      {R"("limit":[5])", "limit", false},
      {R"("limit":{})", "limit", false},
      {R"("limit":1e30)", "limit", false},
      {R"("offset":"2")", "offset", false},
      {R"("offset":0.5)", "offset", false},
      {R"("offset":false)", "offset", false},
      {R"("includeTotal":"true")", "includeTotal", false},
      {R"("includeTotal":1)", "includeTotal", false},
      {R"("includeTotal":{})", "includeTotal", false},
      {R"("mailboxCapacity":"256")", "mailboxCapacity", true},
      {R"("mailboxCapacity":2.5)", "mailboxCapacity", true},
      {R"("mailboxCapacity":true)", "mailboxCapacity", true},
      {R"("driftBudgetPercent":"30")", "driftBudgetPercent", true},
      {R"("driftBudgetPercent":30.5)", "driftBudgetPercent", true},
      {R"("driftBudgetPercent":[])", "driftBudgetPercent", true},
      {R"("sort":"n")", "sort", false},
      {R"("sort":{"n":1})", "sort", false},
      {R"("sort":["n",1])", "sort", false},
      {R"("sort":[null])", "sort", false},
      {R"("sort":["a..b"])", "sort", false},
      {R"("sort":[""])", "sort", false},
      {R"("sort":["-"])", "sort", false},
      {R"("filter":[])", "filter", false},
      {R"("filter":"a")", "filter", false},
      {R"("includeDeleted":"true")", "includeDeleted", false},
      {R"("includeDeleted":0)", "includeDeleted", false},
  };
  for (auto scope : all_scopes) {
    for (bool sub : {false, true}) {
      for (const auto& c : cases) {
        if (c.subscribe_only && !sub) {
          continue;
        }
        auto body = with(scope, c.member);
        auto r = req(scope, sub, body);
        std::string ctx = std::string{to_string(scope)} + (sub ? " subscribe " : " query ") + body;
        expect_error(r, "request.invalid_field", c.field, ctx);
      }
    }
  }
}

TEST(WindowedRequest, LimitNeedsSortOnSubscribeOnly) {
  for (auto scope : all_scopes) {
    auto sub = req(scope, true, with(scope, R"("limit":5)"));
    expect_error(sub, "request.invalid_field", "limit", "subscribe limit without sort");
    // An empty sort is no sort.
    auto empty = req(scope, true, with(scope, R"("limit":5,"sort":[])"));
    expect_error(empty, "request.invalid_field", "limit", "subscribe limit with sort []");

    auto q = req(scope, false, with(scope, R"("limit":5)"));
    ASSERT_TRUE(q) << q.error().message;
    EXPECT_EQ(q->limit, 5U);
    EXPECT_TRUE(q->sort_keys.empty());

    auto sorted = req(scope, true, with(scope, R"("limit":5,"sort":["n"])"));
    ASSERT_TRUE(sorted) << sorted.error().message;
    EXPECT_EQ(sorted->limit, 5U);

    // limit 0 (or ≤ 0) is unbounded and needs no sort.
    for (const char* l : {R"("limit":0)", R"("limit":-4)", R"("limit":null)"}) {
      auto r = req(scope, true, with(scope, l));
      ASSERT_TRUE(r) << l << ": " << r.error().message;
      EXPECT_EQ(r->limit, 0U) << l;
    }
  }
}

TEST(WindowedRequest, IncludeDeletedIsSnapshotOnly) {
  for (auto scope : all_scopes) {
    auto sub = req(scope, true, with(scope, R"("includeDeleted":true)"));
    expect_error(sub, "request.invalid_field", "includeDeleted", "subscribe includeDeleted");

    for (const char* v : {"false", "null"}) {
      auto r = parse_windowed_request(scope, true, "spc",
                                      with(scope, std::string{"\"includeDeleted\":"} + v));
      ASSERT_TRUE(r) << v;
      EXPECT_FALSE(r->include_deleted);
    }
    auto q = req(scope, false, with(scope, R"("includeDeleted":true)"));
    ASSERT_TRUE(q) << q.error().message;
    EXPECT_TRUE(q->include_deleted);
  }
}

TEST(WindowedRequest, ProjectionErrorsCarryField) {
  auto r = object_sub(with(windowed_scope::object, R"("projection":{"a..b":1})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "request.invalid_field");
  EXPECT_EQ(boost::json::serialize(r.error().details), R"({"field":"projection","path":"a..b"})");

  r = object_sub(with(windowed_scope::object, R"("projection":[1])"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "request.invalid_field");
  EXPECT_EQ(boost::json::serialize(r.error().details), R"({"field":"projection"})");

  auto ok = object_sub(with(windowed_scope::object, R"("projection":{"text":1})"));
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->proj.active());
  EXPECT_EQ(ok->projection_json, parse(R"({"text":1})"));
  for (const char* none : {"null", "{}"}) {
    auto n = object_sub(with(windowed_scope::object, std::string{"\"projection\":"} + none));
    ASSERT_TRUE(n) << none;
    EXPECT_FALSE(n->proj.active()) << none;
  }
}

// ---- defaults and clamps -------------------------------------------------------------------

TEST(WindowedRequest, Defaults) {
  auto r = object_sub(R"({"objectId":"o","dataset":"d"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->offset, 0U);
  EXPECT_EQ(r->limit, 0U);
  EXPECT_FALSE(r->include_total);
  EXPECT_EQ(r->mailbox_capacity, 256U);
  EXPECT_EQ(r->drift_budget_percent, 30U);
  EXPECT_FALSE(r->include_deleted);
  EXPECT_TRUE(r->sort_keys.empty());
  EXPECT_TRUE(r->order.keys().empty());
  EXPECT_TRUE(r->filter_json.is_null());
  EXPECT_TRUE(r->projection_json.is_null());
  EXPECT_FALSE(r->proj.active());
}

TEST(WindowedRequest, NullMeansAbsent) {
  auto r = object_sub(
      R"({"objectId":"o","dataset":"d","filter":null,"sort":null,"limit":null,"offset":null,)"
      R"("includeTotal":null,"mailboxCapacity":null,"driftBudgetPercent":null,)"
      R"("projection":null,"includeDeleted":null})");
  ASSERT_TRUE(r) << r.error().code << " " << r.error().message;
  auto plain = object_sub(R"({"objectId":"o","dataset":"d"})");
  ASSERT_TRUE(plain);
  EXPECT_EQ(r->key, plain->key);
  EXPECT_EQ(r->offset, 0U);
  EXPECT_EQ(r->limit, 0U);
  EXPECT_FALSE(r->include_total);
  EXPECT_EQ(r->mailbox_capacity, 256U);
  EXPECT_EQ(r->drift_budget_percent, 30U);
  EXPECT_TRUE(r->filter_json.is_null());
  EXPECT_TRUE(r->projection_json.is_null());
  EXPECT_TRUE(r->sort_keys.empty());
  EXPECT_EQ(r->canonical_body(), plain->canonical_body());
}

TEST(WindowedRequest, LimitAndOffsetClamps) {
  struct num_case {
    const char* member;
    std::uint64_t limit;
    std::uint64_t offset;
  };
  const num_case cases[] = {
      {R"("limit":-3)", 0, 0},   {R"("limit":0)", 0, 0},     {R"("limit":7)", 7, 0},
      {R"("limit":7.0)", 7, 0},  {R"("limit":1e2)", 100, 0}, {R"("limit":-2.0)", 0, 0},
      {R"("offset":-1)", 0, 0},  {R"("offset":0)", 0, 0},    {R"("offset":12)", 0, 12},
      {R"("offset":5.0)", 0, 5}, {R"("offset":-0.0)", 0, 0},
  };
  for (const auto& c : cases) {
    auto r = object_query(with(windowed_scope::object, c.member));
    ASSERT_TRUE(r) << c.member << ": " << r.error().message;
    EXPECT_EQ(r->limit, c.limit) << c.member;
    EXPECT_EQ(r->offset, c.offset) << c.member;
  }
}

TEST(WindowedRequest, MailboxAndDriftClamps) {
  struct clamp_case {
    const char* member;
    std::uint64_t mailbox;
    std::uint64_t drift;
  };
  const clamp_case cases[] = {
      {"", 256, 30},
      {R"("mailboxCapacity":0)", 256, 30},
      {R"("mailboxCapacity":-5)", 256, 30},
      {R"("mailboxCapacity":1)", 16, 30},
      {R"("mailboxCapacity":3)", 16, 30},
      {R"("mailboxCapacity":15)", 16, 30},
      {R"("mailboxCapacity":16)", 16, 30},
      {R"("mailboxCapacity":17)", 17, 30},
      {R"("mailboxCapacity":100000)", 100000, 30},
      {R"("mailboxCapacity":5.0)", 16, 30},
      {R"("mailboxCapacity":300.0)", 300, 30},
      {R"("driftBudgetPercent":0)", 256, 30},
      {R"("driftBudgetPercent":-1)", 256, 30},
      {R"("driftBudgetPercent":1)", 256, 1},
      {R"("driftBudgetPercent":150)", 256, 150},
      {R"("driftBudgetPercent":5.0)", 256, 5},
  };
  for (const auto& c : cases) {
    auto r = object_sub(with(windowed_scope::object, c.member));
    ASSERT_TRUE(r) << c.member << ": " << r.error().message;
    EXPECT_EQ(r->mailbox_capacity, c.mailbox) << c.member;
    EXPECT_EQ(r->drift_budget_percent, c.drift) << c.member;
  }
}

TEST(WindowedRequest, IncludeTotalOnlyLiteralTrue) {
  auto t = object_query(with(windowed_scope::object, R"("includeTotal":true)"));
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->include_total);
  auto f = object_query(with(windowed_scope::object, R"("includeTotal":false)"));
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->include_total);
}

// ---- key -----------------------------------------------------------------------------------

const char* const base_body =
    R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,"offset":2,)"
    R"("includeTotal":true,"projection":{"a":1}})";

std::string key_of(windowed_scope scope, bool sub, std::string_view body,
                   std::string space = "spc") {
  auto r = parse_windowed_request(scope, sub, std::move(space), body);
  EXPECT_TRUE(r) << body << ": " << (r ? "" : r.error().code + " " + r.error().message);
  return r ? r->key : std::string{};
}

TEST(WindowedRequest, KeyEqualForEquivalentRequests) {
  const auto base = key_of(windowed_scope::object, false, base_body);
  ASSERT_FALSE(base.empty());
  EXPECT_EQ(key_of(windowed_scope::object, false, base_body), base);
  const char* same[] = {
      // Members in another order.
      R"({"projection":{"a":1},"includeTotal":true,"offset":2,"limit":10,"sort":["-n"],)"
      R"("filter":{"a":1},"dataset":"d","objectId":"o"})",
      // Integral doubles.
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10.0,)"
      R"("offset":2.0,"includeTotal":true,"projection":{"a":1}})",
      // Another spelling of the same projection.
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":true}})",
      // includeDeleted false is the default.
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":1},"includeDeleted":false})",
  };
  for (const char* body : same) {
    EXPECT_EQ(key_of(windowed_scope::object, false, body), base) << body;
  }

  // Defaults spelled out or left out.
  const auto bare = key_of(windowed_scope::object, false, R"({"objectId":"o","dataset":"d"})");
  for (const char* body :
       {R"({"objectId":"o","dataset":"d","limit":0,"offset":0,"includeTotal":false})",
        R"({"objectId":"o","dataset":"d","limit":-1,"offset":-7})",
        R"({"objectId":"o","dataset":"d","projection":{}})",
        R"({"objectId":"o","dataset":"d","filter":null,"projection":null,"sort":null})"}) {
    EXPECT_EQ(key_of(windowed_scope::object, false, body), bare) << body;
  }
}

TEST(WindowedRequest, KeyIgnoresStreamKnobs) {
  const char* a = R"({"objectId":"o","dataset":"d","sort":["n"],"limit":5})";
  const char* b = R"({"objectId":"o","dataset":"d","sort":["n"],"limit":5,"mailboxCapacity":1000,)"
                  R"("driftBudgetPercent":90})";
  const char* c = R"({"objectId":"o","dataset":"d","sort":["n"],"limit":5,"mailboxCapacity":16,)"
                  R"("driftBudgetPercent":1})";
  auto ka = key_of(windowed_scope::object, true, a);
  ASSERT_FALSE(ka.empty());
  EXPECT_EQ(key_of(windowed_scope::object, true, b), ka);
  EXPECT_EQ(key_of(windowed_scope::object, true, c), ka);
}

TEST(WindowedRequest, KeyDiffersWhenRowsOrEncodingDiffer) {
  const auto base = key_of(windowed_scope::object, false, base_body);
  ASSERT_FALSE(base.empty());
  const char* different[] = {
      // filter
      R"({"objectId":"o","dataset":"d","filter":{"a":2},"sort":["-n"],"limit":10,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":1}})",
      R"({"objectId":"o","dataset":"d","sort":["-n"],"limit":10,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":1}})",
      // sort
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["n"],"limit":10,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":1}})",
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n","id"],"limit":10,)"
      R"("offset":2,"includeTotal":true,"projection":{"a":1}})",
      // offset
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,"offset":3,)"
      R"("includeTotal":true,"projection":{"a":1}})",
      // limit
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":11,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":1}})",
      // includeTotal
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,"offset":2,)"
      R"("projection":{"a":1}})",
      // projection
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":0}})",
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,"offset":2,)"
      R"("includeTotal":true})",
      // objectId
      R"({"objectId":"p","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":1}})",
      // dataset
      R"({"objectId":"o","dataset":"e","filter":{"a":1},"sort":["-n"],"limit":10,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":1}})",
      // includeDeleted (a query with tombstones has other rows)
      R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,"offset":2,)"
      R"("includeTotal":true,"projection":{"a":1},"includeDeleted":true})",
  };
  std::vector<std::string> seen{base};
  for (const char* body : different) {
    auto k = key_of(windowed_scope::object, false, body);
    ASSERT_FALSE(k.empty()) << body;
    for (const auto& s : seen) {
      EXPECT_NE(k, s) << body;
    }
    seen.push_back(k);
  }
  // The space.
  EXPECT_NE(key_of(windowed_scope::object, false, base_body, "other"), base);
}

TEST(WindowedRequest, KeyDiffersByScope) {
  // Only the scope differs: the objects rows and a shared dataset that happens to be called
  // "objects".
  auto objects = key_of(windowed_scope::objects, false, R"({"sort":["n"]})");
  auto datasets = key_of(windowed_scope::datasets, false, R"({"dataset":"objects","sort":["n"]})");
  ASSERT_FALSE(objects.empty());
  ASSERT_FALSE(datasets.empty());
  EXPECT_NE(objects, datasets);
  auto object = key_of(windowed_scope::object, false, R"({"objectId":"o","dataset":"objects"})");
  auto across = key_of(windowed_scope::datasets, false, R"({"dataset":"objects"})");
  EXPECT_NE(object, across);
}

// ---- canonical body ------------------------------------------------------------------------

TEST(WindowedRequest, CanonicalBodyText) {
  auto r = object_sub(
      R"({"projection":{"a":1},"driftBudgetPercent":-3,"mailboxCapacity":3,"includeTotal":true,)"
      R"("offset":2.0,"limit":10,"sort":["-n"],"filter":{"a":1},"dataset":"d","objectId":"o"})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->canonical_body(),
            R"({"objectId":"o","dataset":"d","filter":{"a":1},"sort":["-n"],"limit":10,)"
            R"("offset":2,"includeTotal":true,"mailboxCapacity":16,"driftBudgetPercent":30,)"
            R"("projection":{"a":1}})");

  auto objects = req(windowed_scope::objects, false, R"({"limit":-1})");
  ASSERT_TRUE(objects);
  EXPECT_EQ(objects->canonical_body(), "{}");

  auto q = object_query(R"({"objectId":"o","dataset":"d","includeDeleted":true})");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->canonical_body(), R"({"objectId":"o","dataset":"d","includeDeleted":true})");
}

TEST(WindowedRequest, CanonicalBodyRoundTrips) {
  struct rt_case {
    windowed_scope scope;
    bool subscribe;
    const char* body;
  };
  const rt_case cases[] = {
      {windowed_scope::object, false, base_body},
      {windowed_scope::object, false, R"({"objectId":"o","dataset":"d"})"},
      {windowed_scope::object, false,
       R"({"objectId":"o","dataset":"d","includeDeleted":true,"limit":3})"},
      {windowed_scope::object, true,
       R"({"objectId":"o","dataset":"d","sort":["-_ver.id"],"limit":50,"mailboxCapacity":3,)"
       R"("driftBudgetPercent":0,"projection":{"b":0,"a.c":0}})"},
      {windowed_scope::objects, true,
       R"({"filter":{"any.type":"page"},"sort":["-modifiedAt"],"limit":20,"offset":-5})"},
      {windowed_scope::objects, false, R"({"filter":{},"projection":{}})"},
      {windowed_scope::datasets, true,
       R"({"dataset":"chat","filter":{"$or":[{"a":1},{"b":{"$gt":2}}]},"sort":["a","-b"],)"
       R"("limit":1.0,"includeTotal":true,"mailboxCapacity":100000,"driftBudgetPercent":150})"},
  };
  for (const auto& c : cases) {
    auto first = req(c.scope, c.subscribe, c.body);
    ASSERT_TRUE(first) << c.body << ": " << first.error().message;
    auto text = first->canonical_body();
    auto second = req(c.scope, c.subscribe, text);
    ASSERT_TRUE(second) << text << ": " << second.error().message;
    EXPECT_EQ(second->key, first->key) << text;
    EXPECT_EQ(second->canonical_body(), text);
    EXPECT_EQ(second->mailbox_capacity, first->mailbox_capacity) << text;
    EXPECT_EQ(second->drift_budget_percent, first->drift_budget_percent) << text;
    EXPECT_EQ(second->include_deleted, first->include_deleted) << text;
    EXPECT_EQ(second->object_id, first->object_id) << text;
    EXPECT_EQ(second->dataset, first->dataset) << text;
  }
}

}  // namespace
}  // namespace weir::core

// Tests for core/query_definition: parsing named queries from config JSON, and binding arguments.
#include "core/query_definition.hpp"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

namespace weir::core {
namespace {

namespace json = boost::json;

json::value good_query_json() {
  return json::parse(R"({
    "name": "Demo.Tasks.ObserveByState",
    "route": "/api/demo/tasks/by-state",
    "space": "demo",
    "object": "{board}",
    "dataset": "tasks",
    "filter": {"state": "{state}"},
    "sort": ["title", "-_ver.id"],
    "arguments": {"board": "string", "state": "string"},
    "authorize": "anonymous"
  })");
}

// Parses `text` as one query at index 3 and expects a config error on `field`.
error parse_error(const std::string& text) {
  auto r = parse_query_definition(json::parse(text), 3);
  EXPECT_FALSE(r.has_value()) << text;
  if (r.has_value()) {
    return {};
  }
  EXPECT_EQ(r.error().code, "config.invalid");
  return r.error();
}

std::string field_of(const error& e) {
  auto it = e.details.find("field");
  return it != e.details.end() && it->value().is_string() ? std::string(it->value().get_string())
                                                          : "";
}

query_definition parse_ok(const std::string& text) {
  auto r = parse_query_definition(json::parse(text), 0);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : query_definition{};
}

using args_t = std::vector<std::pair<std::string, std::string>>;

TEST(QueryDefinitionTest, ParsesEveryField) {
  auto r = parse_query_definition(good_query_json(), 0);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const query_definition& d = *r;
  EXPECT_EQ(d.name, "Demo.Tasks.ObserveByState");
  EXPECT_EQ(d.route, "/api/demo/tasks/by-state");
  EXPECT_EQ(d.space, "demo");
  EXPECT_EQ(d.object, "{board}");
  EXPECT_EQ(d.dataset, "tasks");
  EXPECT_EQ(d.filter_template, json::parse(R"({"state": "{state}"})"));
  EXPECT_EQ(d.sort, (std::vector<std::string>{"title", "-_ver.id"}));
  ASSERT_EQ(d.arguments.size(), 2u);
  EXPECT_EQ(d.arguments[0], std::make_pair(std::string("board"), argument_type::string));
  EXPECT_EQ(d.arguments[1], std::make_pair(std::string("state"), argument_type::string));
  EXPECT_TRUE(d.authorize.anonymous());
  EXPECT_TRUE(d.yields_collection());
}

TEST(QueryDefinitionTest, FieldsTheFilterBoundsWhateverTheArgumentsAreIndexFields) {
  auto d = parse_ok(R"({"name": "A.B", "route": "/a", "space": "s", "object": "o",
    "dataset": "d", "arguments": {"st": "string", "min": "integer", "re": "string"},
    "filter": {"state": "{st}", "n": {"$gte": "{min}", "$lt": 10}, "text": {"$regex": "{re}"},
               "tags": {"$elemMatch": {"$eq": "x"}}, "$or": [{"a": 1}, {"b": 2}],
               "fixed": "literal", "owner": {"$ne": "{st}"}, "tag": {"$in": ["{st}", "x"]}}})");
  // `text`'s pattern is an argument (no prefix to bound it); $elemMatch puts no bound on its
  // field, nor an $or of branches on different fields (its branches' fields are indexed only
  // for a filter that bounds no field, below); `owner`'s $ne admits most values, which narrows
  // nothing beside other fields.
  using sorts = std::vector<std::vector<std::string>>;
  EXPECT_EQ(d.filter_index_sorts, (sorts{{"state"}, {"n"}, {"fixed"}, {"tag"}}));
  // A complement that is the whole filter: its count comes from the index's ranks.
  auto alone =
      parse_ok(R"({"name": "A.C", "route": "/c", "space": "s", "object": "o", "dataset": "d",
    "arguments": {"f": "boolean"}, "filter": {"done": {"$ne": "{f}"}}})");
  EXPECT_EQ(alone.filter_index_sorts, (sorts{{"done"}}));
  auto either =
      parse_ok(R"({"name": "A.D", "route": "/d", "space": "s", "object": "o", "dataset": "d",
    "arguments": {"a": "string"}, "filter": {"$or": [{"k": "{a}"}, {"k": {"$lt": "b"}}]}})");
  EXPECT_EQ(either.filter_index_sorts, (sorts{{"k"}}));
  // An $or across fields and nothing else bounded: a field of each branch.
  auto across =
      parse_ok(R"({"name": "A.H", "route": "/h", "space": "s", "object": "o", "dataset": "d",
    "arguments": {"me": "string"}, "filter": {"n": {"$exists": true}, "$or": [{"owner": "{me}"},
    {"shared": "{me}", "n": {"$gt": 1}}, {"owner": {"$in": ["a", "b"]}}]}})");
  EXPECT_EQ(across.filter_index_sorts, (sorts{{"owner"}, {"n"}}));
  auto unbounded_branch =
      parse_ok(R"({"name": "A.I", "route": "/i", "space": "s", "object": "o", "dataset": "d",
    "arguments": {"me": "string"}, "filter": {"$or": [{"owner": "{me}"},
    {"shared": {"$regex": "{me}"}}]}})");
  EXPECT_TRUE(unbounded_branch.filter_index_sorts.empty());
  // Dotted paths are indexed as fields are (not those inside an $elemMatch).
  auto dotted =
      parse_ok(R"({"name": "A.N", "route": "/n", "space": "s", "object": "o", "dataset": "d",
    "arguments": {"k": "string"}, "filter": {"meta.kind": "{k}", "meta.n": {"$gt": 1},
    "items": {"$elemMatch": {"sku": "{k}"}}}})");
  EXPECT_EQ(dotted.filter_index_sorts, (sorts{{"meta.kind"}, {"meta.n"}}));
  auto dotted_pair =
      parse_ok(R"({"name": "A.O", "route": "/o", "space": "s", "object": "o", "dataset": "d",
    "arguments": {"k": "string"}, "filter": {"meta.kind": "{k}", "meta.n": {"$gt": 1}}})");
  EXPECT_EQ(dotted_pair.filter_index_sorts, (sorts{{"meta.kind", "meta.n"}}));
  // A path starting with '-' cannot be an ascending sort key ("-a" reads as "a" descending).
  auto dashed =
      parse_ok(R"({"name": "A.P", "route": "/p", "space": "s", "object": "o", "dataset": "d",
    "arguments": {"k": "string"}, "filter": {"-a": "{k}", "a": "{k}", "-.b": 1}})");
  EXPECT_EQ(dashed.filter_index_sorts, (sorts{{"a"}}));
  // More fields than max_disjunct_index_fields: none (part of them would serve nothing).
  auto wide =
      parse_ok(R"({"name": "A.L", "route": "/l", "space": "s", "object": "o", "dataset": "d",
    "arguments": {"me": "string"}, "filter": {"$or": [{"a": "{me}"}, {"b": "{me}"},
    {"c": "{me}"}, {"d": "{me}"}, {"a": 2, "b": 3}]}})");
  EXPECT_EQ(wide.filter_index_sorts, (sorts{{"a"}, {"b"}, {"c"}, {"d"}}));
  auto wider =
      parse_ok(R"({"name": "A.M", "route": "/m", "space": "s", "object": "o", "dataset": "d",
    "arguments": {"me": "string"}, "filter": {"$or": [{"a": "{me}"}, {"b": "{me}"},
    {"c": "{me}"}, {"d": "{me}"}, {"e": "{me}"}]}})");
  EXPECT_TRUE(wider.filter_index_sorts.empty());
  // Two fields, one fixed to values: one index on both, that one first, counts it whatever
  // each field's bounds admit.
  auto pair = parse_ok(R"({"name": "A.E", "route": "/e", "space": "s", "object": "o",
    "dataset": "d", "arguments": {"since": "integer", "a": "string", "b": "string"},
    "filter": {"ts": {"$gte": "{since}"}, "owner": {"$in": ["{a}", "{b}"]}}})");
  EXPECT_EQ(pair.filter_index_sorts, (sorts{{"owner", "ts"}}));
  // An operator only arrays satisfy bounds no field: the other one is indexed alone.
  auto tagged = parse_ok(R"({"name": "A.J", "route": "/j", "space": "s", "object": "o",
    "dataset": "d", "arguments": {"t": "string", "me": "string"},
    "filter": {"tags": {"$elemMatch": {"$eq": "{t}"}}, "owner": "{me}"}})");
  EXPECT_EQ(tagged.filter_index_sorts, (sorts{{"owner"}}));
  auto sized = parse_ok(R"({"name": "A.K", "route": "/k", "space": "s", "object": "o",
    "dataset": "d", "filter": {"tags": {"$size": 2}}})");
  EXPECT_TRUE(sized.filter_index_sorts.empty());
  // Neither fixed to values: one index on each.
  auto ranges = parse_ok(R"({"name": "A.F", "route": "/f", "space": "s", "object": "o",
    "dataset": "d", "arguments": {"since": "integer"},
    "filter": {"ts": {"$gte": "{since}"}, "n": {"$lt": 5}}})");
  EXPECT_EQ(ranges.filter_index_sorts, (sorts{{"ts"}, {"n"}}));
  // A third clause the two do not bound: one on each.
  auto more = parse_ok(R"({"name": "A.G", "route": "/g", "space": "s", "object": "o",
    "dataset": "d", "arguments": {"a": "string"},
    "filter": {"owner": "{a}", "ts": {"$gte": 5}, "tags": {"$size": 2}}})");
  EXPECT_EQ(more.filter_index_sorts, (sorts{{"owner"}, {"ts"}}));
  EXPECT_TRUE(parse_ok(R"({"name": "Q", "route": "/q", "space": "s"})").filter_index_sorts.empty());
  EXPECT_TRUE(is_placeholder("{st}"));
  EXPECT_TRUE(is_placeholder("{claims.sub}"));
  EXPECT_FALSE(is_placeholder("items"));
  EXPECT_FALSE(is_placeholder("{not an argument}"));
}

TEST(QueryDefinitionTest, ArgumentsKeepDeclarationOrderAndTypes) {
  auto d = parse_ok(R"({"name": "A.B", "route": "/a", "space": "s",
    "arguments": {"z": "boolean", "a": "number", "m": "integer", "b": "string"}})");
  ASSERT_EQ(d.arguments.size(), 4u);
  EXPECT_EQ(d.arguments[0].first, "z");
  EXPECT_EQ(d.arguments[0].second, argument_type::boolean);
  EXPECT_EQ(d.arguments[1].second, argument_type::number);
  EXPECT_EQ(d.arguments[2].second, argument_type::integer);
  EXPECT_EQ(d.arguments[3].second, argument_type::string);
}

TEST(QueryDefinitionTest, MinimalQueryDefaults) {
  auto d = parse_ok(R"({"name": "Q", "route": "/q", "space": "s"})");
  EXPECT_FALSE(d.object.has_value());
  EXPECT_FALSE(d.dataset.has_value());
  EXPECT_TRUE(d.filter_template.is_null());
  EXPECT_TRUE(d.sort.empty());
  EXPECT_TRUE(d.arguments.empty());
  EXPECT_TRUE(d.authorize.anonymous());
  EXPECT_TRUE(d.yields_collection());
}

TEST(QueryDefinitionTest, ObjectWithoutDatasetYieldsSingleDocument) {
  auto d = parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "object": "o1"})");
  EXPECT_FALSE(d.yields_collection());
}

TEST(QueryDefinitionTest, MissingRequiredFieldsAreNamed) {
  auto e = parse_error(R"({"route": "/q", "space": "s"})");
  EXPECT_EQ(field_of(e), "name");
  EXPECT_EQ(e.message, "query #3: field 'name': required");
  EXPECT_EQ(e.details.at("query"), json::value(3u));

  e = parse_error(R"({"name": "Q.R", "space": "s"})");
  EXPECT_EQ(field_of(e), "route");
  EXPECT_EQ(e.message, "query 'Q.R': field 'route': required");
  EXPECT_EQ(e.details.at("query"), json::value("Q.R"));

  e = parse_error(R"({"name": "Q.R", "route": "/q"})");
  EXPECT_EQ(field_of(e), "space");
}

TEST(QueryDefinitionTest, NotAnObjectIsRefused) {
  auto e = parse_error(R"(["Q"])");
  EXPECT_NE(e.message.find("query #3"), std::string::npos);
}

TEST(QueryDefinitionTest, QueryNameRules) {
  for (const char* bad : {"", "1abc", "A..B", "A.", ".A", "A-B", "A B", "A.1b"}) {
    auto e = parse_error(std::string(R"({"route": "/q", "space": "s", "name": ")") + bad + "\"}");
    EXPECT_EQ(field_of(e), "name") << bad;
    EXPECT_NE(e.message.find("query #3"), std::string::npos) << e.message;
  }
  std::string long_name(181, 'a');
  EXPECT_EQ(field_of(parse_error(R"({"route": "/q", "space": "s", "name": ")" + long_name + "\"}")),
            "name");
  std::string max_name(180, 'a');
  parse_ok(R"({"route": "/q", "space": "s", "name": ")" + max_name + "\"}");
  parse_ok(R"({"route": "/q", "space": "s", "name": "a_1.B2_.c"})");
}

TEST(QueryDefinitionTest, RouteRules) {
  for (const char* bad :
       {"api/x", "", "/.cratis/queries/ws", "/.cratis", "/v1", "/v1/spaces", "/a b", "/a?x=1"}) {
    auto e = parse_error(std::string(R"({"name": "Q", "space": "s", "route": ")") + bad + "\"}");
    EXPECT_EQ(field_of(e), "route") << bad;
  }
  parse_ok(R"({"name": "Q", "space": "s", "route": "/v1x/ok"})");
  parse_ok(R"({"name": "Q", "space": "s", "route": "/"})");
}

TEST(QueryDefinitionTest, UnknownFieldIsRefused) {
  auto e = parse_error(R"({"name": "Q", "route": "/q", "space": "s", "filtr": {}})");
  EXPECT_EQ(field_of(e), "filtr");
  EXPECT_EQ(e.message.rfind("query 'Q': field 'filtr': unknown field", 0), 0u) << e.message;
}

TEST(QueryDefinitionTest, PlaceholdersMustNameDeclaredArguments) {
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "{s}"})")), "space");
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "s", "object": "{o}"})")),
            "object");
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "s", "object": "o",
      "dataset": "{d}"})")),
            "dataset");
  auto e = parse_error(R"({"name": "Q", "route": "/q", "space": "s",
      "filter": {"$or": [{"a": "{x}"}, {"b": {"$in": ["{y}"]}}]}, "arguments": {"x": "string"}})");
  EXPECT_EQ(field_of(e), "filter");
  EXPECT_NE(e.message.find("{y}"), std::string::npos) << e.message;

  auto d = parse_ok(R"({"name": "Q", "route": "/q", "space": "{s}", "object": "{o}",
      "dataset": "{d}", "arguments": {"s": "string", "o": "string", "d": "string"}})");
  EXPECT_EQ(d.space, "{s}");
}

TEST(QueryDefinitionTest, FixedIdsMustBeValid) {
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": ""})")), "space");
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "a\u0001b"})")), "space");
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "s", "object": 5})")),
            "object");
  std::string long_id(257, 'x');
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": ")" + long_id + "\"}")),
            "space");
}

TEST(QueryDefinitionTest, DatasetNeedsObject) {
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "s", "dataset": "t"})")),
            "dataset");
}

TEST(QueryDefinitionTest, ArgumentRules) {
  for (const char* reserved : {"page", "PageSize", "sortBy", "SORTDIRECTION", "waitForFirstResult",
                               "waitforfirstresulttimeout"}) {
    auto e =
        parse_error(std::string(R"({"name": "Q", "route": "/q", "space": "s", "arguments": {")") +
                    reserved + R"(": "string"}})");
    EXPECT_EQ(field_of(e), "arguments") << reserved;
    EXPECT_NE(e.message.find("reserved"), std::string::npos) << e.message;
  }
  EXPECT_EQ(field_of(parse_error(
                R"({"name": "Q", "route": "/q", "space": "s", "arguments": {"1x": "string"}})")),
            "arguments");
  EXPECT_EQ(field_of(parse_error(
                R"({"name": "Q", "route": "/q", "space": "s", "arguments": {"x": "date"}})")),
            "arguments");
  EXPECT_EQ(
      field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "s", "arguments": ["x"]})")),
      "arguments");
  // "pages" is not reserved: only the exact names are.
  parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "arguments": {"pages": "integer"}})");
}

TEST(QueryDefinitionTest, FilterIsValidatedWithTypedArguments) {
  auto e = parse_error(R"({"name": "Demo.Q", "route": "/q", "space": "s",
      "filter": {"state": {"$foo": 1}}})");
  EXPECT_EQ(field_of(e), "filter");
  EXPECT_EQ(e.message.rfind("query 'Demo.Q': field 'filter': ", 0), 0u) << e.message;
  EXPECT_NE(e.message.find("$foo"), std::string::npos) << e.message;
  EXPECT_EQ(e.details.at("cause"), json::value("filter.unknown_operator"));

  // $size needs a non-negative integer: an integer argument fits, a string one can never.
  parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "filter": {"tags": {"$size": "{n}"}},
      "arguments": {"n": "integer"}})");
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "s",
      "filter": {"tags": {"$size": "{n}"}}, "arguments": {"n": "string"}})")),
            "filter");
  parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "filter": {"a": {"$exists": "{b}"}},
      "arguments": {"b": "boolean"}})");
  parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "filter": {"a": {"$type": "{t}"}},
      "arguments": {"t": "string"}})");
}

TEST(QueryDefinitionTest, SortIsValidated) {
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "s", "sort": [1]})")),
            "sort");
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "s", "sort": ["-"]})")),
            "sort");
  EXPECT_EQ(field_of(parse_error(R"({"name": "Q", "route": "/q", "space": "s", "sort": {}})")),
            "sort");
  auto d = parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "sort": "-title"})");
  EXPECT_EQ(d.sort, std::vector<std::string>{"-title"});
}

TEST(QueryDefinitionTest, AuthorizeTakesTheRuleForms) {
  auto e = parse_error(R"({"name": "Q", "route": "/q", "space": "s", "authorize": "admins"})");
  EXPECT_EQ(field_of(e), "authorize");
  EXPECT_TRUE(parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "authorize": "anonymous"})")
                  .authorize.anonymous());
  EXPECT_TRUE(
      parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "authorize": "authenticated"})")
          .authorize.authenticated);
  auto d =
      parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "authorize": {"roles": ["admin"]}})");
  EXPECT_EQ(d.authorize.roles, std::vector<std::string>{"admin"});
}

TEST(QueryDefinitionTest, ClaimsBindSelectorsAndFiltersAndSplitKeys) {
  auto d = parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "object": "{claims.tenant}",
                        "dataset": "notes", "filter": {"owner": "{claims.sub}", "kind": "{k}"},
                        "arguments": {"k": "string"}})");
  EXPECT_EQ(d.claims, (std::vector<std::string>{"tenant", "sub"}));
  EXPECT_TRUE(d.authorize.authenticated);  // binding claims needs a signed-in caller
  json::object ada{{"sub", "ada"}, {"tenant", "acme"}};
  auto a = bind_query(d, {{"k", "todo"}}, 0, 0, std::nullopt, false, ada);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->object, "acme");
  EXPECT_TRUE(a->where.matches(json::parse(R"({"owner":"ada","kind":"todo"})").as_object()));
  EXPECT_FALSE(a->where.matches(json::parse(R"({"owner":"bob","kind":"todo"})").as_object()));
  EXPECT_EQ(json::parse(a->from.claims), json::parse(R"({"tenant":"acme","sub":"ada"})"));
  json::object bob{{"sub", "bob"}, {"tenant", "acme"}};
  auto b = bind_query(d, {{"k", "todo"}}, 0, 0, std::nullopt, false, bob);
  ASSERT_TRUE(b);
  EXPECT_NE(a->key, b->key);  // two callers never share rows the claims select
  auto none = bind_query(d, {{"k", "todo"}}, 0, 0, std::nullopt, false);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, "auth.forbidden");
  json::object bad_id{{"sub", "ada"}, {"tenant", ""}};
  EXPECT_EQ(bind_query(d, {{"k", "todo"}}, 0, 0, std::nullopt, false, bad_id).error().code,
            "auth.forbidden");
  json::object object_claim{{"sub", json::object{}}, {"tenant", "acme"}};
  EXPECT_EQ(bind_query(d, {{"k", "todo"}}, 0, 0, std::nullopt, false, object_claim).error().code,
            "auth.forbidden");
}

TEST(QueryDefinitionTest, QueriesWithoutClaimsKeepTheirKeys) {
  auto d = parse_ok(R"({"name": "Q", "route": "/q", "space": "s"})");
  auto a = bind_query(d, {}, 0, 0, std::nullopt, false, {{"sub", "ada"}});
  auto b = bind_query(d, {}, 0, 0, std::nullopt, false);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->key, b->key);
  EXPECT_EQ(a->from.claims, "");
}

TEST(QueryDefinitionTest, ListChecksUniqueNamesAndRoutes) {
  auto ok = parse_query_definitions(json::parse(R"([
      {"name": "A", "route": "/a", "space": "s"}, {"name": "B", "route": "/b", "space": "s"}])"));
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->size(), 2u);

  auto dup_name = parse_query_definitions(json::parse(R"([
      {"name": "A", "route": "/a", "space": "s"}, {"name": "A", "route": "/b", "space": "s"}])"));
  ASSERT_FALSE(dup_name.has_value());
  EXPECT_EQ(field_of(dup_name.error()), "name");

  auto dup_route = parse_query_definitions(json::parse(R"([
      {"name": "A", "route": "/a", "space": "s"}, {"name": "B", "route": "/a", "space": "s"}])"));
  ASSERT_FALSE(dup_route.has_value());
  EXPECT_EQ(field_of(dup_route.error()), "route");
  EXPECT_NE(dup_route.error().message.find("query 'B'"), std::string::npos);
  EXPECT_NE(dup_route.error().message.find("'A'"), std::string::npos);

  auto bad_second = parse_query_definitions(json::parse(R"([
      {"name": "A", "route": "/a", "space": "s"}, {"route": "/b", "space": "s"}])"));
  ASSERT_FALSE(bad_second.has_value());
  EXPECT_NE(bad_second.error().message.find("query #1"), std::string::npos);

  auto none = parse_query_definitions(nullptr);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(parse_query_definitions(json::parse(R"({"name": "A"})")).has_value());
}

// ---- bind_query ---------------------------------------------------------------------------

query_definition typed_query() {
  return parse_ok(R"({"name": "Demo.Typed", "route": "/typed", "space": "demo",
      "object": "{board}", "dataset": "tasks",
      "filter": {"count": "{n}", "ratio": {"$gt": "{r}"}, "done": "{done}", "state": "{state}"},
      "sort": ["title"],
      "arguments": {"board": "string", "n": "integer", "r": "number", "done": "boolean",
                    "state": "string"}})");
}

args_t typed_args() {
  return {{"board", "b1"}, {"n", "42"}, {"r", "0.5"}, {"done", "true"}, {"state", "open"}};
}

TEST(BindQueryTest, ConvertsArgumentsToTheirDeclaredTypes) {
  auto b = bind_query(typed_query(), typed_args(), 0, 0, std::nullopt, false);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->space, "demo");
  EXPECT_EQ(b->object, "b1");
  EXPECT_EQ(b->dataset, "tasks");
  EXPECT_FALSE(b->single_id.has_value());
  auto doc = json::parse(R"({"id": "t", "count": 42, "ratio": 0.75, "done": true,
                             "state": "open"})")
                 .as_object();
  EXPECT_TRUE(b->where.matches(doc));
  // The strings themselves must not match: the values were converted, not bound as text.
  auto text_doc = json::parse(R"({"id": "t", "count": "42", "ratio": 0.75, "done": "true",
                                  "state": "open"})")
                      .as_object();
  EXPECT_FALSE(b->where.matches(text_doc));
  auto low_ratio = doc;
  low_ratio["ratio"] = 0.25;
  EXPECT_FALSE(b->where.matches(low_ratio));
  ASSERT_EQ(b->order.keys().size(), 1u);
  EXPECT_EQ(b->order.keys()[0].path, "title");
}

TEST(BindQueryTest, BooleanIsCaseInsensitiveAndNegativeNumbersWork) {
  auto args = typed_args();
  args[1].second = "-7";
  args[2].second = "-1e3";
  args[3].second = "FALSE";
  auto b = bind_query(typed_query(), args, 0, 0, std::nullopt, false);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  auto doc = json::parse(R"({"id": "t", "count": -7, "ratio": 0, "done": false,
                             "state": "open"})")
                 .as_object();
  EXPECT_TRUE(b->where.matches(doc));
}

TEST(BindQueryTest, RefusesValuesThatDoNotConvert) {
  struct bad_case {
    std::size_t index;
    const char* value;
  };
  for (bad_case c : {bad_case{1, "4x"}, bad_case{1, "4.0"}, bad_case{1, ""}, bad_case{1, " 4"},
                     bad_case{1, "99999999999999999999"}, bad_case{2, "abc"}, bad_case{2, "nan"},
                     bad_case{2, "inf"}, bad_case{3, "yes"}, bad_case{3, "1"}}) {
    auto args = typed_args();
    args[c.index].second = c.value;
    auto b = bind_query(typed_query(), args, 0, 0, std::nullopt, false);
    ASSERT_FALSE(b.has_value()) << c.value;
    EXPECT_EQ(b.error().code, "query.invalid_arguments");
    EXPECT_NE(b.error().message.find("'" + args[c.index].first + "'"), std::string::npos)
        << b.error().message;
    EXPECT_EQ(b.error().details.at("argument"), json::value(args[c.index].first));
  }
}

TEST(BindQueryTest, MissingExtraAndRepeatedArgumentsAreRefused) {
  auto missing = typed_args();
  missing.erase(missing.begin() + 4);
  auto b = bind_query(typed_query(), missing, 0, 0, std::nullopt, false);
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.error().code, "query.invalid_arguments");
  EXPECT_NE(b.error().message.find("missing argument 'state'"), std::string::npos);

  auto extra = typed_args();
  extra.emplace_back("colour", "red");
  b = bind_query(typed_query(), extra, 0, 0, std::nullopt, false);
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.error().code, "query.invalid_arguments");
  EXPECT_NE(b.error().message.find("'colour'"), std::string::npos);

  auto repeated = typed_args();
  repeated.emplace_back("state", "closed");
  b = bind_query(typed_query(), repeated, 0, 0, std::nullopt, false);
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.error().code, "query.invalid_arguments");
}

TEST(BindQueryTest, BoundIdsMustBeValid) {
  for (std::string bad : {std::string(), std::string(257, 'x'), std::string("a\nb")}) {
    auto args = typed_args();
    args[0].second = bad;
    auto b = bind_query(typed_query(), args, 0, 0, std::nullopt, false);
    ASSERT_FALSE(b.has_value());
    EXPECT_EQ(b.error().code, "query.invalid_arguments");
    EXPECT_NE(b.error().message.find("'board'"), std::string::npos) << b.error().message;
  }
  auto args = typed_args();
  args[0].second = std::string(256, 'x');
  EXPECT_TRUE(bind_query(typed_query(), args, 0, 0, std::nullopt, false).has_value());
}

TEST(BindQueryTest, SelectionShapes) {
  auto collection = parse_ok(R"({"name": "Objs", "route": "/o", "space": "{sp}",
      "arguments": {"sp": "string"}})");
  auto b = bind_query(collection, {{"sp", "team"}}, 0, 0, std::nullopt, false);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->space, "team");
  EXPECT_EQ(b->object, "");
  EXPECT_EQ(b->dataset, "objects");
  EXPECT_FALSE(b->single_id.has_value());

  auto single = parse_ok(R"({"name": "One", "route": "/one", "space": "s", "object": "{id}",
      "arguments": {"id": "integer"}})");
  b = bind_query(single, {{"id", "007"}}, 0, 0, std::nullopt, false);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->space, "s");
  EXPECT_EQ(b->object, "");
  EXPECT_EQ(b->dataset, "objects");
  ASSERT_TRUE(b->single_id.has_value());
  EXPECT_EQ(*b->single_id, "7");  // the canonical integer, so "007" and "7" are one object

  auto fixed = parse_ok(R"({"name": "Fixed", "route": "/f", "space": "s", "object": "o",
      "dataset": "d"})");
  b = bind_query(fixed, {}, 0, 0, std::nullopt, false);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->object, "o");
  EXPECT_EQ(b->dataset, "d");
  EXPECT_TRUE(b->where.matches_all());
}

TEST(BindQueryTest, SortByIsPrepended) {
  auto b = bind_query(typed_query(), typed_args(), 0, 0, std::string("priority"), true);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  ASSERT_EQ(b->order.keys().size(), 2u);
  EXPECT_EQ(b->order.keys()[0].path, "priority");
  EXPECT_TRUE(b->order.keys()[0].descending);
  EXPECT_EQ(b->order.keys()[1].path, "title");

  b = bind_query(typed_query(), typed_args(), 0, 0, std::string(""), true);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->order.keys().size(), 1u);

  b = bind_query(typed_query(), typed_args(), 0, 0, std::string("a\tb"), false);
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.error().code, "query.invalid_arguments");
}

TEST(BindQueryTest, PagingIsCarried) {
  auto b = bind_query(typed_query(), typed_args(), 3, 25, std::nullopt, false);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->page, 3u);
  EXPECT_EQ(b->page_size, 25u);
  b = bind_query(typed_query(), typed_args(), 3, 0, std::nullopt, false);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->page, 0u);  // unpaged
}

std::string key_of(const query_definition& def, const args_t& args, std::uint64_t page = 0,
                   std::uint64_t page_size = 0, std::optional<std::string> sort_by = std::nullopt,
                   bool descending = false) {
  auto b = bind_query(def, args, page, page_size, sort_by, descending);
  EXPECT_TRUE(b.has_value()) << (b ? "" : b.error().message);
  return b ? b->key : std::string();
}

TEST(BindQueryTest, KeysAreEqualExactlyForTheSameBoundQuery) {
  const auto def = typed_query();
  const auto base = key_of(def, typed_args(), 1, 10);
  EXPECT_FALSE(base.empty());

  // Same request, argument order differing: same key.
  auto shuffled = typed_args();
  std::reverse(shuffled.begin(), shuffled.end());
  EXPECT_EQ(key_of(def, shuffled, 1, 10), base);
  // Same typed values written differently: same key.
  auto respelt = typed_args();
  respelt[1].second = "042";
  respelt[2].second = "5e-1";
  respelt[3].second = "True";
  EXPECT_EQ(key_of(def, respelt, 1, 10), base);

  auto other_state = typed_args();
  other_state[4].second = "closed";
  EXPECT_NE(key_of(def, other_state, 1, 10), base);
  EXPECT_NE(key_of(def, typed_args(), 2, 10), base);
  EXPECT_NE(key_of(def, typed_args(), 1, 11), base);
  EXPECT_NE(key_of(def, typed_args(), 1, 10, std::string("title"), true), base);
  EXPECT_NE(key_of(def, typed_args(), 1, 10, std::string("x"), false),
            key_of(def, typed_args(), 1, 10, std::string("x"), true));
  // Unpaged: the page number is irrelevant.
  EXPECT_EQ(key_of(def, typed_args(), 0, 0), key_of(def, typed_args(), 5, 0));

  // Another query with identical arguments: different key.
  auto renamed = def;
  renamed.name = "Demo.Typed2";
  EXPECT_NE(key_of(renamed, typed_args(), 1, 10), base);
}

TEST(BindQueryTest, KeysAreUnambiguous) {
  auto def = parse_ok(R"({"name": "Q", "route": "/q", "space": "s",
      "filter": {"a": "{a}", "b": "{b}"}, "arguments": {"a": "string", "b": "string"}})");
  // Naive concatenation would make these collide.
  EXPECT_NE(key_of(def, {{"a", "x"}, {"b", "yz"}}), key_of(def, {{"a", "xy"}, {"b", "z"}}));
  EXPECT_NE(key_of(def, {{"a", "x\",\"b"}, {"b", ""}}), key_of(def, {{"a", "x"}, {"b", "\",\"b"}}));
  EXPECT_NE(key_of(def, {{"a", "1"}, {"b", ""}}), key_of(def, {{"a", "1"}, {"b", " "}}));
}

TEST(BindQueryTest, KeyDistinguishesTypes) {
  auto as_int = parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "filter": {"a": "{a}"},
      "arguments": {"a": "integer"}})");
  auto as_text = parse_ok(R"({"name": "Q", "route": "/q", "space": "s", "filter": {"a": "{a}"},
      "arguments": {"a": "string"}})");
  EXPECT_NE(key_of(as_int, {{"a", "1"}}), key_of(as_text, {{"a", "1"}}));
}

// Cluster members compare fingerprints: equal configurations agree, and any change to what the
// query returns (filter, sort, ids, arguments) shows.
TEST(QueryDefinitionTest, FingerprintFollowsWhatTheQueryReturns) {
  auto base = *parse_query_definition(good_query_json(), 0);
  EXPECT_EQ(definition_fingerprint(base),
            definition_fingerprint(*parse_query_definition(good_query_json(), 7)));
  EXPECT_EQ(definition_fingerprint(base).size(), 16u);
  auto changed = [&](const char* key, json::value v) {
    auto j = good_query_json();
    j.as_object()[key] = std::move(v);
    return definition_fingerprint(*parse_query_definition(j, 0));
  };
  EXPECT_NE(changed("filter", json::parse(R"({"state":"done"})")), definition_fingerprint(base));
  EXPECT_NE(changed("sort", json::parse(R"(["title"])")), definition_fingerprint(base));
  EXPECT_NE(changed("dataset", "other"), definition_fingerprint(base));
  EXPECT_NE(changed("space", "elsewhere"), definition_fingerprint(base));
  EXPECT_NE(changed("arguments", json::parse(R"({"board":"string","state":"integer"})")),
            definition_fingerprint(base));
  // The route is how clients reach it, not what it returns.
  EXPECT_EQ(changed("route", "/api/elsewhere"), definition_fingerprint(base));
  auto bound = bind_query(base, {{"board", "main"}, {"state", "todo"}}, 0, 0, std::nullopt, false);
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->from.definition, definition_fingerprint(base));
}

}  // namespace
}  // namespace weir::core

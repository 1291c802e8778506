// Tests for core/json_path: parse errors, resolution through objects and arrays.
#include "core/json_path.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

namespace weir::core {
namespace {

boost::json::object doc() {
  return boost::json::parse(R"({
    "a": {"b": {"c": 7}, "s": "x", "n": null},
    "arr": [10, {"k": "v"}, [1, 2]],
    "0": "zero-key",
    "obj": {"0": "string-key"},
    "": "empty-key"
  })")
      .as_object();
}

TEST(JsonPath, ParseSplitsSegments) {
  auto p = json_path::parse("a.b.c");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->segments(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(p->text(), "a.b.c");
  EXPECT_EQ(p->indexes()[0], json_path::not_an_index);
}

TEST(JsonPath, ParseRejectsEmptySegments) {
  for (const char* bad : {"", ".", "a..b", ".a", "a.", ".."}) {
    auto p = json_path::parse(bad);
    ASSERT_FALSE(p) << bad;
    EXPECT_EQ(p.error().code, "request.invalid_field");
    EXPECT_EQ(p.error().details.at("field").as_string(), bad);
  }
}

TEST(JsonPath, ArrayIndexParsing) {
  EXPECT_EQ(parse_array_index("0"), 0U);
  EXPECT_EQ(parse_array_index("12"), 12U);
  EXPECT_EQ(parse_array_index("01"), json_path::not_an_index);
  EXPECT_EQ(parse_array_index("-1"), json_path::not_an_index);
  EXPECT_EQ(parse_array_index("+1"), json_path::not_an_index);
  EXPECT_EQ(parse_array_index("1a"), json_path::not_an_index);
  EXPECT_EQ(parse_array_index(""), json_path::not_an_index);
  EXPECT_EQ(parse_array_index("99999999999999999999"), json_path::not_an_index);
}

struct find_case {
  const char* path;
  const char* expected;  // serialized JSON, or nullptr for "not found"
};

TEST(JsonPath, FindTable) {
  const auto d = doc();
  const find_case cases[] = {
      {"a.b.c", "7"},
      {"a.b", R"({"c":7})"},
      {"a.s", R"("x")"},
      {"a.n", "null"},
      {"a.missing", nullptr},
      {"a.s.deeper", nullptr},  // through a string
      {"a.b.c.d", nullptr},     // through a number
      {"arr.0", "10"},
      {"arr.1.k", R"("v")"},
      {"arr.2.1", "2"},
      {"arr.3", nullptr},      // out of range
      {"arr.01", nullptr},     // not canonical
      {"arr.k", nullptr},      // no fan-out into elements
      {"0", R"("zero-key")"},  // numeric key on an object is just a key
      {"obj.0", R"("string-key")"},
      {"nope", nullptr},
  };
  for (const auto& c : cases) {
    auto p = json_path::parse(c.path);
    ASSERT_TRUE(p) << c.path;
    const auto* found = p->find(d);
    const auto* quick = find_path(d, c.path);
    EXPECT_EQ(found, quick) << c.path;
    if (c.expected == nullptr) {
      EXPECT_EQ(found, nullptr) << c.path;
    } else {
      ASSERT_NE(found, nullptr) << c.path;
      EXPECT_EQ(*found, boost::json::parse(c.expected)) << c.path;
    }
  }
}

TEST(JsonPath, FindFromValueRoot) {
  const boost::json::value root = boost::json::parse(R"([{"a": 1}])");
  auto p = json_path::parse("0.a");
  ASSERT_TRUE(p);
  ASSERT_NE(p->find(root), nullptr);
  EXPECT_EQ(*p->find(root), 1);
}

TEST(JsonPath, FindPathMalformedFindsNothing) {
  const auto d = doc();
  EXPECT_EQ(find_path(d, ""), nullptr);  // would be the "" key if treated as a segment
  EXPECT_EQ(find_path(d, "a..b"), nullptr);
  EXPECT_EQ(find_path(d, "a.b."), nullptr);
  EXPECT_EQ(find_path(d, ".a"), nullptr);
}

TEST(JsonPath, DefaultPathFindsNothing) {
  const auto d = doc();
  json_path p;
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(p.find(d), nullptr);
}

TEST(JsonPath, PrefixRelation) {
  auto a = json_path::parse("a").value();
  auto ab = json_path::parse("a.b").value();
  auto abc = json_path::parse("a.bc").value();
  auto ax = json_path::parse("ab").value();
  EXPECT_TRUE(a.is_prefix_of(ab));
  EXPECT_TRUE(a.is_prefix_of(a));
  EXPECT_FALSE(ab.is_prefix_of(a));
  EXPECT_FALSE(ab.is_prefix_of(abc));
  EXPECT_FALSE(a.is_prefix_of(ax));
}

}  // namespace
}  // namespace weir::core

// Tests for core/projection (windowed-subscribe §9): include and exclude modes, the deepest mark
// winning, the fixed rules for `id`, `_ver` and other `_` fields, arrays, the parse limits and
// errors, classify(), apply_at() and the canonical text.
#include "core/projection.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

using boost::json::parse;
using path = std::vector<std::string>;

const boost::json::object& doc() {
  static const boost::json::object d =
      parse(R"({"id":"r1","a":{"b":1,"c":2},"d":3,"e":[{"b":1,"c":2},3,{"c":4}],)"
            R"("_traces":[1],"_x":5,"_ver":{"id":"v1"}})")
          .as_object();
  return d;
}

projection make(const char* spec) {
  auto p = projection::parse(parse(spec));
  EXPECT_TRUE(p) << spec << ": " << (p ? "" : p.error().message);
  return p ? std::move(p).value() : projection{};
}

std::string apply(const char* spec, const boost::json::object& d = doc()) {
  return boost::json::serialize(make(spec).apply(d));
}

TEST(Projection, NoneKeepsEverything) {
  projection none;
  EXPECT_FALSE(none.active());
  EXPECT_EQ(none.apply(doc()), doc());
  EXPECT_EQ(none.canonical(), "");
  for (const char* spec : {"null", "{}"}) {
    auto p = make(spec);
    EXPECT_FALSE(p.active()) << spec;
    EXPECT_EQ(p.apply(doc()), doc()) << spec;
    EXPECT_EQ(p.canonical(), "") << spec;
  }
}

TEST(Projection, IncludeMode) {
  EXPECT_EQ(apply(R"({"d":1})"), R"({"id":"r1","d":3,"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"d":true,"a":1})"),
            R"({"id":"r1","a":{"b":1,"c":2},"d":3,"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"a.c":1})"), R"({"id":"r1","a":{"c":2},"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"a.c":1.0,"d":1})"), R"({"id":"r1","a":{"c":2},"d":3,"_ver":{"id":"v1"}})");
}

TEST(Projection, ExcludeMode) {
  // Only excludes: everything else stays, except `_` fields other than `_ver`.
  EXPECT_EQ(apply(R"({"d":0})"),
            R"({"id":"r1","a":{"b":1,"c":2},"e":[{"b":1,"c":2},3,{"c":4}],"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"d":-1,"e":false})"), R"({"id":"r1","a":{"b":1,"c":2},"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"a.b":0})"),
            R"({"id":"r1","a":{"c":2},"d":3,"e":[{"b":1,"c":2},3,{"c":4}],"_ver":{"id":"v1"}})");
}

TEST(Projection, DeepestMarkWins) {
  // Include a, but not a.b.
  EXPECT_EQ(apply(R"({"a":1,"a.b":0})"), R"({"id":"r1","a":{"c":2},"_ver":{"id":"v1"}})");
  // Exclude a, but include a.b: an include makes it an include projection.
  EXPECT_EQ(apply(R"({"a":0,"a.b":1})"), R"({"id":"r1","a":{"b":1},"_ver":{"id":"v1"}})");
  // The order of the marks in the spec does not matter.
  EXPECT_EQ(apply(R"({"a.b":0,"a":1})"), R"({"id":"r1","a":{"c":2},"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"a.b":1,"a":0})"), R"({"id":"r1","a":{"b":1},"_ver":{"id":"v1"}})");
  // Three levels.
  auto nested = parse(R"({"id":"n","x":{"y":{"z":1,"w":2},"v":3}})").as_object();
  EXPECT_EQ(apply(R"({"x":1,"x.y":0,"x.y.z":1})", nested), R"({"id":"n","x":{"y":{"z":1},"v":3}})");
  EXPECT_EQ(apply(R"({"x":0,"x.y":1,"x.y.z":0})", nested), R"({"id":"n","x":{"y":{"w":2}}})");
}

TEST(Projection, IdIsAlwaysKept) {
  EXPECT_EQ(apply(R"({"d":1})"), R"({"id":"r1","d":3,"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"id":1,"d":1})"), R"({"id":"r1","d":3,"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"_ver":0,"a":0,"d":0,"e":0})"), R"({"id":"r1"})");
  // Naming only id is an include projection of id alone.
  EXPECT_EQ(apply(R"({"id":1})"), R"({"id":"r1","_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"id":true})"), R"({"id":"r1","_ver":{"id":"v1"}})");
}

TEST(Projection, UnderscoreFields) {
  // `_ver` stays unless excluded, in both modes.
  EXPECT_EQ(apply(R"({"d":1,"_ver":0})"), R"({"id":"r1","d":3})");
  EXPECT_EQ(apply(R"({"d":0,"_ver":false})"),
            R"({"id":"r1","a":{"b":1,"c":2},"e":[{"b":1,"c":2},3,{"c":4}]})");
  EXPECT_EQ(apply(R"({"_ver":0})"),
            R"({"id":"r1","a":{"b":1,"c":2},"d":3,"e":[{"b":1,"c":2},3,{"c":4}]})");
  // Other `_` fields only when named, and naming them does not switch to include mode.
  EXPECT_EQ(apply(R"({"d":1,"_traces":1})"),
            R"({"id":"r1","d":3,"_traces":[1],"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"_x":1})"),
            R"({"id":"r1","a":{"b":1,"c":2},"d":3,"e":[{"b":1,"c":2},3,{"c":4}],"_x":5,)"
            R"("_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"_ver":1})"),
            R"({"id":"r1","a":{"b":1,"c":2},"d":3,"e":[{"b":1,"c":2},3,{"c":4}],)"
            R"("_ver":{"id":"v1"}})");
  // `_ver` can be narrowed like any object.
  EXPECT_EQ(apply(R"({"d":1,"_ver.id":0})"), R"({"id":"r1","d":3,"_ver":{}})");
}

TEST(Projection, MissingFieldsStayAbsent) {
  EXPECT_EQ(apply(R"({"d":1,"zz":1})"), R"({"id":"r1","d":3,"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"d":1,"q.r":1,"_missing":1})"), R"({"id":"r1","d":3,"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"d.x":1})"), R"({"id":"r1","_ver":{"id":"v1"}})");
  // An object with none of the included sub-fields is left out, not emptied.
  EXPECT_EQ(apply(R"({"a.zz":1})"), R"({"id":"r1","_ver":{"id":"v1"}})");
}

TEST(Projection, ArraysElementWise) {
  EXPECT_EQ(apply(R"({"e.b":1})"), R"({"id":"r1","e":[{"b":1}],"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"e.c":1})"), R"({"id":"r1","e":[{"c":2},{"c":4}],"_ver":{"id":"v1"}})");
  EXPECT_EQ(apply(R"({"e.b":0,"d":0,"a":0})"),
            R"({"id":"r1","e":[{"c":2},3,{"c":4}],"_ver":{"id":"v1"}})");
  // The header's example.
  auto d = parse(R"({"id":"x","a":[{"b":1,"c":2},3]})").as_object();
  EXPECT_EQ(apply(R"({"a.b":1})", d), R"({"id":"x","a":[{"b":1}]})");
  // Nested arrays.
  auto nested = parse(R"({"id":"x","a":[[{"b":1,"c":2}],{"b":3}]})").as_object();
  EXPECT_EQ(apply(R"({"a.b":1})", nested), R"({"id":"x","a":[[{"b":1}],{"b":3}]})");
}

TEST(Projection, ParseErrors) {
  struct error_case {
    std::string spec;
    const char* details;
  };
  std::string many = "{";
  for (int i = 0; i < 129; ++i) {
    many += (i ? ",\"f" : "\"f") + std::to_string(i) + "\":1";
  }
  many += "}";
  const error_case cases[] = {
      {"[]", R"({"field":"projection"})"},
      {R"("a")", R"({"field":"projection"})"},
      {"1", R"({"field":"projection"})"},
      {"true", R"({"field":"projection"})"},
      {many, R"({"field":"projection"})"},
      {R"({"":1})", R"({"field":"projection"})"},
      {R"({"a..b":1})", R"({"field":"projection","path":"a..b"})"},
      {R"({".a":1})", R"({"field":"projection","path":".a"})"},
      {R"({"a.":1})", R"({"field":"projection","path":"a."})"},
      {R"({"a.*":1})", R"({"field":"projection","path":"a.*"})"},
      {R"({"*":0})", R"({"field":"projection","path":"*"})"},
      {R"({"a.b.c.d.e.f.g.h.i":1})", R"({"field":"projection","path":"a.b.c.d.e.f.g.h.i"})"},
      {R"({"a":2})", R"({"field":"projection","path":"a"})"},
      {R"({"a":-2})", R"({"field":"projection","path":"a"})"},
      {R"({"a":0.5})", R"({"field":"projection","path":"a"})"},
      {R"({"a":"1"})", R"({"field":"projection","path":"a"})"},
      {R"({"a":null})", R"({"field":"projection","path":"a"})"},
      {R"({"a":{}})", R"({"field":"projection","path":"a"})"},
      {R"({"a":[1]})", R"({"field":"projection","path":"a"})"},
      {R"({"ok":1,"a.b":2})", R"({"field":"projection","path":"a.b"})"},
      {R"({"id":0})", R"({"field":"projection","path":"id"})"},
      {R"({"id":-1})", R"({"field":"projection","path":"id"})"},
      {R"({"id":false})", R"({"field":"projection","path":"id"})"},
      {R"({"a":1,"id":0})", R"({"field":"projection","path":"id"})"},
  };
  for (const auto& c : cases) {
    auto p = projection::parse(parse(c.spec));
    ASSERT_FALSE(p) << c.spec;
    EXPECT_EQ(p.error().code, "request.invalid_field") << c.spec;
    EXPECT_FALSE(p.error().message.empty()) << c.spec;
    EXPECT_EQ(boost::json::serialize(p.error().details), c.details) << c.spec;
  }
}

TEST(Projection, ParseLimitsInclusive) {
  std::string most = "{";
  for (int i = 0; i < 128; ++i) {
    most += (i ? ",\"f" : "\"f") + std::to_string(i) + "\":1";
  }
  most += "}";
  EXPECT_TRUE(projection::parse(parse(most)));
  EXPECT_TRUE(projection::parse(parse(R"({"a.b.c.d.e.f.g.h":1})")));
  for (const char* spec : {R"({"a":1})", R"({"a":true})", R"({"a":0})", R"({"a":-1})",
                           R"({"a":false})", R"({"a":1.0})", R"({"a":-1.0})", R"({"a":0.0})"}) {
    EXPECT_TRUE(projection::parse(parse(spec))) << spec;
  }
}

TEST(Projection, ClassifyInclude) {
  auto p = make(R"({"a.b":1,"d":1})");
  using c = projection::coverage;
  EXPECT_EQ(p.classify({"d"}), c::included);
  EXPECT_EQ(p.classify({"d", "x"}), c::included);
  EXPECT_EQ(p.classify({"a"}), c::partial);
  EXPECT_EQ(p.classify({"a", "b"}), c::included);
  EXPECT_EQ(p.classify({"a", "b", "z"}), c::included);
  EXPECT_EQ(p.classify({"a", "c"}), c::excluded);
  EXPECT_EQ(p.classify({"z"}), c::excluded);
  EXPECT_EQ(p.classify({"z", "y"}), c::excluded);
  EXPECT_EQ(p.classify({"id"}), c::included);
  EXPECT_EQ(p.classify({"_ver"}), c::included);
  EXPECT_EQ(p.classify({"_ver", "id"}), c::included);
  EXPECT_EQ(p.classify({"_traces"}), c::excluded);
  EXPECT_EQ(p.classify({}), c::partial);
}

TEST(Projection, ClassifyExcludeAndMixed) {
  using c = projection::coverage;
  auto ex = make(R"({"a.b":0,"_ver":0})");
  EXPECT_EQ(ex.classify({"a"}), c::partial);
  EXPECT_EQ(ex.classify({"a", "b"}), c::excluded);
  EXPECT_EQ(ex.classify({"a", "b", "q"}), c::excluded);
  EXPECT_EQ(ex.classify({"a", "c"}), c::included);
  EXPECT_EQ(ex.classify({"z"}), c::included);
  EXPECT_EQ(ex.classify({"_x"}), c::excluded);
  EXPECT_EQ(ex.classify({"_ver"}), c::excluded);
  EXPECT_EQ(ex.classify({"id"}), c::included);

  auto mixed = make(R"({"a":1,"a.b":0})");
  EXPECT_EQ(mixed.classify({"a"}), c::partial);
  EXPECT_EQ(mixed.classify({"a", "c"}), c::included);
  EXPECT_EQ(mixed.classify({"a", "b"}), c::excluded);
  EXPECT_EQ(mixed.classify({"d"}), c::excluded);

  auto named = make(R"({"_x":1})");
  EXPECT_EQ(named.classify({"_x"}), c::included);
  EXPECT_EQ(named.classify({"_traces"}), c::excluded);
  EXPECT_EQ(named.classify({"d"}), c::included);

  projection none;
  EXPECT_EQ(none.classify({"a"}), c::included);
  EXPECT_EQ(none.classify({"_traces"}), c::included);
  EXPECT_EQ(none.classify({}), c::included);
}

TEST(Projection, ApplyAt) {
  auto p = make(R"({"a.b":1,"d":1})");
  auto v = p.apply_at({"a"}, parse(R"({"b":1,"c":2})"));
  ASSERT_TRUE(v);
  EXPECT_EQ(boost::json::serialize(*v), R"({"b":1})");
  EXPECT_FALSE(p.apply_at({"a"}, parse(R"({"c":2})")));
  EXPECT_FALSE(p.apply_at({"a"}, parse("5")));
  EXPECT_FALSE(p.apply_at({"z"}, parse("5")));
  EXPECT_FALSE(p.apply_at({"a", "c"}, parse("5")));
  v = p.apply_at({"a", "b"}, parse("7"));
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, 7);
  v = p.apply_at({"d"}, parse(R"({"x":1})"));
  ASSERT_TRUE(v);
  EXPECT_EQ(boost::json::serialize(*v), R"({"x":1})");
  v = p.apply_at({"a"}, parse(R"([{"b":1,"c":2},3])"));
  ASSERT_TRUE(v);
  EXPECT_EQ(boost::json::serialize(*v), R"([{"b":1}])");
  v = p.apply_at({"id"}, parse(R"("r")"));
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, "r");

  auto ex = make(R"({"a.b":0})");
  v = ex.apply_at({"a"}, parse(R"({"b":1,"c":2})"));
  ASSERT_TRUE(v);
  EXPECT_EQ(boost::json::serialize(*v), R"({"c":2})");
  EXPECT_FALSE(ex.apply_at({"a", "b"}, parse("1")));

  projection none;
  v = none.apply_at({"a"}, parse(R"({"b":1,"c":2})"));
  ASSERT_TRUE(v);
  EXPECT_EQ(boost::json::serialize(*v), R"({"b":1,"c":2})");
}

TEST(Projection, Canonical) {
  auto a = make(R"({"b":1,"a.c":true,"a.b":1})");
  auto b = make(R"({"a.b":1,"b":true,"a.c":1.0})");
  EXPECT_EQ(a.canonical(), b.canonical());
  EXPECT_EQ(a.canonical(), R"([["a.b",1],["a.c",1],["b",1]])");

  auto ex1 = make(R"({"x":0,"y.z":-1})");
  auto ex2 = make(R"({"y.z":false,"x":0})");
  EXPECT_EQ(ex1.canonical(), ex2.canonical());
  EXPECT_EQ(ex1.canonical(), R"([["x",0],["y.z",0]])");

  EXPECT_NE(make(R"({"a":1})").canonical(), make(R"({"a":0})").canonical());
  EXPECT_NE(make(R"({"a":1})").canonical(), make(R"({"a":1,"b":1})").canonical());
  EXPECT_NE(make(R"({"a":1,"a.b":0})").canonical(), make(R"({"a":1})").canonical());
}

}  // namespace
}  // namespace weir::core

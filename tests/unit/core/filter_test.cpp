// Tests for core/filter: every operator matching and not matching, logical groups, paths,
// type-class rules, parse errors and the fields() list.
#include "core/filter.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

namespace weir::core {
namespace {

using boost::json::parse;

const boost::json::object& doc() {
  static const boost::json::object d = parse(R"({
    "id": "r1",
    "name": "Ada",
    "age": 36,
    "score": 4.5,
    "big": 18446744073709551615,
    "neg": -3,
    "active": true,
    "nothing": null,
    "tags": ["math", "poetry", 7],
    "nums": [1, 5, 9],
    "matrix": [[1, 2], [3]],
    "empty": [],
    "addr": {"city": "London", "zip": "N1", "geo": {"lat": 51.5}},
    "people": [{"n": "a"}, {"n": "b"}],
    "sub": {"x": 1, "y": 2}
  })")
                                           .as_object();
  return d;
}

struct match_case {
  const char* filter;
  bool expected;
};

void run(const std::vector<match_case>& cases) {
  for (const auto& c : cases) {
    auto f = filter::parse(parse(c.filter));
    ASSERT_TRUE(f) << c.filter << ": " << f.error().code << " " << f.error().message;
    EXPECT_EQ(f->matches(doc()), c.expected) << c.filter;
  }
}

TEST(Filter, MatchAll) {
  for (const char* spec : {"null", "{}"}) {
    auto f = filter::parse(parse(spec));
    ASSERT_TRUE(f);
    EXPECT_TRUE(f->matches_all());
    EXPECT_TRUE(f->matches(doc()));
    EXPECT_TRUE(f->matches(boost::json::object{}));
    EXPECT_TRUE(f->fields().empty());
  }
  filter default_filter;
  EXPECT_TRUE(default_filter.matches_all());
  EXPECT_TRUE(default_filter.matches(doc()));
  auto not_all = filter::parse(parse(R"({"name":"Ada"})"));
  ASSERT_TRUE(not_all);
  EXPECT_FALSE(not_all->matches_all());
}

TEST(Filter, ImplicitEquality) {
  run({
      {R"({"name":"Ada"})", true},
      {R"({"name":"ada"})", false},
      {R"({"age":36})", true},
      {R"({"age":36.0})", true},   // numbers across int/double
      {R"({"age":"36"})", false},  // no type coercion
      {R"({"big":18446744073709551615})", true},
      {R"({"big":1.8446744073709552e19})", false},  // 2^64 exactly, one above
      {R"({"active":true})", true},
      {R"({"active":1})", false},
      {R"({"addr.city":"London"})", true},
      {R"({"addr.geo.lat":51.5})", true},
      {R"({"addr.geo.lat":51})", false},
      {R"({"sub":{"y":2,"x":1}})", true},  // member order does not matter
      {R"({"sub":{"x":1}})", false},       // whole-object equality
      {R"({"addr.city":"London","age":36})", true},
      {R"({"addr.city":"London","age":37})", false},
      {R"({"name":{}})", false},  // literal empty object, not "no constraints"
  });
}

TEST(Filter, NullMatchesNullAndMissing) {
  run({
      {R"({"nothing":null})", true},
      {R"({"absent":null})", true},
      {R"({"name":null})", false},
      {R"({"nothing":{"$ne":null}})", false},
      {R"({"absent":{"$ne":null}})", false},
      {R"({"name":{"$ne":null}})", true},
      {R"({"absent":{"$gte":null}})", true},
      {R"({"absent":{"$lte":null}})", true},
      {R"({"absent":{"$gt":null}})", false},
      {R"({"absent":{"$in":[null, 1]}})", true},
  });
}

TEST(Filter, ArrayContains) {
  run({
      {R"({"tags":"math"})", true},
      {R"({"tags":"art"})", false},
      {R"({"tags":7})", true},
      {R"({"tags":7.0})", true},
      {R"({"tags":["math","poetry",7]})", true},  // whole-array equality
      {R"({"tags":["poetry","math",7]})", false},
      {R"({"matrix":[3]})", true},  // an element equal to the array operand
      {R"({"matrix":3})", false},   // no recursive flattening
      {R"({"tags.0":"math"})", true},
      {R"({"tags.1":"math"})", false},
      {R"({"people.1.n":"b"})", true},
      {R"({"empty":[]})", true},
  });
}

TEST(Filter, EqNe) {
  run({
      {R"({"age":{"$eq":36}})", true},
      {R"({"age":{"$eq":35}})", false},
      {R"({"tags":{"$eq":"poetry"}})", true},
      {R"({"addr":{"$eq":{"city":"London"}}})", false},
      {R"({"age":{"$ne":35}})", true},
      {R"({"age":{"$ne":36}})", false},
      {R"({"absent":{"$ne":1}})", true},
      {R"({"tags":{"$ne":"math"}})", false},  // contains → not "not equal"
      {R"({"tags":{"$ne":"art"}})", true},
  });
}

TEST(Filter, Comparisons) {
  run({
      {R"({"age":{"$gt":35}})", true},
      {R"({"age":{"$gt":36}})", false},
      {R"({"age":{"$gte":36}})", true},
      {R"({"age":{"$gte":36.5}})", false},
      {R"({"age":{"$lt":36.5}})", true},
      {R"({"age":{"$lt":36}})", false},
      {R"({"age":{"$lte":36}})", true},
      {R"({"age":{"$lte":35}})", false},
      {R"({"age":{"$gt":30,"$lt":40}})", true},
      {R"({"age":{"$gt":30,"$lt":33}})", false},
      {R"({"score":{"$gt":4}})", true},
      {R"({"neg":{"$lt":0}})", true},
      {R"({"big":{"$gt":9223372036854775807}})", true},
      {R"({"big":{"$gt":-1}})", true},
      {R"({"name":{"$gt":"A"}})", true},
      {R"({"name":{"$gt":"B"}})", false},
      {R"({"name":{"$lt":"a"}})", true},  // byte-wise: 'A' < 'a'
      {R"({"active":{"$gt":false}})", true},
      {R"({"nums":{"$gt":8}})", true},  // any element
      {R"({"nums":{"$gt":9}})", false},
      {R"({"nums":{"$lt":2}})", true},
      {R"({"absent":{"$gt":1}})", false},
      {R"({"absent":{"$lt":1}})", false},
  });
}

TEST(Filter, ComparisonsNeedSameTypeClass) {
  run({
      {R"({"age":{"$gt":"1"}})", false},  // a string sorts above numbers, but no cross-type match
      {R"({"age":{"$lt":"1"}})", false},
      {R"({"name":{"$gt":1}})", false},
      {R"({"name":{"$lt":true}})", false},
      {R"({"active":{"$gt":1}})", false},
      {R"({"nothing":{"$lt":1}})", false},
      {R"({"tags":{"$gt":"a"}})", true},   // the string elements take part
      {R"({"tags":{"$gt":100}})", false},  // 7 is the only number
      {R"({"sub":{"$gt":{"x":0}}})", true},
      {R"({"nums":{"$gt":[1, 4]}})", true},  // array operand compares the whole array
  });
}

TEST(Filter, InNin) {
  run({
      {R"({"age":{"$in":[1, 36]}})", true},
      {R"({"age":{"$in":[1, 2]}})", false},
      {R"({"age":{"$in":[]}})", false},
      {R"({"age":{"$in":[36.0]}})", true},
      {R"({"tags":{"$in":["art","poetry"]}})", true},
      {R"({"tags":{"$in":["art"]}})", false},
      {R"({"absent":{"$in":[1]}})", false},
      {R"({"age":{"$nin":[1, 2]}})", true},
      {R"({"age":{"$nin":[36]}})", false},
      {R"({"age":{"$nin":[]}})", true},
      {R"({"absent":{"$nin":[1]}})", true},
      {R"({"absent":{"$nin":[null]}})", false},
      {R"({"tags":{"$nin":["math"]}})", false},
  });
}

TEST(Filter, Exists) {
  run({
      {R"({"name":{"$exists":true}})", true},
      {R"({"name":{"$exists":false}})", false},
      {R"({"absent":{"$exists":false}})", true},
      {R"({"absent":{"$exists":true}})", false},
      {R"({"nothing":{"$exists":true}})", true},  // present even though null
      {R"({"addr.geo.lat":{"$exists":true}})", true},
      {R"({"addr.geo.lng":{"$exists":true}})", false},
      {R"({"name.x":{"$exists":true}})", false},
      {R"({"name":{"$exists":1}})", true},
      {R"({"name":{"$exists":0}})", false},
  });
}

TEST(Filter, AllSizeType) {
  run({
      {R"({"tags":{"$all":["math", 7]}})", true},
      {R"({"tags":{"$all":["math", "art"]}})", false},
      {R"({"tags":{"$all":[]}})", false},
      {R"({"name":{"$all":["Ada"]}})", true},
      {R"({"nums":{"$size":3}})", true},
      {R"({"nums":{"$size":2}})", false},
      {R"({"empty":{"$size":0}})", true},
      {R"({"name":{"$size":3}})", false},  // not an array
      {R"({"absent":{"$size":0}})", false},
      {R"({"nums":{"$size":3.0}})", true},
      {R"({"name":{"$type":"string"}})", true},
      {R"({"name":{"$type":"number"}})", false},
      {R"({"age":{"$type":"number"}})", true},
      {R"({"age":{"$type":"int"}})", true},
      {R"({"age":{"$type":"double"}})", false},
      {R"({"score":{"$type":"double"}})", true},
      {R"({"score":{"$type":1}})", true},
      {R"({"big":{"$type":"long"}})", true},
      {R"({"active":{"$type":"bool"}})", true},
      {R"({"nothing":{"$type":"null"}})", true},
      {R"({"nothing":{"$type":10}})", true},
      {R"({"addr":{"$type":"object"}})", true},
      {R"({"addr":{"$type":3}})", true},
      {R"({"tags":{"$type":"array"}})", true},
      {R"({"tags":{"$type":"string"}})", true},  // any element
      {R"({"nums":{"$type":"string"}})", false},
      {R"({"age":{"$type":["string","bool"]}})", false},
      {R"({"age":{"$type":["string","int"]}})", true},
      {R"({"absent":{"$type":"null"}})", false},
  });
}

TEST(Filter, Not) {
  run({
      {R"({"age":{"$not":{"$gt":40}}})", true},
      {R"({"age":{"$not":{"$gt":30}}})", false},
      {R"({"absent":{"$not":{"$gt":30}}})", true},        // missing passes a negation
      {R"({"age":{"$not":{"$gt":30,"$lt":33}}})", true},  // negates the conjunction
      {R"({"age":{"$not":{"$gt":30,"$lt":40}}})", false},
      {R"({"age":{"$not":{"$not":{"$eq":36}}}})", true},
      {R"({"tags":{"$not":{"$size":3}}})", false},
  });
}

TEST(Filter, LogicalGroups) {
  run({
      {R"({"$and":[{"age":36},{"name":"Ada"}]})", true},
      {R"({"$and":[{"age":36},{"name":"Bob"}]})", false},
      {R"({"$or":[{"age":1},{"name":"Ada"}]})", true},
      {R"({"$or":[{"age":1},{"name":"Bob"}]})", false},
      {R"({"$nor":[{"age":1},{"name":"Bob"}]})", true},
      {R"({"$nor":[{"age":1},{"name":"Ada"}]})", false},
      {R"({"$or":[{}]})", true},
      {R"({"$nor":[{}]})", false},
      {R"({"$or":[{"$and":[{"age":36},{"active":true}]},{"x":1}]})", true},
      {R"({"name":"Ada","$or":[{"age":1},{"score":{"$gt":4}}]})", true},
      {R"({"name":"Ada","$or":[{"age":1},{"score":{"$gt":5}}]})", false},
      {R"({"$and":[{"$nor":[{"tags":"art"}]},{"addr.zip":{"$in":["N1"]}}]})", true},
  });
}

struct error_case {
  const char* filter;
  const char* code;
  const char* op;    // expected details.operator, or nullptr
  const char* path;  // expected details.path, or nullptr
};

TEST(Filter, ParseErrors) {
  const error_case cases[] = {
      {R"({"a":{"$regex":"x"}})", "filter.unknown_operator", "$regex", "a"},
      {R"({"a.b":{"$elemMatch":{"x":1}}})", "filter.unknown_operator", "$elemMatch", "a.b"},
      {R"({"a":{"$gt":1,"$foo":2}})", "filter.unknown_operator", "$foo", "a"},
      {R"({"a":{"$not":{"$bar":1}}})", "filter.unknown_operator", "$bar", "a"},
      {R"({"$where":"1"})", "filter.unknown_operator", "$where", ""},
      {R"({"$not":{"a":1}})", "filter.unknown_operator", "$not", ""},
      {R"({"$or":[{"a":{"$zap":1}}]})", "filter.unknown_operator", "$zap", "a"},
      {R"([])", "filter.invalid", nullptr, nullptr},
      {R"("a")", "filter.invalid", nullptr, nullptr},
      {R"(1)", "filter.invalid", nullptr, nullptr},
      {R"({"$and":[]})", "filter.invalid", "$and", nullptr},
      {R"({"$or":{}})", "filter.invalid", "$or", nullptr},
      {R"({"$nor":[1]})", "filter.invalid", "$nor", nullptr},
      {R"({"$and":[{"a":{"$in":1}}]})", "filter.invalid", "$in", "a"},
      {R"({"a":{"$in":"x"}})", "filter.invalid", "$in", "a"},
      {R"({"a":{"$nin":{}}})", "filter.invalid", "$nin", "a"},
      {R"({"a":{"$all":null}})", "filter.invalid", "$all", "a"},
      {R"({"a":{"$in":[{"$gt":1}]}})", "filter.invalid", "$in", "a"},
      {R"({"a":{"$exists":"yes"}})", "filter.invalid", "$exists", "a"},
      {R"({"a":{"$size":-1}})", "filter.invalid", "$size", "a"},
      {R"({"a":{"$size":1.5}})", "filter.invalid", "$size", "a"},
      {R"({"a":{"$size":"1"}})", "filter.invalid", "$size", "a"},
      {R"({"a":{"$type":"date"}})", "filter.invalid", "$type", "a"},
      {R"({"a":{"$type":99}})", "filter.invalid", "$type", "a"},
      {R"({"a":{"$type":[]}})", "filter.invalid", "$type", "a"},
      {R"({"a":{"$type":true}})", "filter.invalid", "$type", "a"},
      {R"({"a":{"$not":1}})", "filter.invalid", "$not", "a"},
      {R"({"a":{"$not":{}}})", "filter.invalid", "$not", "a"},
      {R"({"a":{"$gt":1,"b":2}})", "filter.invalid", nullptr, "a"},
      {R"({"a..b":1})", "filter.invalid", nullptr, "a..b"},
      {R"({"":1})", "filter.invalid", nullptr, ""},
  };
  for (const auto& c : cases) {
    auto f = filter::parse(parse(c.filter));
    ASSERT_FALSE(f) << c.filter;
    EXPECT_EQ(f.error().code, c.code) << c.filter;
    EXPECT_FALSE(f.error().message.empty()) << c.filter;
    if (c.op != nullptr) {
      const auto* op = f.error().details.if_contains("operator");
      ASSERT_NE(op, nullptr) << c.filter;
      EXPECT_EQ(*op, c.op) << c.filter;
    }
    if (c.path != nullptr) {
      const auto* path = f.error().details.if_contains("path");
      ASSERT_NE(path, nullptr) << c.filter;
      EXPECT_EQ(*path, c.path) << c.filter;
    }
  }
}

TEST(Filter, RejectsExcessiveNesting) {
  std::string spec = R"({"a":1})";
  for (int i = 0; i < 40; ++i) {
    spec = R"({"$or":[)" + spec + "]}";
  }
  boost::json::parse_options opts;
  opts.max_depth = 1000;
  auto f = filter::parse(boost::json::parse(spec, {}, opts));
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, "filter.invalid");
}

TEST(Filter, FieldsListsTopLevelSegmentsOnce) {
  auto f = filter::parse(parse(
      R"({"addr.city":"x","age":{"$gt":1},"$or":[{"addr.zip":1},{"tags":{"$not":{"$size":1}}}],
          "$nor":[{"age":2}]})"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->fields(), (std::vector<std::string>{"addr", "age", "tags"}));
}

TEST(Filter, CopiesShareTheParsedTree) {
  auto f = filter::parse(parse(R"({"age":36})")).value();
  filter copy = f;
  EXPECT_TRUE(copy.matches(doc()));
  EXPECT_EQ(&copy.fields(), &f.fields());
}

TEST(JsonEqual, DeepAndNumeric) {
  EXPECT_TRUE(json_equal(parse(R"({"a":[1,{"b":2.0}]})"), parse(R"({"a":[1.0,{"b":2}]})")));
  EXPECT_FALSE(json_equal(parse(R"({"a":[1,2]})"), parse(R"({"a":[2,1]})")));
  EXPECT_FALSE(json_equal(parse(R"({"a":1})"), parse(R"({"a":1,"b":null})")));
  EXPECT_FALSE(json_equal(parse(R"({"a":1})"), parse(R"({"b":1})")));
  EXPECT_FALSE(json_equal(parse("0"), parse("false")));
  EXPECT_FALSE(json_equal(parse("null"), parse("false")));
  EXPECT_TRUE(json_equal(parse("null"), parse("null")));
}

}  // namespace
}  // namespace weir::core

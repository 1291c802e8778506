// Tests for core/filter: every operator matching and not matching ($regex with each option,
// both forms of $elemMatch), logical groups, paths, type-class rules, parse errors and the
// fields() list.
#include "core/filter.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/json_path.hpp"

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
    "sub": {"x": 1, "y": 2},
    "bio": "First line\nsecond LINE",
    "xs": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "items": [
      {"sku": "a1", "qty": 2, "dim": {"w": 10}},
      {"sku": "b2", "qty": 7, "dim": {"w": 3}, "tags": ["x", "y"]},
      "loose",
      [{"sku": "c3"}]
    ]
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

TEST(Filter, Regex) {
  run({
      {R"({"name":{"$regex":"Ada"}})", true},
      {R"({"name":{"$regex":"d"}})", true},  // searched for anywhere, not a full match
      {R"({"name":{"$regex":"^d"}})", false},
      {R"({"name":{"$regex":"^Ad"}})", true},
      {R"({"name":{"$regex":"da$"}})", true},
      {R"({"name":{"$regex":"^Ad$"}})", false},
      {R"({"name":{"$regex":"^A.a$"}})", true},
      {R"({"name":{"$regex":"^(A|B)d\\w$"}})", true},
      {R"({"name":{"$regex":"ada"}})", false},  // case matters without i
      {R"({"name":{"$regex":""}})", true},
      {R"({"name":{"$regex":"(?i)^ADA$"}})", true},  // inline modifiers
      {R"({"addr.city":{"$regex":"^Lon"}})", true},
      {R"({"people.1.n":{"$regex":"b"}})", true},
      {R"({"name":{"$regex":"^A","$ne":"Ada"}})", false},  // ANDed with the other operators
      {R"({"name":{"$regex":"^A","$in":["Ada","Bob"]}})", true},
  });
}

TEST(Filter, RegexAnchorsAndOptions) {
  // bio is "First line\nsecond LINE".
  run({
      {R"({"bio":{"$regex":"^First"}})", true},
      {R"({"bio":{"$regex":"LINE$"}})", true},
      {R"({"bio":{"$regex":"^second"}})", false},  // without m, ^ and $ only at the string's ends
      {R"({"bio":{"$regex":"line$"}})", false},
      {R"({"bio":{"$regex":"^second","$options":"m"}})", true},
      {R"({"bio":{"$regex":"line$","$options":"m"}})", true},
      {R"({"bio":{"$regex":"\\Asecond","$options":"m"}})", false},
      {R"({"bio":{"$regex":"(?m)^second"}})", true},
      {R"({"bio":{"$regex":"line.second"}})", false},  // without s, . does not match \n
      {R"({"bio":{"$regex":"line.second","$options":""}})", false},
      {R"({"bio":{"$regex":"line.second","$options":"s"}})", true},
      {R"({"bio":{"$regex":"(?s)line.second"}})", true},
      {R"({"bio":{"$regex":"line\\nsecond"}})", true},
      {R"({"bio":{"$regex":"^first"}})", false},
      {R"({"bio":{"$regex":"^first","$options":"i"}})", true},
      {R"({"bio":{"$regex":"^first","$options":"ii"}})", true},
      {R"({"name":{"$regex":"^ADA$"}})", false},
      {R"({"name":{"$regex":"^ADA$","$options":"i"}})", true},
      {R"({"name":{"$regex":"^(?i:A)DA$"}})", false},  // the group's flag only
      {R"({"name":{"$regex":"^(?i:ADA)$"}})", true},
      {R"({"bio":{"$regex":"^SECOND line$","$options":"mi"}})", true},
      {R"({"bio":{"$regex":"first.*LINE$","$options":"si"}})", true},
      {R"({"name":{"$regex":"^ A d a $ # the whole name"}})", false},
      {R"({"name":{"$regex":"^ A d a $ # the whole name","$options":"x"}})", true},
      {R"({"name":{"$regex":"^A\\ da","$options":"x"}})", false},       // an escaped space stays
      {R"({"bio":{"$options":"ms","$regex":"line$.^second"}})", true},  // either order
      {R"({"name":{"$regex":"^A # first\nd a $ # rest","$options":"x"}})", true},
      // Only \n breaks a line (as in Mongo's PCRE), and . matches a whole UTF-8 character.
      {R"({"name":{"$regex":"^.da$"}})", true},
  });
  auto crlf = parse(R"({"t":"one\r\ntwo","u":"é"})").as_object();
  for (auto [spec, expected] : std::vector<std::pair<const char*, bool>>{
           {R"({"t":{"$regex":"one$","$options":"m"}})", false},  // \r is not a line break
           {R"({"t":{"$regex":"one\r$","$options":"m"}})", true},
           {R"({"t":{"$regex":"one.\ntwo"}})", true},  // . matches \r, not \n
           {R"({"u":{"$regex":"^.$"}})", true},        // one character, two bytes
           {R"({"u":{"$regex":"^..$"}})", false},
           {R"({"u":{"$regex":"^É$","$options":"i"}})", true}}) {
    auto f = filter::parse(parse(spec));
    ASSERT_TRUE(f) << spec;
    EXPECT_EQ(f->matches(crlf), expected) << spec;
  }
}

// RE2 has no x; the filter does what PCRE's extended mode does, and where PCRE reads the
// stripped pattern differently from how it reads the original, so must the filter.
TEST(Filter, ExtendedPatternsReadAsPcreReadsThem) {
  const auto rec = parse(R"({"s1":"A da","s2":" Ada","s3":"A d a","s4":"a{2,3}",
                            "s5":"a{2}","s6":"xz","s7":"Ada","s8":"aa"})")
                       .as_object();
  for (auto [pattern, expected] : std::vector<std::pair<std::string, bool>>{
           // Whitespace inside a class stays, POSIX classes in a class included.
           {R"({"s1":{"$regex":"^[[:upper:] ]+da$"}})", true},
           {R"({"s7":{"$regex":"^[[:upper:] ]+da$"}})", true},
           // A ']' first in a class is a literal.
           {R"({"s2":{"$regex":"^[] A]+da$"}})", true},
           // An escaped space stays a space; \Q…\E is literal, spaces and all.
           {R"({"s3":{"$regex":"^A\\ d\\ a$"}})", true},
           {R"({"s1":{"$regex":"^A\\Q d\\E a$"}})", true},
           {R"({"s7":{"$regex":"^A\\Q d\\E a$"}})", false},
           // Dropped whitespace still ends a token: {2, 3} and { 2} are no repeat counts.
           {R"({"s4":{"$regex":"^a{2, 3}$"}})", true},
           {R"({"s4":{"$regex":"^a{2 ,3}$"}})", true},
           {R"({"s5":{"$regex":"^a{ 2}$"}})", true},
           {R"({"s8":{"$regex":"^a{ 2}$"}})", false},
           {R"({"s8":{"$regex":"^a{2}$"}})", true},
           // …but a quantifier after whitespace applies to what came before.
           {R"({"s7":{"$regex":"^A d +a$"}})", true},
           // "[:" not closed by ":]" is no POSIX class: the class ends at its ']'.
           {R"({"s6":{"$regex":"^[x[:y] z$"}})", true},
           // Unicode's pattern whitespace, and # comments, are dropped.
           {R"({"s7":{"$regex":"^A\u2028d\u0085a$ # the end"}})", true},
           {R"({"s7":{"$regex":"^A[#]da"}})", false},
       }) {
    auto spec = parse(pattern).as_object();
    auto& ops = spec.begin()->value().as_object();
    ops["$options"] = "x";
    auto f = filter::parse(spec);
    ASSERT_TRUE(f) << pattern << ": " << f.error().message;
    EXPECT_EQ(f->matches(rec), expected) << pattern;
  }
  // "\x {41}" is not "\x{41}" ("A"): PCRE reads NUL repeated 41 times, and RE2, which has no
  // bare \x, refuses the pattern rather than reading "A".
  auto split = filter::parse(parse(R"({"s7":{"$regex":"^\\x {41}da$","$options":"x"}})"));
  EXPECT_TRUE(!split || !split->matches(rec));
}

TEST(Filter, RegexArraysAndNonStrings) {
  run({
      {R"({"tags":{"$regex":"^po"}})", true},  // any string element
      {R"({"tags":{"$regex":"^art"}})", false},
      {R"({"tags":{"$regex":"7"}})", false},  // the element 7 is a number
      {R"({"items":{"$regex":"^loose$"}})", true},
      {R"({"items":{"$regex":"c3"}})", false},  // no search inside nested values
      {R"({"age":{"$regex":"36"}})", false},
      {R"({"score":{"$regex":""}})", false},
      {R"({"active":{"$regex":"true"}})", false},
      {R"({"nothing":{"$regex":""}})", false},
      {R"({"absent":{"$regex":""}})", false},
      {R"({"addr":{"$regex":"London"}})", false},
      {R"({"people":{"$regex":""}})", false},
      {R"({"nums":{"$regex":""}})", false},
      {R"({"empty":{"$regex":""}})", false},
  });
}

TEST(Filter, NotRegex) {
  run({
      {R"({"name":{"$not":{"$regex":"^B"}}})", true},
      {R"({"name":{"$not":{"$regex":"^A"}}})", false},
      {R"({"name":{"$not":{"$regex":"^a"}}})", true},
      {R"({"name":{"$not":{"$regex":"^a","$options":"i"}}})", false},
      {R"({"absent":{"$not":{"$regex":"x"}}})", true},  // missing passes a negation
      {R"({"age":{"$not":{"$regex":"3"}}})", true},
      {R"({"tags":{"$not":{"$regex":"^m"}}})", false},
      {R"({"$nor":[{"name":{"$regex":"^A"}}]})", false},
  });
}

TEST(Filter, APrefixPatternMatchesAsTheSameRegexSearched) {
  // "^literal" (no option but s) is tested as a prefix without the regex engine; "^(?:literal)"
  // is the same pattern that the engine searches. Both must agree on strings around the
  // literal, in arrays, and across line breaks.
  const std::vector<std::string> literals{"", "a", "ab", "a b", "é", "#!", "a-b/c", "xx"};
  const std::vector<std::string> values{
      R"("")",         R"("a")",     R"("ab")",     R"("abc")", R"("ba")",      R"("a b c")",
      R"("é!")",       R"("#!]")",   R"("a-b/cd")", R"("xxx")", "\"\\nab\"",    "\"x\\nab\"",
      R"(["b","ab"])", R"(["b",7])", R"(7)",        R"(null)",  R"({"a":"ab"})"};
  int prefix_tests = 0;
  for (const auto& lit : literals) {
    for (const char* options : {"", "s"}) {
      auto spec = [&](const std::string& pattern) {
        boost::json::object ops{{"$regex", pattern}};
        if (*options) {
          ops["$options"] = options;
        }
        return filter::parse(boost::json::object{{"v", ops}}).value();
      };
      auto fast = spec("^" + lit);
      auto searched = spec("^(?:" + lit + ")");
      EXPECT_TRUE(fast.bounds_on(json_path::parse("v").value())) << lit;  // it is a prefix
      for (const auto& v : values) {
        auto d = parse(R"({"v":)" + v + "}").as_object();
        EXPECT_EQ(fast.matches(d), searched.matches(d)) << "^" << lit << " on " << v;
        prefix_tests += fast.matches(d) ? 1 : 0;
      }
    }
  }
  EXPECT_GT(prefix_tests, 20);
}

TEST(Filter, APatternThatBacktracksForAnyEngineThatBacktracksIsAnsweredInLinearTime) {
  // Catastrophic for a backtracking engine: Boost.Regex took 1.4 s per record on 10,000 x's
  // (and gave up, "no match", whatever the answer). RE2 answers, correctly, in time linear in
  // the string: 20 records of 100,000 x's here take milliseconds (the bound is 100 times that,
  // for sanitizer builds and a busy machine).
  run({
      {R"({"xs":{"$regex":"(x+x+)+y"}})", false},
      {R"({"xs":{"$not":{"$regex":"(x+x+)+y"}}})", true},
      {R"({"xs":{"$regex":"(x+x+)+$"}})", true},
      {R"({"xs":{"$regex":"^x+$"}})", true},
  });
  boost::json::object rec{{"xs", std::string(100000, 'x')}};
  auto f = filter::parse(parse(R"({"xs":{"$regex":"^(x+x+)+y"}})")).value();
  auto g = filter::parse(parse(R"({"xs":{"$regex":"(x|xx)*z"}})")).value();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(f.matches(rec));
    EXPECT_FALSE(g.matches(rec));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(Filter, ElemMatchOperatorForm) {
  run({
      {R"({"nums":{"$elemMatch":{"$gt":4,"$lt":6}}})", true},
      {R"({"nums":{"$elemMatch":{"$gt":1,"$lt":5}}})", false},  // no single element in range
      {R"({"nums":{"$gt":1,"$lt":5}})", true},                  // unlike plain operators
      {R"({"nums":{"$elemMatch":{"$eq":5}}})", true},
      {R"({"nums":{"$elemMatch":{"$ne":5}}})", true},
      {R"({"nums":{"$elemMatch":{"$in":[2, 9]}}})", true},
      {R"({"nums":{"$elemMatch":{"$nin":[1, 5, 9]}}})", false},
      {R"({"nums":{"$elemMatch":{"$exists":true}}})", true},
      {R"({"tags":{"$elemMatch":{"$regex":"^po"}}})", true},
      {R"({"tags":{"$elemMatch":{"$regex":"^PO","$options":"i"}}})", true},
      {R"({"tags":{"$elemMatch":{"$type":"number","$gt":5}}})", true},
      {R"({"tags":{"$elemMatch":{"$type":"number","$gt":7}}})", false},
      {R"({"tags":{"$elemMatch":{"$not":{"$type":"string"}}}})", true},
      // Each element is tested as a whole value: no "contains" into nested arrays.
      {R"({"matrix":{"$elemMatch":{"$eq":3}}})", false},
      {R"({"matrix":{"$elemMatch":{"$gt":2}}})", false},
      {R"({"matrix":{"$elemMatch":{"$in":[3]}}})", false},
      {R"({"matrix":{"$elemMatch":{"$type":"number"}}})", false},
      {R"({"matrix":{"$elemMatch":{"$eq":[3]}}})", true},
      {R"({"matrix":{"$elemMatch":{"$size":2}}})", true},
      {R"({"matrix":{"$elemMatch":{"$type":"array"}}})", true},
      {R"({"matrix":{"$elemMatch":{"$elemMatch":{"$gt":2}}}})", true},
      {R"({"matrix":{"$elemMatch":{"$elemMatch":{"$gt":3}}}})", false},
      {R"({"matrix.0":{"$elemMatch":{"$eq":2}}})", true},
  });
}

TEST(Filter, ElemMatchFilterForm) {
  run({
      {R"({"items":{"$elemMatch":{"sku":"a1","qty":2}}})", true},
      {R"({"items":{"$elemMatch":{"sku":"a1","qty":7}}})", false},  // one element must hold both
      {R"({"items":{"$elemMatch":{"qty":{"$gt":5},"dim.w":{"$lt":5}}}})", true},
      {R"({"items":{"$elemMatch":{"qty":{"$gt":5},"dim.w":{"$gt":5}}}})", false},
      {R"({"items":{"$elemMatch":{"tags":"y"}}})", true},  // contains, inside the element
      {R"({"items":{"$elemMatch":{"tags.1":"y","sku":{"$regex":"^B","$options":"i"}}}})", true},
      {R"({"items":{"$elemMatch":{"$or":[{"qty":{"$gt":100}},{"dim.w":10}]}}})", true},
      {R"({"items":{"$elemMatch":{"$or":[{"qty":{"$gt":100}},{"dim.w":10}],"sku":"b2"}}})", false},
      {R"({"items":{"$elemMatch":{"$or":[{"qty":{"$gt":100}},{"dim.w":3}],"sku":"b2"}}})", true},
      {R"({"items":{"$elemMatch":{"$nor":[{"qty":7}]}}})", true},
      {R"({"items":{"$elemMatch":{"$and":[{"sku":"b2"}],"$nor":[{"qty":7}]}}})", false},
      {R"({"items":{"$elemMatch":{"tags":{"$elemMatch":{"$eq":"y"}}}}})", true},
      {R"({"items":{"$elemMatch":{"tags":{"$elemMatch":{"$eq":"z"}}}}})", false},
      {R"({"items":{"$elemMatch":{"missing":null}}})", true},
      {R"({"items":{"$elemMatch":{"sku":"c3"}}})", false},  // only object elements are tested
      {R"({"tags":{"$elemMatch":{"missing":null}}})", false},
      {R"({"people":{"$elemMatch":{"n":{"$in":["b","c"]}}}})", true},
      {R"({"people":{"$elemMatch":{"n":"c"}}})", false},
      {R"({"name":"Ada","items":{"$elemMatch":{"sku":"b2"},"$size":4}})", true},
      {R"({"items":{"$not":{"$elemMatch":{"sku":"zz"}}}})", true},
      {R"({"$or":[{"age":1},{"items":{"$elemMatch":{"dim.w":3}}}]})", true},
  });
}

TEST(Filter, ElemMatchNeedsAnArray) {
  run({
      {R"({"name":{"$elemMatch":{"$eq":"Ada"}}})", false},
      {R"({"name":{"$eq":"Ada"}})", true},
      {R"({"addr":{"$elemMatch":{"city":"London"}}})", false},
      {R"({"sub":{"$elemMatch":{"$exists":true}}})", false},
      {R"({"people.0":{"$elemMatch":{"n":"a"}}})", false},
      {R"({"nothing":{"$elemMatch":{"$eq":null}}})", false},
      {R"({"absent":{"$elemMatch":{"$exists":false}}})", false},
      {R"({"empty":{"$elemMatch":{"$exists":true}}})", false},
      {R"({"absent":{"$not":{"$elemMatch":{"$gt":1}}}})", true},
  });
}

struct error_case {
  const char* filter;
  const char* code;
  const char* op;    // expected details.operator, or nullptr
  const char* path;  // expected details.path, or nullptr
};

void expect_errors(const std::vector<error_case>& cases) {
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

TEST(Filter, ParseErrors) {
  expect_errors({
      {R"({"a":{"$where":"x"}})", "filter.unknown_operator", "$where", "a"},
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
  });
}

TEST(Filter, RegexParseErrors) {
  expect_errors({
      {R"({"a":{"$regex":1}})", "filter.invalid", "$regex", "a"},
      {R"({"a":{"$regex":null,"$options":"i"}})", "filter.invalid", "$regex", "a"},
      {R"({"a":{"$regex":"("}})", "filter.invalid", "$regex", "a"},
      {R"({"a":{"$regex":"a{2,1}"}})", "filter.invalid", "$regex", "a"},
      {R"({"a":{"$regex":"*a"}})", "filter.invalid", "$regex", "a"},
      {R"({"a":{"$options":"i"}})", "filter.invalid", "$options", "a"},
      {R"({"a":{"$gt":1,"$options":"i"}})", "filter.invalid", "$options", "a"},
      {R"({"a":{"$not":{"$options":"i"}}})", "filter.invalid", "$options", "a"},
      {R"({"a":{"$regex":"x","$not":{"$options":"i"}}})", "filter.invalid", "$options", "a"},
      {R"({"a":{"$regex":"x","$options":"g"}})", "filter.invalid", "$options", "a"},
      {R"({"a":{"$regex":"x","$options":"iu"}})", "filter.invalid", "$options", "a"},
      {R"({"a":{"$options":"I","$regex":"x"}})", "filter.invalid", "$options", "a"},
      {R"({"a":{"$regex":"x","$options":1}})", "filter.invalid", "$options", "a"},
      {R"({"a":{"$regex":"x","$options":["i"]}})", "filter.invalid", "$options", "a"},
      {R"json({"a.b":{"$not":{"$regex":")"}}})json", "filter.invalid", "$regex", "a.b"},
  });
}

TEST(Filter, InvalidRegexMessageNamesTheProblem) {
  auto f = filter::parse(parse(R"({"a":{"$regex":"ab(c"}})"));
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, "filter.invalid");
  EXPECT_NE(f.error().message.find("$regex"), std::string::npos) << f.error().message;
  EXPECT_NE(f.error().message.find("missing )"), std::string::npos) << f.error().message;
  // What RE2 does not have is refused, and the message says what it does not have.
  for (const char* unsupported :
       {R"j({"a":{"$regex":"^(.).\\1$"}})j", R"j({"a":{"$regex":"a(?=b)"}})j",
        R"j({"a":{"$regex":"a(?<!b)"}})j", R"j({"a":{"$regex":"a*+"}})j",
        R"j({"a":{"$regex":"(?>a)"}})j", R"j({"a":{"$regex":"(?x) a"}})j"}) {
    auto g = filter::parse(parse(unsupported));
    ASSERT_FALSE(g) << unsupported;
    EXPECT_EQ(g.error().code, "filter.invalid") << unsupported;
    EXPECT_NE(g.error().message.find("RE2's syntax"), std::string::npos) << g.error().message;
  }
  // The flags m and s add are not quoted back as if the caller had written them.
  auto m = filter::parse(parse(R"({"a":{"$regex":"ab(c","$options":"ms"}})"));
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message.find("(?ms)"), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("ab(c"), std::string::npos) << m.error().message;
  auto g = filter::parse(parse(R"({"a":{"$regex":"a\\1"}})"));
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("without backreferences"), std::string::npos)
      << g.error().message;
}

// Patterns are bounded: their length, how many one filter holds, and what one compiles to.
TEST(Filter, RegexPatternsAreBounded) {
  auto pattern = [](const std::string& p) {
    return filter::parse(boost::json::object{{"a", boost::json::object{{"$regex", p}}}});
  };
  EXPECT_TRUE(pattern(std::string(max_filter_regex_bytes, 'a')));
  auto long_one = pattern(std::string(max_filter_regex_bytes + 1, 'a'));
  ASSERT_FALSE(long_one);
  EXPECT_NE(long_one.error().message.find("at most 1024"), std::string::npos)
      << long_one.error().message;
  // Ordinary long repeats fit in what a pattern may take…
  for (const char* fits : {".{1000}", "[^,]{1000}", "\\p{L}+", "(?i)[a-z]{1000}"}) {
    EXPECT_TRUE(pattern(fits)) << fits;
  }
  // …a short pattern that compiles to far more does not, and nor does a repeat past 1,000.
  auto huge = pattern("\\p{L}{1000}\\p{N}{1000}");
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, "filter.invalid");
  EXPECT_NE(huge.error().message.find("KiB a pattern may take"), std::string::npos)
      << huge.error().message;
  EXPECT_FALSE(pattern("a{1001}"));
  std::string many;
  for (std::size_t i = 0; i <= max_filter_regexes; ++i) {
    many += std::string(i ? "," : "") + R"({"a":{"$regex":"x)" + std::to_string(i) + R"("}})";
  }
  auto refused = filter::parse(parse(R"({"$or":[)" + many + "]}"));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("more than 8 $regex"), std::string::npos)
      << refused.error().message;
}

TEST(Filter, ElemMatchParseErrors) {
  expect_errors({
      {R"({"a":{"$elemMatch":{}}})", "filter.invalid", "$elemMatch", "a"},
      {R"({"a":{"$elemMatch":1}})", "filter.invalid", "$elemMatch", "a"},
      {R"({"a":{"$elemMatch":[{"x":1}]}})", "filter.invalid", "$elemMatch", "a"},
      {R"({"a":{"$elemMatch":null}})", "filter.invalid", "$elemMatch", "a"},
      {R"({"a":{"$gt":1,"$elemMatch":"x"}})", "filter.invalid", "$elemMatch", "a"},
      // Operator form: errors at the array's path.
      {R"({"a.b":{"$elemMatch":{"$zap":1}}})", "filter.unknown_operator", "$zap", "a.b"},
      {R"({"a":{"$elemMatch":{"$gt":1,"$in":2}}})", "filter.invalid", "$in", "a"},
      {R"({"a":{"$elemMatch":{"$not":{"$zap":1}}}})", "filter.unknown_operator", "$zap", "a"},
      {R"({"a":{"$elemMatch":{"$regex":"("}}})", "filter.invalid", "$regex", "a"},
      {R"({"a":{"$elemMatch":{"$options":"i"}}})", "filter.invalid", "$options", "a"},
      {R"({"a":{"$elemMatch":{"$elemMatch":{}}}})", "filter.invalid", "$elemMatch", "a"},
      // Filter form: errors at "<array path>.<inner path>".
      {R"({"a.b":{"$elemMatch":{"x":{"$zap":1}}}})", "filter.unknown_operator", "$zap", "a.b.x"},
      {R"({"a":{"$elemMatch":{"x.y":{"$gt":1,"$zap":1}}}})", "filter.unknown_operator", "$zap",
       "a.x.y"},
      {R"({"a":{"$elemMatch":{"$or":[{"x":{"$zap":1}}]}}})", "filter.unknown_operator", "$zap",
       "a.x"},
      {R"({"a":{"$elemMatch":{"x":{"$elemMatch":{"y":{"$zap":1}}}}}})", "filter.unknown_operator",
       "$zap", "a.x.y"},
      {R"({"a":{"$elemMatch":{"x":1,"$where":"1"}}})", "filter.unknown_operator", "$where", "a"},
      {R"({"a":{"$elemMatch":{"x":1,"$gt":1}}})", "filter.unknown_operator", "$gt", "a"},
      {R"({"a":{"$elemMatch":{"$or":[]}}})", "filter.invalid", "$or", "a"},
      {R"({"a":{"$elemMatch":{"$and":[1]}}})", "filter.invalid", "$and", "a"},
      {R"({"a":{"$elemMatch":{"x":{"$regex":"["}}}})", "filter.invalid", "$regex", "a.x"},
      {R"({"a":{"$elemMatch":{"x":{"$size":"1"}}}})", "filter.invalid", "$size", "a.x"},
      {R"({"a":{"$elemMatch":{"x..y":1}}})", "filter.invalid", nullptr, "a.x..y"},
      {R"({"a":{"$elemMatch":{"x":{"$gt":1,"y":2}}}})", "filter.invalid", nullptr, "a.x"},
  });
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

TEST(Filter, RejectsExcessiveElemMatchNesting) {
  std::string operator_form = R"({"$gt":1})";
  std::string filter_form = R"({"$gt":1})";
  for (int i = 0; i < 40; ++i) {
    operator_form = R"({"$elemMatch":)" + operator_form + "}";
    filter_form = R"({"$elemMatch":{"x":)" + filter_form + "}}";
  }
  boost::json::parse_options opts;
  opts.max_depth = 1000;
  for (const auto& inner : {operator_form, filter_form}) {
    const std::string spec = R"({"a":)" + inner + "}";
    auto f = filter::parse(boost::json::parse(spec, {}, opts));
    ASSERT_FALSE(f) << spec;
    EXPECT_EQ(f.error().code, "filter.invalid") << spec;
  }
}

// $in looks its scalars up in a sorted list; what it matches must stay what a disjunction of
// equalities matches ($nin: a $nor of them), for every kind of value on either side: 1 and 1.0
// and 1e0, integers past 2^53 and 2^63, strings that are prefixes of each other, booleans,
// null against missing, arrays and objects (member order apart) as operands and as fields.
TEST(Filter, InMatchesWhatADisjunctionOfEqualitiesMatches) {
  const std::vector<std::string> values = {"null",
                                           "true",
                                           "false",
                                           "0",
                                           "-0.0",
                                           "1",
                                           "1.0",
                                           "1e0",
                                           "2",
                                           "-3",
                                           "2.5",
                                           "9007199254740993",
                                           "9007199254740992.0",
                                           "18446744073709551615",
                                           "-9223372036854775808",
                                           R"("")",
                                           R"("a")",
                                           R"("ab")",
                                           R"("b")",
                                           R"("1")",
                                           "[]",
                                           "[1]",
                                           "[1.0,2]",
                                           R"(["a"])",
                                           "[[1]]",
                                           "{}",
                                           R"({"x":1,"y":2})",
                                           R"({"y":2.0,"x":1})"};
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>(state >> 33);
  };
  auto pick = [&] { return values[next() % values.size()]; };
  int compared = 0;
  for (int round = 0; round < 300; ++round) {
    std::string list;
    std::string any;
    const std::size_t k = next() % 7;
    for (std::size_t i = 0; i < k; ++i) {
      auto v = pick();
      list += (i ? "," : "") + v;
      any += std::string(i ? "," : "") + R"({"f":{"$eq":)" + v + "}}";
    }
    auto in = filter::parse(parse(R"({"f":{"$in":[)" + list + "]}}")).value();
    auto nin = filter::parse(parse(R"({"f":{"$nin":[)" + list + "]}}")).value();
    std::optional<filter> ors;
    std::optional<filter> nors;
    if (k > 0) {
      ors = filter::parse(parse(R"({"$or":[)" + any + "]}")).value();
      nors = filter::parse(parse(R"({"$nor":[)" + any + "]}")).value();
    }
    for (int d = 0; d < 12; ++d) {
      boost::json::object rec;
      switch (next() % 3) {
        case 0:
          break;  // missing
        case 1:
          rec["f"] = parse(pick());
          break;
        default:
          rec["f"] = parse("[" + pick() + "," + pick() + "]");
      }
      const bool want = ors ? ors->matches(rec) : false;
      EXPECT_EQ(in.matches(rec), want) << list << " on " << boost::json::serialize(rec);
      EXPECT_EQ(nin.matches(rec), nors ? nors->matches(rec) : true)
          << list << " on " << boost::json::serialize(rec);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 3600);
}

// A filter's terms are bounded (a pass evaluates all of them on every record); an $in's
// scalars are not terms, so a long list of values is taken.
TEST(Filter, TermsAreBoundedButAnInsScalarsAreNot) {
  auto branches = [](std::size_t n, const std::string& each) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      out += (i ? "," : "") + each;
    }
    return out;
  };
  auto refused = [](const std::string& text) {
    auto f = filter::parse(parse(text));
    if (f) {
      return false;
    }
    EXPECT_EQ(f.error().code, "filter.invalid") << text.substr(0, 80);
    EXPECT_NE(f.error().message.find("more than 256 terms"), std::string::npos)
        << f.error().message;
    return true;
  };
  ASSERT_EQ(max_filter_terms, 256u);
  // An $or of equalities: a branch and its field test, two terms each.
  EXPECT_FALSE(refused(R"({"$or":[)" + branches(128, R"({"a":1})") + "]}"));
  EXPECT_TRUE(refused(R"({"$or":[)" + branches(129, R"({"a":1})") + "]}"));
  // Empty branches count: each is still visited per record.
  EXPECT_TRUE(refused(R"({"$and":[)" + branches(257, "{}") + "]}"));
  EXPECT_TRUE(refused(R"({"a":{"$all":[)" + branches(256, "1") + "]}}"));
  EXPECT_FALSE(refused(R"({"a":{"$all":[)" + branches(255, "1") + "]}}"));
  EXPECT_TRUE(refused(R"({"a":{"$in":[)" + branches(256, "[1]") + "]}}"));
  EXPECT_TRUE(refused(R"({"a":{"$nin":[)" + branches(256, "{\"x\":1}") + "]}}"));
  EXPECT_TRUE(refused(R"({"a":{"$not":{"$in":[)" + branches(255, "[1]") + "]}}}"));
  // Operators under $not and $elemMatch count.
  EXPECT_TRUE(refused(R"({"$or":[)" + branches(86, R"({"a":{"$not":{"$gt":1}}})") + "]}"));
  // 100,000 scalars: one term, looked up in O(log k).
  std::string many;
  for (int i = 0; i < 100000; ++i) {
    many += (i ? "," : "") + std::to_string(i * 3);
  }
  auto in = filter::parse(parse(R"({"a":{"$in":[)" + many + R"(,"x",null]}})"));
  ASSERT_TRUE(in);
  EXPECT_TRUE(in->matches(parse(R"({"a":299997})").as_object()));
  EXPECT_TRUE(in->matches(parse(R"({"a":299997.0})").as_object()));
  EXPECT_FALSE(in->matches(parse(R"({"a":299998})").as_object()));
  EXPECT_TRUE(in->matches(parse(R"({"a":[5,"x"]})").as_object()));
  EXPECT_TRUE(in->matches(parse(R"({"b":1})").as_object()));  // missing is null
}

// The bounds of a long $in are not read from an index: its runs would be looked up again on
// every walk of a window, O(k log N).
TEST(Filter, BoundsHoldAtMostMaxBoundRangesIntervals) {
  auto of = [](std::size_t n) {
    std::string list;
    for (std::size_t i = 0; i < n; ++i) {
      list += (i ? "," : "") + std::to_string(i);
    }
    return filter::parse(parse(R"({"a":{"$in":[)" + list + "]}}")).value();
  };
  const auto path = json_path::parse("a").value();
  EXPECT_TRUE(of(max_bound_ranges).bounds_on(path));
  EXPECT_FALSE(of(max_bound_ranges + 1).bounds_on(path));
  // The same bound over several clauses on the path.
  std::string list;
  for (std::size_t i = 0; i < 600; ++i) {
    list += (i ? "," : "") + std::to_string(i);
  }
  auto two = filter::parse(
                 parse(R"({"$or":[{"a":{"$in":[)" + list + R"(]}},{"a":{"$in":[)" + list + "]}}]}"))
                 .value();
  EXPECT_FALSE(two.bounds_on(path));
}

TEST(Filter, FieldsListsTopLevelSegmentsOnce) {
  auto f = filter::parse(parse(
      R"({"addr.city":"x","age":{"$gt":1},"$or":[{"addr.zip":1},{"tags":{"$not":{"$size":1}}}],
          "$nor":[{"age":2}]})"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->fields(), (std::vector<std::string>{"addr", "age", "tags"}));
}

TEST(Filter, PathsListEachTestedPathOnceOutsideElemMatch) {
  auto f = filter::parse(parse(
      R"({"addr.city":"x","age":{"$gt":1},"$or":[{"addr.zip":1},{"tags":{"$not":{"$size":1}}}],
          "$nor":[{"age":2},{"$and":[{"m.0.k":3}]}],"items":{"$elemMatch":{"q.r":1,"n":2}}})"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->paths(),
            (std::vector<std::string>{"addr.city", "age", "addr.zip", "tags", "m.0.k", "items"}));
  EXPECT_EQ(f->disjuncts().at(1).paths(), f->paths());  // a branch's are its filter's
}

TEST(Filter, FieldsNameTheElemMatchArrayNotTheElementFields) {
  auto f = filter::parse(parse(
      R"({"items":{"$elemMatch":{"age":1,"dim.w":1,"$or":[{"qty":1}]}},
          "nums":{"$elemMatch":{"$gt":1}},
          "tags":{"$not":{"$elemMatch":{"x":{"$elemMatch":{"y":1}}}}},
          "name":{"$regex":"^A"}})"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->fields(), (std::vector<std::string>{"items", "nums", "tags", "name"}));
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

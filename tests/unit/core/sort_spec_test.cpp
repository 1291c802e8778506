// Tests for core/sort_spec: key parsing, the JSON total order, multi-key compare and tie-breaks.
#include "core/sort_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

using boost::json::value;

boost::json::object obj(const char* text) {
  return boost::json::parse(text).as_object();
}

int sign(int c) {
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

TEST(SortSpec, ParsesAscendingAndDescendingKeys) {
  auto s = sort_spec::parse(std::vector<std::string>{"a.b", "-c", "-_ver.id"});
  ASSERT_TRUE(s);
  ASSERT_EQ(s->keys().size(), 3U);
  EXPECT_EQ(s->keys()[0], (sort_key{"a.b", false}));
  EXPECT_EQ(s->keys()[1], (sort_key{"c", true}));
  EXPECT_EQ(s->keys()[2], (sort_key{"_ver.id", true}));
  EXPECT_EQ(s->paths()[2].segments(), (std::vector<std::string>{"_ver", "id"}));
}

TEST(SortSpec, RejectsEmptyKeysAndBadPaths) {
  for (const char* bad : {"", "-", "a..b", "-.a", "a."}) {
    auto s = sort_spec::parse(std::vector<std::string>{"ok", bad});
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code, "request.invalid_field");
    EXPECT_EQ(s.error().details.at("field"), "sort");
  }
}

// Every comparison between records that tie reads the next key: a caller's sort of thousands of
// keys (a 1 MiB body holds 100,000) would make an index build over a dataset take hours.
TEST(SortSpec, AtMostMaxSortKeysKeys) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < max_sort_keys; ++i) {
    keys.push_back("k" + std::to_string(i));
  }
  ASSERT_TRUE(sort_spec::parse(keys));
  keys.push_back("-one.more");
  auto s = sort_spec::parse(keys);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, "request.invalid_field");
  EXPECT_EQ(s.error().details.at("field"), "sort");
  EXPECT_NE(s.error().message.find("33 keys; at most 32"), std::string::npos) << s.error().message;
  boost::json::array many(10000, boost::json::value("a"));
  EXPECT_FALSE(sort_spec::parse(boost::json::value(std::move(many))));
}

TEST(SortSpec, ParsesJsonArrayOnly) {
  auto ok = sort_spec::parse(boost::json::parse(R"(["-a", "b"])"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->keys().size(), 2U);
  auto empty = sort_spec::parse(boost::json::parse("[]"));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  for (const char* bad : {R"("a")", "null", "{}", R"(["a", 1])", "[null]", R"([["a"]])"}) {
    auto s = sort_spec::parse(boost::json::parse(bad));
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code, "request.invalid_field");
    EXPECT_EQ(s.error().details.at("field"), "sort");
  }
  auto bad_key = sort_spec::parse(boost::json::parse(R"(["-"])"));
  ASSERT_FALSE(bad_key);
  EXPECT_EQ(bad_key.error().code, "request.invalid_field");
}

TEST(CompareJson, TypeOrder) {
  // missing == null < numbers < strings < objects < arrays < bool
  const std::vector<value> ascending = {
      nullptr,
      value(-1e300),
      value(std::int64_t{-5}),
      value(0.5),
      value(std::uint64_t{18446744073709551615ULL}),
      value(""),
      value("A"),
      value("a"),
      value("\xc3\xa9"),  // é: bytes above ASCII sort after
      boost::json::parse("{}"),
      boost::json::parse(R"({"a":1})"),
      boost::json::parse(R"({"a":2})"),
      boost::json::parse(R"({"a":2,"b":0})"),
      boost::json::parse(R"({"b":0})"),
      boost::json::parse("[]"),
      boost::json::parse("[1]"),
      boost::json::parse("[1, 2]"),
      boost::json::parse(R"(["x"])"),
      value(false),
      value(true),
  };
  for (std::size_t i = 0; i < ascending.size(); ++i) {
    EXPECT_EQ(compare_json(&ascending[i], &ascending[i]), 0) << i;
    for (std::size_t j = i + 1; j < ascending.size(); ++j) {
      EXPECT_EQ(compare_json(&ascending[i], &ascending[j]), -1)
          << boost::json::serialize(ascending[i]) << " vs " << boost::json::serialize(ascending[j]);
      EXPECT_EQ(compare_json(&ascending[j], &ascending[i]), 1);
    }
  }
  const value null_value;
  EXPECT_EQ(compare_json(nullptr, nullptr), 0);
  EXPECT_EQ(compare_json(nullptr, &null_value), 0);
}

struct number_case {
  value a;
  value b;
  int expected;
};

TEST(CompareJson, NumbersCompareExactlyAcrossKinds) {
  const std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
  const std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();
  const std::int64_t two53 = std::int64_t{1} << 53;
  const double nan = std::nan("");
  const std::vector<number_case> cases = {
      {value(std::int64_t{1}), value(1.0), 0},
      {value(std::int64_t{1}), value(1.5), -1},
      {value(std::int64_t{2}), value(1.5), 1},
      {value(std::int64_t{-2}), value(-1.5), -1},
      {value(std::int64_t{-1}), value(-1.5), 1},
      {value(std::uint64_t{1}), value(std::int64_t{1}), 0},
      {value(std::uint64_t{0}), value(std::int64_t{-1}), 1},
      {value(u64_max), value(i64_max), 1},
      {value(two53 + 1), value(static_cast<double>(two53)), 1},  // a double cast would say 0
      {value(two53), value(static_cast<double>(two53)), 0},
      {value(i64_max), value(9223372036854775808.0), -1},
      {value(i64_min), value(-9223372036854775808.0), 0},
      {value(i64_min), value(-1e19), 1},
      {value(u64_max), value(18446744073709551616.0), -1},
      {value(u64_max), value(-1.0), 1},
      {value(std::uint64_t{5}), value(5.0), 0},
      {value(nan), value(-1e308), -1},
      {value(nan), value(std::int64_t{0}), -1},
      {value(nan), value(nan), 0},
      {value(0.0), value(-0.0), 0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(compare_numbers(c.a, c.b), c.expected)
        << boost::json::serialize(c.a) << " vs " << boost::json::serialize(c.b);
    EXPECT_EQ(compare_numbers(c.b, c.a), -c.expected)
        << boost::json::serialize(c.b) << " vs " << boost::json::serialize(c.a);
    EXPECT_EQ(compare_json(&c.a, &c.b), c.expected);
  }
}

TEST(SortSpec, SingleKeyAscendingWithMissingAndMixedTypes) {
  auto s = sort_spec::parse(std::vector<std::string>{"v"}).value();
  std::vector<boost::json::object> rows = {
      obj(R"({"id":"t","v":true})"),    obj(R"({"id":"s","v":"b"})"),
      obj(R"({"id":"n2","v":2.5})"),    obj(R"({"id":"m"})"),
      obj(R"({"id":"z","v":null})"),    obj(R"({"id":"a","v":[0]})"),
      obj(R"({"id":"o","v":{"x":1}})"), obj(R"({"id":"n1","v":1})"),
  };
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return s.less(a, b); });
  std::vector<std::string> ids;
  for (const auto& r : rows) {
    ids.emplace_back(r.at("id").as_string());
  }
  // missing and null tie on the key, so "id" breaks the tie: "m" < "z".
  EXPECT_EQ(ids, (std::vector<std::string>{"m", "z", "n1", "n2", "s", "o", "a", "t"}));
}

TEST(SortSpec, DescendingReversesKeyButNotIdTieBreak) {
  auto s = sort_spec::parse(std::vector<std::string>{"-v"}).value();
  const auto a = obj(R"({"id":"a","v":1})");
  const auto b = obj(R"({"id":"b","v":1})");
  const auto c = obj(R"({"id":"c","v":2})");
  const auto missing = obj(R"({"id":"m"})");
  EXPECT_LT(s.compare(c, a), 0);  // 2 before 1
  EXPECT_GT(s.compare(a, c), 0);
  EXPECT_LT(s.compare(a, b), 0);  // tie → id ascending, even under "-v"
  EXPECT_GT(s.compare(b, a), 0);
  EXPECT_GT(s.compare(missing, a), 0);  // missing is lowest, so last when descending
  EXPECT_EQ(s.compare(a, a), 0);
}

TEST(SortSpec, MultiKeyLeftToRight) {
  auto s = sort_spec::parse(std::vector<std::string>{"g", "-n"}).value();
  const auto r1 = obj(R"({"id":"1","g":"x","n":1})");
  const auto r2 = obj(R"({"id":"2","g":"x","n":5})");
  const auto r3 = obj(R"({"id":"3","g":"a","n":0})");
  EXPECT_LT(s.compare(r3, r1), 0);  // first key decides
  EXPECT_LT(s.compare(r2, r1), 0);  // second key, descending
}

TEST(SortSpec, NestedPathsAndVersionIds) {
  auto s = sort_spec::parse(std::vector<std::string>{"-_ver.id"}).value();
  const auto older = obj(R"({"id":"x","_ver":{"id":"0z"}})");
  const auto newer = obj(R"({"id":"y","_ver":{"id":"10-"}})");
  EXPECT_LT(s.compare(newer, older), 0);
}

TEST(SortSpec, EmptySpecOrdersById) {
  sort_spec s;
  EXPECT_LT(s.compare(obj(R"({"id":"a"})"), obj(R"({"id":"b"})")), 0);
  EXPECT_EQ(s.compare(obj(R"({"id":"a","x":1})"), obj(R"({"id":"a","x":2})")), 0);
}

TEST(SortSpec, TotalOrderOnDistinctIds) {
  auto s = sort_spec::parse(std::vector<std::string>{"v", "-w"}).value();
  std::vector<boost::json::object> rows;
  for (int i = 0; i < 40; ++i) {
    boost::json::object r;
    r["id"] = "r" + std::to_string(i);
    if (i % 3 != 0) {
      r["v"] = i % 4;
    }
    if (i % 5 == 0) {
      r["w"] = "s" + std::to_string(i % 2);
    }
    rows.push_back(std::move(r));
  }
  for (const auto& a : rows) {
    for (const auto& b : rows) {
      const int ab = sign(s.compare(a, b));
      const int ba = sign(s.compare(b, a));
      EXPECT_EQ(ab, -ba);
      EXPECT_EQ(ab == 0, &a == &b);
    }
  }
}

TEST(SortSpec, PrependLeadsAndRemovesDuplicatePath) {
  auto s = sort_spec::parse(std::vector<std::string>{"a", "-name", "b"}).value();
  s.prepend(sort_key{"name", false});
  ASSERT_EQ(s.keys().size(), 3U);
  EXPECT_EQ(s.keys()[0], (sort_key{"name", false}));
  EXPECT_EQ(s.keys()[1], (sort_key{"a", false}));
  EXPECT_EQ(s.keys()[2], (sort_key{"b", false}));
  ASSERT_EQ(s.paths().size(), 3U);
  EXPECT_EQ(s.paths()[0].text(), "name");
  EXPECT_EQ(s.paths()[1].text(), "a");
  const auto x = obj(R"({"id":"1","name":"b","a":0})");
  const auto y = obj(R"({"id":"2","name":"a","a":9})");
  EXPECT_LT(s.compare(y, x), 0);  // name leads now

  s.prepend(sort_key{"z", true});
  EXPECT_EQ(s.keys().size(), 4U);
  EXPECT_EQ(s.keys()[0], (sort_key{"z", true}));
}

// compare_text (a record read in place) agrees with compare() on its document whenever it
// answers, and answers for strings without escapes, nulls, missing values and booleans.
TEST(SortSpec, ComparingWithARecordsTextAgreesWithItsDocument) {
  const std::vector<std::string> values{R"("a")",
                                        R"("abcdefgh1")",
                                        R"("abcdefgh2")",
                                        R"("abcdefgh\u0031")",
                                        R"("ab\"c")",
                                        R"("")",
                                        R"("\u00e9t\u00e9")",
                                        R"("été")",
                                        "1",
                                        "1.5",
                                        "-3",
                                        "null",
                                        "true",
                                        "false",
                                        R"({"x":1})",
                                        "[1,2]"};
  std::size_t answered = 0;
  for (const char* keys : {R"(["v"])", R"(["-v","w"])", R"(["n.v"])", R"(["v.0"])"}) {
    auto spec = sort_spec::parse(boost::json::parse(keys)).value();
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < values.size(); ++i) {
      for (std::size_t j = 0; j < values.size(); j += 3) {
        texts.push_back(R"({"id":"r)" + std::to_string(i * 100 + j) + R"(","v":)" + values[i] +
                        R"(,"w":)" + values[j] + R"(,"n":{"v":)" + values[j] + "}}");
      }
      texts.push_back(R"({"id":"m)" + std::to_string(i) + R"(","w":)" + values[i] + "}");
    }
    for (const auto& a : texts) {
      auto pa = spec.position_of(obj(a.c_str()));
      for (const auto& b : texts) {
        auto db = obj(b.c_str());
        auto c = spec.compare_text(pa, b, db.at("id").as_string());
        if (c) {
          ++answered;
          ASSERT_EQ(*c, sign(spec.compare(pa, db))) << keys << "\n" << a << "\n" << b;
        }
      }
    }
  }
  EXPECT_GT(answered, 1000u);
  // What it answers without the document: plain strings, nulls, missing values, booleans, and
  // values of different types; a number tie, an escape or an index in a path need the document.
  auto spec = sort_spec::parse(boost::json::parse(R"(["v","-w"])")).value();
  auto pos = spec.position_of(obj(R"({"id":"a","v":"abcdefgh1","w":true})"));
  EXPECT_EQ(spec.compare_text(pos, R"({"id":"b","v":"abcdefgh1","w":false})", "b"), -1);
  EXPECT_EQ(spec.compare_text(pos, R"({"id":"b","v":"abcdefgh0","w":true})", "b"), 1);
  EXPECT_EQ(spec.compare_text(pos, R"({"id":"b","w":true})", "b"), 1);
  EXPECT_EQ(spec.compare_text(pos, R"({"id":"b","v":1,"w":true})", "b"), 1);
  EXPECT_EQ(spec.compare_text(pos, R"({"id":"a","v":"abcdefgh1","w":true})", "a"), 0);
  EXPECT_EQ(spec.compare_text(pos, R"({"id":"b","v":"abcdefgh\u0031","w":true})", "b"),
            std::nullopt);
  auto numbers = sort_spec::parse(boost::json::parse(R"(["v"])")).value();
  EXPECT_EQ(numbers.compare_text(numbers.position_of(obj(R"({"id":"a","v":1})")),
                                 R"({"id":"b","v":1.0})", "b"),
            std::nullopt);
}

}  // namespace
}  // namespace weir::core

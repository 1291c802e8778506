// core::match_spans against brute force on indexes deep enough to have inner nodes: the runs of
// ranks where a filter's matches can be hold every match, and count_by_ranks equals the number
// of matches whenever it answers.
#include "core/match_spans.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include <boost/json/parse.hpp>

namespace weir::core {
namespace {

using index = order_index<record_ptr>;

// 3,000 records whose "n" is mostly an integer, sometimes a fraction, a string, a boolean, an
// object, an array, null or missing; `arrays` of them hold an array.
std::vector<record_ptr> records(std::mt19937& rng, int arrays) {
  std::vector<record_ptr> out;
  for (int i = 0; i < 3000; ++i) {
    boost::json::object d;
    d["id"] = "r" + std::to_string(i);
    const int n = static_cast<int>(rng() % 500);
    if (i < arrays) {
      d["n"] = boost::json::array{n, n + 40};
    } else {
      switch (rng() % 10) {
        case 0:
          d["n"] = n + 0.25;
          break;
        case 1:
          d["n"] = "k" + std::to_string(n);
          break;
        case 2:
          d["n"] = nullptr;
          break;
        case 3:
          break;
        case 4:
          d["n"] = n % 2 == 0;
          break;
        default:
          d["n"] = n;
      }
      if (i % 211 == 17) {  // now and then an object (after the draw: the rest stays the same)
        d["n"] = i % 2 == 0 ? boost::json::object{} : boost::json::object{{"x", n}};
      }
    }
    // "k": a few strings, a number, null, missing, now and then an array.
    switch (rng() % 8) {
      case 0:
      case 1:
        d["k"] = "a";
        break;
      case 2:
      case 3:
        d["k"] = "b";
        break;
      case 4:
        d["k"] = i % 97 == 0 ? boost::json::value(boost::json::array{"a", "z"}) : "c";
        break;
      case 5:
        d["k"] = 3;
        break;
      case 6:
        d["k"] = nullptr;
        break;
      default:
        break;
    }
    d["_ver"] = boost::json::object{{"id", "1"}};
    out.push_back(make_record(d));
  }
  return out;
}

std::unique_ptr<index> build(const std::vector<record_ptr>& recs,
                             const std::vector<std::string>& sort) {
  auto spec = sort_spec::parse(sort).value();
  auto idx = std::make_unique<index>(spec);
  for (const auto& r : recs) {
    idx->insert(r, spec.position_of(parse_doc(*r)));
  }
  return idx;
}

std::uint64_t brute_count(const std::vector<record_ptr>& recs, const filter& f) {
  std::uint64_t n = 0;
  for (const auto& r : recs) {
    n += f.matches(parse_doc(*r)) ? 1 : 0;
  }
  return n;
}

const std::vector<std::string> exact_filters{
    R"({"n":{"$gte":100}})", R"({"n":{"$gt":100,"$lte":250.25}})", R"({"n":42})",
    R"({"n":{"$lt":0}})", R"({"n":{"$gte":"k2","$lt":"k3"}})", R"({"n":{"$regex":"^k1"}})",
    R"({"n":{"$gt":5,"$lt":"z"}})", R"({"n":{"$gt":300,"$lt":200}})",
    // Unions, complements and the other classes.
    R"({"n":{"$in":[3,7,"k5",11.25,400]}})", R"({"n":{"$in":[7,7.0,7,"k7"]}})",
    R"({"n":{"$in":[]}})", R"({"n":{"$ne":42}})", R"({"n":{"$nin":[1,2,"k3",true]}})",
    R"({"n":{"$nin":[]}})", R"({"n":{"$gte":100,"$ne":120}})", R"({"n":null})",
    R"({"n":{"$ne":null}})", R"({"n":{"$in":[null,5]}})", R"({"n":{"$gte":null}})",
    R"({"n":{"$gt":null}})", R"({"n":true})", R"({"n":{"$gt":false}})", R"({"n":{"$ne":false}})",
    R"({"n":{"$not":{"$gte":100}}})", R"({"n":{"$not":{"$regex":"^k1"}}})",
    R"({"$or":[{"n":{"$lt":10}},{"n":{"$gt":490}}]})",
    R"({"$or":[{"n":{"$lt":300}},{"n":{"$gt":200}}]})", R"({"$nor":[{"n":{"$lt":10}},{"n":"k3"}]})",
    R"({"$and":[{"n":{"$gte":5}},{"n":{"$in":[3,7,9]}}]})",
    R"({"$or":[{"n":{"$in":[1,2]}},{"$nor":[{"n":{"$gt":5}}]}]})",
    // Type classes, and operators only an array satisfies.
    R"({"n":{"$type":"string"}})", R"({"n":{"$type":"number"}})", R"({"n":{"$type":[1,16]}})",
    R"({"n":{"$type":["bool","object"]}})", R"({"n":{"$type":"object"}})",
    R"({"n":{"$type":["array","bool"]}})", R"({"n":{"$type":"string","$gte":"k3"}})",
    R"({"n":{"$not":{"$type":"string"}}})", R"({"n":{"$not":{"$type":["number","bool"]}}})",
    R"({"$or":[{"n":{"$type":"bool"}},{"n":{"$lt":5}}]})", R"({"n":{"$all":[7]}})",
    R"({"n":{"$all":[7,7.0]}})", R"({"n":{"$all":[7,8]}})", R"({"n":{"$all":[]}})",
    R"({"n":{"$all":[null]}})", R"({"n":{"$not":{"$all":[true]}}})"};

// Bounds that hold every match but admit some records that do not match: read, not counted.
const std::vector<std::string> inexact_filters{
    R"({"n":{"$exists":false}})", R"({"n":{"$type":"null"}})", R"({"n":{"$type":"int"}})",
    R"({"n":{"$type":"double"}})", R"({"n":{"$type":["null","string"]}})",
    R"({"n":{"$type":"int","$lt":100}})", R"({"$or":[{"n":{"$exists":false}},{"n":"k3"}]})",
    // Operators only an array satisfies bound nothing; beside a bound, that bound serves.
    R"({"n":{"$size":2,"$lt":100}})", R"({"n":{"$elemMatch":{"$gte":400},"$gte":400}})"};

TEST(MatchSpans, CountByRanksEqualsTheMatchesInBothDirections) {
  std::mt19937 rng{7};
  auto recs = records(rng, 25);
  for (const std::string sort : {"n", "-n"}) {
    auto idx = build(recs, {sort});
    for (const auto& text : exact_filters) {
      auto f = filter::parse(boost::json::parse(text)).value();
      auto n = count_by_ranks(*idx, f, max_array_reads_for_count);
      ASSERT_TRUE(n.has_value()) << sort << " " << text;
      EXPECT_EQ(*n, brute_count(recs, f)) << sort << " " << text;
    }
  }
}

TEST(MatchSpans, EveryMatchLiesInTheSpans) {
  std::mt19937 rng{11};
  auto recs = records(rng, 25);
  auto filters = exact_filters;
  filters.push_back(R"({"n":{"$gte":100},"id":{"$lt":"r5"}})");
  filters.push_back(R"({"$or":[{"n":{"$lt":10}},{"n":5,"id":"r3"}]})");
  filters.push_back(R"({"n":{"$nin":[5,6]},"id":{"$lt":"r5"}})");
  filters.push_back(R"({"n":{"$in":[5,6],"$size":2}})");
  filters.insert(filters.end(), inexact_filters.begin(), inexact_filters.end());
  for (const std::string sort : {"n", "-n"}) {
    auto idx = build(recs, {sort});
    for (const auto& text : filters) {
      auto f = filter::parse(boost::json::parse(text)).value();
      auto plan = span_plan::make(f, idx->spec());
      ASSERT_TRUE(plan.has_value()) << text;
      std::uint64_t in_spans = 0;
      std::size_t last_end = 0;
      for (const auto& s : plan->spans(*idx)) {
        ASSERT_GE(s.first, last_end) << "spans in index order, disjoint";
        last_end = s.last;
        auto it = idx->select(s.first);
        for (std::size_t k = 0; k < s.size(); ++k, ++it) {
          in_spans += f.matches(parse_doc(it.rec())) ? 1 : 0;
        }
      }
      EXPECT_EQ(in_spans, brute_count(recs, f)) << sort << " " << text;
    }
  }
}

// An index on ["k", "n"]: a filter fixing k to values and bounding n is read, and counted, from
// the runs of n's bounds within each value's, in every direction of the two keys.
TEST(MatchSpans, TwoKeysFixedThenBoundedAreCountedFromTheRunsWithinEachValue) {
  std::mt19937 rng{5};
  auto recs = records(rng, 25);
  const std::vector<std::string> exact{
      R"({"k":"a","n":{"$gte":100}})",
      R"({"k":{"$in":["a","b",3]},"n":{"$ne":42}})",
      R"({"k":null,"n":{"$lt":50}})",
      R"({"k":{"$in":[3,3.0]},"n":{"$gt":10,"$lte":400}})",
      R"({"$and":[{"k":"a"},{"$or":[{"n":{"$lt":10}},{"n":{"$gt":490}}]}]})",
      R"({"k":{"$in":[]},"n":5})",
      R"({"k":"b","n":{"$in":[1,2,3,"k5",true]}})",
      R"({"n":{"$nin":[1,2]},"k":"c"})",
      R"({"k":"a","n":null})"};
  const std::vector<std::string> inexact{R"({"k":"a","n":{"$gte":100},"id":{"$lt":"r5"}})",
                                         R"({"k":"a","$or":[{"n":{"$lt":10}},{"n":5,"id":"r1"}]})"};
  for (const std::vector<std::string>& sort :
       {std::vector<std::string>{"k", "n"}, {"-k", "n"}, {"k", "-n"}, {"-k", "-n"}}) {
    auto idx = build(recs, sort);
    for (const auto& text : exact) {
      auto f = filter::parse(boost::json::parse(text)).value();
      auto plan = span_plan::make(f, idx->spec());
      ASSERT_TRUE(plan && plan->compound() && plan->exact()) << sort[0] << " " << text;
      auto n = count_by_ranks(*idx, f, max_array_reads_for_count);
      ASSERT_TRUE(n.has_value()) << text;
      EXPECT_EQ(*n, brute_count(recs, f)) << sort[0] << sort[1] << " " << text;
    }
    for (const auto& text : inexact) {
      auto f = filter::parse(boost::json::parse(text)).value();
      auto plan = span_plan::make(f, idx->spec());
      ASSERT_TRUE(plan && plan->compound() && !plan->exact()) << text;
      EXPECT_FALSE(count_by_ranks(*idx, f, max_array_reads_for_count)) << text;
    }
    for (const auto& text : [&] {
           auto all = exact;
           all.insert(all.end(), inexact.begin(), inexact.end());
           return all;
         }()) {
      auto f = filter::parse(boost::json::parse(text)).value();
      std::uint64_t in_spans = 0;
      std::size_t last_end = 0;
      for (const auto& s : span_plan::make(f, idx->spec())->spans(*idx)) {
        ASSERT_GE(s.first, last_end) << "spans in index order, disjoint";
        last_end = s.last;
        auto it = idx->select(s.first);
        for (std::size_t k = 0; k < s.size(); ++k, ++it) {
          in_spans += f.matches(parse_doc(it.rec())) ? 1 : 0;
        }
      }
      EXPECT_EQ(in_spans, brute_count(recs, f)) << sort[0] << sort[1] << " " << text;
    }
  }
  // Not fixed to values, or the second key unbounded: the first key's runs alone.
  auto idx = build(recs, {"k", "n"});
  for (const char* text : {R"({"k":{"$gte":"a"},"n":5})", R"({"k":"a"})", R"({"k":"a","m":1})"}) {
    auto plan = span_plan::make(filter::parse(boost::json::parse(text)).value(), idx->spec());
    ASSERT_TRUE(plan) << text;
    EXPECT_FALSE(plan->compound()) << text;
  }
}

TEST(MatchSpans, NoCountFromRanksWhereItWouldNotBeExactOrCheap) {
  std::mt19937 rng{3};
  auto recs = records(rng, 25);
  auto idx = build(recs, {"n"});
  for (const std::string text :
       {R"({"n":{"$gte":100},"id":"r1"})", R"({"n":{"$regex":"^k","$options":"i"}})",
        R"({"n":{"$in":[[1],2]}})", R"({"n":{"$ne":{"a":1}}})", R"({"id":{"$gte":"r5"}})",
        R"({"$or":[{"n":1},{"id":"r1"}]})", R"({"$or":[{"n":1},{"n":2,"id":"r1"}]})",
        R"({"n":{"$not":{"$regex":"k"}}})", R"({"$nor":[{"n":{"$gte":1},"id":"r1"}]})",
        R"({"n":{"$exists":true}})", R"({"n":{"$not":{"$exists":false}}})",
        R"({"n":{"$all":[[1]]}})", R"({"n":{"$type":"array"}})", R"({"n":{"$size":2}})",
        R"({"n":{"$elemMatch":{"$gte":400}}})", "{}"}) {
    auto f = filter::parse(boost::json::parse(text)).value();
    EXPECT_FALSE(count_by_ranks(*idx, f, max_array_reads_for_count).has_value()) << text;
  }
  for (const auto& text : inexact_filters) {
    auto f = filter::parse(boost::json::parse(text)).value();
    EXPECT_FALSE(count_by_ranks(*idx, f, max_array_reads_for_count).has_value()) << text;
  }
  // Records holding an array at the key are read one by one, up to a bound.
  auto f = filter::parse(boost::json::parse(R"({"n":{"$gte":100}})")).value();
  EXPECT_FALSE(count_by_ranks(*idx, f, 24).has_value());
  EXPECT_EQ(count_by_ranks(*idx, f, 25), brute_count(recs, f));
}

// An $or across fields: each branch bounds a field of its own, and every match lies in the runs
// of some branch's index (filter::disjuncts), however the branches overlap.
TEST(MatchSpans, AnOrAcrossFieldsHasEveryMatchInTheRunsOfItsBranches) {
  std::mt19937 rng{13};
  auto recs = records(rng, 25);
  std::vector<std::unique_ptr<index>> indexes;
  indexes.push_back(build(recs, {"n"}));
  indexes.push_back(build(recs, {"-k"}));
  for (const std::string text :
       {R"({"$or":[{"n":{"$lt":10}},{"k":"a"}]})", R"({"$or":[{"n":{"$gte":450}},{"k":3}]})",
        R"({"id":{"$gte":"r2"},"$or":[{"n":{"$type":"string"}},{"k":{"$in":["b",null]}}]})",
        R"({"$and":[{"n":{"$ne":5}},{"$or":[{"k":"c"},{"n":{"$exists":false}},{"n":true}]}]})",
        R"({"$or":[{"n":{"$lt":100},"id":"r7"},{"k":{"$gt":"a"}}],"$nor":[{"k":"b"}]})"}) {
    auto f = filter::parse(boost::json::parse(text)).value();
    const auto branches = f.disjuncts();
    ASSERT_GE(branches.size(), 2u) << text;
    std::set<const record*> read;
    for (const auto& branch : branches) {
      bool planned = false;
      for (const auto& idx : indexes) {
        if (auto plan = span_plan::make(branch, idx->spec())) {
          planned = true;
          for (const auto& s : plan->spans(*idx)) {
            auto it = idx->select(s.first);
            for (std::size_t k = 0; k < s.size(); ++k, ++it) {
              read.insert(&it.rec());
            }
          }
        }
      }
      EXPECT_TRUE(planned) << text;
    }
    std::uint64_t in_runs = 0;
    for (const auto* r : read) {
      in_runs += f.matches(parse_doc(*r)) ? 1 : 0;
    }
    EXPECT_EQ(in_runs, brute_count(recs, f)) << text;
    EXPECT_LT(read.size(), recs.size()) << text;
  }
  // Only a top-level $or (or one in a top-level $and) gives branches.
  for (const std::string text :
       {R"({"n":1})", R"({"$nor":[{"n":1},{"k":"a"}]})", R"({"n":{"$not":{"$in":[1]}}})",
        R"({"n":{"$elemMatch":{"$or":[{"a":1},{"b":1}]}}})", "{}"}) {
    EXPECT_TRUE(filter::parse(boost::json::parse(text)).value().disjuncts().empty()) << text;
  }
  // A branch evaluates its own clauses alone.
  auto f = filter::parse(boost::json::parse(R"({"id":"r1","$or":[{"n":1},{"k":"a"}]})")).value();
  auto doc = boost::json::parse(R"({"id":"r2","n":1})").as_object();
  EXPECT_FALSE(f.matches(doc));
  EXPECT_TRUE(f.disjuncts()[0].matches(doc));
  EXPECT_FALSE(f.disjuncts()[1].matches(doc));
}

// An index on a dotted path reads a record's value there as the filter does (json_path: object
// keys, array indexes by number, no fan-out into an array of objects), built from the records'
// text as the shard builds it: every match lies in the spans, and exact bounds count.
TEST(MatchSpans, ADottedPathIsBoundedAsTheFilterReadsIt) {
  std::mt19937 rng{17};
  std::vector<record_ptr> recs;
  for (int i = 0; i < 3000; ++i) {
    const int v = static_cast<int>(rng() % 300);
    boost::json::object d;
    d["id"] = "r" + std::to_string(i);
    switch (rng() % 9) {
      case 0:
        d["m"] = boost::json::array{boost::json::object{{"k", v}}};  // no fan-out: missing
        break;
      case 1:
        d["m"] = boost::json::object{{"k", boost::json::array{v, v + 1}}};
        break;
      case 2:
        d["m"] = v;  // crosses a scalar: missing
        break;
      case 3:
        break;
      case 4:
        d["m"] = boost::json::object{{"k", nullptr}};
        break;
      case 5:
        d["m"] = boost::json::object{{"k", "s" + std::to_string(v)}, {"j", 1}};
        break;
      default:
        d["m"] = boost::json::object{{"j", v}, {"k", v}};
    }
    d["_ver"] = boost::json::object{{"id", "1"}};
    recs.push_back(make_record(d));
  }
  for (const std::string sort : {"m.k", "-m.k", "m.0.k"}) {
    auto spec = sort_spec::parse(std::vector<std::string>{sort}).value();
    index idx(spec);
    idx.build(recs.begin(), recs.end());
    const std::string path = sort.front() == '-' ? sort.substr(1) : sort;
    for (const std::string ops :
         {R"(3)", R"({"$gte":100,"$lt":120})", R"(null)", R"({"$ne":3})", R"({"$in":[1,2,"s7"]})",
          R"({"$type":"string"})", R"({"$exists":false})", R"({"$regex":"^s1"})"}) {
      auto f = filter::parse(boost::json::parse(R"({")" + path + R"(":)" + ops + "}")).value();
      EXPECT_EQ(f.paths(), std::vector<std::string>{path});
      auto plan = span_plan::make(f, idx.spec());
      ASSERT_TRUE(plan.has_value()) << sort << " " << ops;
      std::uint64_t in_spans = 0;
      for (const auto& sp : plan->spans(idx)) {
        auto it = idx.select(sp.first);
        for (std::size_t k = 0; k < sp.size(); ++k, ++it) {
          in_spans += f.matches(parse_doc(it.rec())) ? 1 : 0;
        }
      }
      const auto want = brute_count(recs, f);
      EXPECT_EQ(in_spans, want) << sort << " " << ops;
      if (plan->exact()) {
        EXPECT_EQ(count_by_ranks(idx, f, max_array_reads_for_count), want) << sort << " " << ops;
      }
    }
  }
}

TEST(MatchSpans, ARegexPrefixIsAnIntervalOnlyWhenItIsALiteral) {
  auto path = json_path::parse("s").value();
  auto bounds = [&](const char* text) {
    return filter::parse(boost::json::parse(text)).value().bounds_on(path);
  };
  auto b = bounds(R"({"s":{"$regex":"^ab"}})");
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->exact);
  ASSERT_EQ(b->admitted.k, value_bounds::kind::range);
  const auto* r = &b->admitted.range;
  EXPECT_EQ(r->type_rank, 2);
  EXPECT_EQ(r->lower->as_string(), "ab");
  EXPECT_EQ(r->upper->as_string(), "ac");
  EXPECT_FALSE(r->upper_inclusive);
  EXPECT_TRUE(bounds(R"({"s":{"$regex":"^ab","$options":"s"}})"));
  EXPECT_FALSE(bounds(R"({"s":{"$regex":"^ab","$options":"m"}})"));
  EXPECT_FALSE(bounds(R"({"s":{"$regex":"^ab","$options":"i"}})"));
  EXPECT_FALSE(bounds(R"({"s":{"$regex":"^a.b"}})"));
  EXPECT_FALSE(bounds(R"({"s":{"$regex":"^a\\d"}})"));
  EXPECT_FALSE(bounds(R"({"s":{"$regex":"ab"}})"));
  EXPECT_FALSE(bounds(R"({"s":{"$regex":"^(?i)ab"}})"));
  EXPECT_FALSE(bounds(R"({"s":{"$regex":"^ab+"}})"));
  // A pattern need not be valid UTF-8 (matching is byte-wise): 0xff has no successor byte.
  boost::json::object spec{{"s", boost::json::object{{"$regex", "^a\xff"}}}};
  b = filter::parse(spec).value().bounds_on(path);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->admitted.range.upper->as_string(), "b");
  b = bounds(R"({"s":{"$regex":"^"}})");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->admitted.range.lower->as_string(), "");
  EXPECT_FALSE(b->admitted.range.upper);
  EXPECT_FALSE(bounds(R"({"t":{"$gte":1}})"));
  EXPECT_FALSE(bounds(R"({"s":{"$gte":{}}})"));
  EXPECT_FALSE(bounds(R"({"s":{"$in":[[1]]}})"));
  b = bounds(R"({"s":{"$gte":1},"t":2})");
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->exact);
  b = bounds(R"({"s":{"$gte":1,"$lt":"a"}})");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->admitted.k, value_bounds::kind::all_of);
  EXPECT_TRUE(b->exact);
}

TEST(MatchSpans, BoundsAreNarrowUnlessAComplementStandsAlone) {
  auto order = sort_spec::parse(std::vector<std::string>{"n"}).value();
  auto plan = [&](const char* text) {
    return span_plan::make(filter::parse(boost::json::parse(text)).value(), order).value();
  };
  EXPECT_TRUE(plan(R"({"n":{"$in":[1,2]}})").narrow());
  EXPECT_TRUE(plan(R"({"$or":[{"n":1},{"n":{"$gt":5}}]})").narrow());
  EXPECT_TRUE(plan(R"({"n":{"$gte":1,"$ne":3}})").narrow());
  EXPECT_FALSE(plan(R"({"$or":[{"n":1},{"n":{"$ne":5}}]})").narrow());
  EXPECT_FALSE(plan(R"({"n":{"$ne":1}})").narrow());
  EXPECT_FALSE(plan(R"({"n":{"$not":{"$lt":1}}})").narrow());
  EXPECT_FALSE(plan(R"({"$nor":[{"n":1}]})").narrow());
  // A whole type class is typically most of the index.
  EXPECT_FALSE(plan(R"({"n":{"$type":"string"}})").narrow());
  EXPECT_FALSE(plan(R"({"n":{"$type":["string","bool"]}})").narrow());
  EXPECT_TRUE(plan(R"({"n":{"$type":"string","$lt":"b"}})").narrow());
  EXPECT_TRUE(plan(R"({"n":{"$exists":false}})").narrow());
  EXPECT_TRUE(plan(R"({"n":{"$elemMatch":{"$gt":3},"$lt":5}})").narrow());
  // Operators only an array satisfies bound nothing: on the fields they are used on, every
  // record holds one, and an index reads those records apart.
  for (const char* text : {R"({"n":{"$size":3}})", R"({"n":{"$elemMatch":{"$gt":3}}})",
                           R"({"n":{"$type":"array"}})", R"({"n":{"$size":3},"k":"a"})"}) {
    auto f = filter::parse(boost::json::parse(text)).value();
    EXPECT_FALSE(span_plan::make(f, order).has_value()) << text;
  }
  // Nor do they make the field the second key of a plan fixing the first.
  auto two = sort_spec::parse(std::vector<std::string>{"n", "k"}).value();
  auto f = filter::parse(boost::json::parse(R"({"k":{"$size":1},"n":3})")).value();
  EXPECT_FALSE(span_plan::make(f, two)->compound());
}

// Runs are found again on every walk: a plan holds at most max_bound_ranges intervals, on one
// key or, for two, the first key's values times the second key's intervals (and its arrays).
TEST(MatchSpans, APlanLooksUpAtMostMaxBoundRangesIntervals) {
  auto values = [](std::size_t n) {
    std::string list;
    for (std::size_t i = 0; i < n; ++i) {
      list += (i ? "," : "") + std::to_string(i);
    }
    return list;
  };
  auto order = sort_spec::parse(std::vector<std::string>{"k", "n"}).value();
  auto plan = [&](const std::string& text) {
    return span_plan::make(filter::parse(boost::json::parse(text)).value(), order);
  };
  // 512 values, each with one interval and one run of arrays: 1,024.
  auto at = plan(R"({"k":{"$in":[)" + values(512) + R"(]},"n":{"$gte":5}})");
  ASSERT_TRUE(at);
  EXPECT_TRUE(at->compound());
  EXPECT_TRUE(at->exact());
  auto over = plan(R"({"k":{"$in":[)" + values(513) + R"(]},"n":{"$gte":5}})");
  ASSERT_TRUE(over);  // the first key's values alone
  EXPECT_FALSE(over->compound());
  EXPECT_FALSE(over->exact());
  auto squared =
      plan(R"({"k":{"$in":[)" + values(1024) + R"(]},"n":{"$in":[)" + values(1024) + "]}}");
  ASSERT_TRUE(squared);
  EXPECT_FALSE(squared->compound());
  EXPECT_FALSE(plan(R"({"k":{"$in":[)" + values(1025) + "]}}"));
}

}  // namespace
}  // namespace weir::core

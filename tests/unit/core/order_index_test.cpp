// order_index against a sorted std::vector reference: random inserts and erases (enough to
// split and merge leaves and inner nodes), then order, ranks, select, lower_bound, iteration
// both ways and bulk building.
#include "core/order_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

record_ptr rec(const std::string& id, int n, const std::string& s) {
  boost::json::object doc;
  doc["id"] = id;
  if (n >= 0) {
    doc["n"] = n;
  }
  doc["s"] = s;
  // Longer than boost::json::string's inline buffer and equal in its first bytes, so the tree's
  // comparisons read the whole stored value, not the prefix.
  doc["l"] = "a long shared beginning, then " + s;
  return make_record(doc);
}

sort_spec spec_of(std::vector<std::string> keys) {
  return sort_spec::parse(keys).value();
}

sort_position pos(const sort_spec& spec, const record& r) {
  return spec.position_of(parse_doc(r));
}

class OrderIndexTest : public ::testing::TestWithParam<std::vector<std::string>> {};

template <class Index>
void churn(const sort_spec& spec) {
  Index idx{spec};
  std::map<std::string, record_ptr> live;  // owns the records
  std::vector<record_ptr> ref;             // sorted reference
  auto less = [&](const record_ptr& a, const record_ptr& b) {
    return spec.compare(parse_doc(*a), parse_doc(*b)) < 0;
  };
  std::mt19937 rng{42};
  auto check = [&] {
    ASSERT_EQ(idx.size(), ref.size());
    std::size_t i = 0;
    for (auto it = idx.begin(); it != idx.end(); ++it, ++i) {
      ASSERT_EQ(it.rec().id, ref[i]->id) << "at " << i;
      ASSERT_EQ(idx.rank(it), i);
    }
    ASSERT_EQ(i, ref.size());
    // Backwards from end().
    auto it = idx.end();
    for (std::size_t k = ref.size(); k-- > 0;) {
      --it;
      ASSERT_EQ(it.rec().id, ref[k]->id);
    }
    for (int probe = 0; probe < 20 && !ref.empty(); ++probe) {
      auto k = rng() % ref.size();
      ASSERT_EQ(idx.select(k).rec().id, ref[k]->id);
      auto [lb, rank] = idx.lower_bound(pos(spec, *ref[k]));
      ASSERT_EQ(rank, k);
      ASSERT_EQ(lb.rec().id, ref[k]->id);
      ASSERT_EQ(idx.find(pos(spec, *ref[k])).rec().id, ref[k]->id);
    }
    ASSERT_TRUE(idx.select(ref.size()) == idx.end());
  };
  for (int round = 0; round < 6; ++round) {
    // Grow well past a few leaves, then shrink to almost nothing, so merges run too.
    int target = round % 2 == 0 ? 3000 : 20;
    while (static_cast<int>(ref.size()) != target) {
      bool add = static_cast<int>(ref.size()) < target;
      if (add) {
        auto id = "r" + std::to_string(rng() % 100000);
        if (live.count(id)) {
          continue;
        }
        auto r =
            rec(id, static_cast<int>(rng() % 50) - 1, std::string(1 + rng() % 12, 'a' + rng() % 3));
        live[id] = r;
        auto at = std::upper_bound(ref.begin(), ref.end(), r, less);
        auto expect_rank = static_cast<std::size_t>(at - ref.begin());
        ref.insert(at, r);
        ASSERT_EQ(idx.insert(r.get(), pos(spec, *r)), expect_rank);
      } else {
        auto k = rng() % ref.size();
        auto r = ref[k];
        ASSERT_EQ(idx.erase(pos(spec, *r)), k);
        ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(k));
        live.erase(r->id);
      }
      if (rng() % 500 == 0) {
        check();
      }
    }
    check();
  }
  // Erasing an absent record changes nothing.
  auto ghost = rec("ghost", 1, "x");
  EXPECT_EQ(idx.erase(pos(spec, *ghost)), idx.size());
  // Bulk build gives the same order.
  order_index<record_ptr> built{spec};
  std::vector<record_ptr> all;
  for (auto& [id, r] : live) {
    all.push_back(r);
  }
  built.build(all.begin(), all.end());
  ASSERT_EQ(built.size(), ref.size());
  std::size_t i = 0;
  for (auto it = built.begin(); it != built.end(); ++it, ++i) {
    ASSERT_EQ(it.rec().id, ref[i]->id);
  }
  // ...and keeps working after it.
  for (auto& r : all) {
    built.erase(pos(spec, *r));
  }
  EXPECT_TRUE(built.empty());
  EXPECT_TRUE(built.begin() == built.end());
}

TEST_P(OrderIndexTest, MatchesSortedReferenceUnderRandomChurn) {
  churn<order_index<const record*>>(spec_of(GetParam()));
}

// Tiny nodes: the same churn builds trees five levels deep, splitting and merging inner nodes.
TEST_P(OrderIndexTest, DeepTreesMatchTheReference) {
  churn<order_index<const record*, 4, 4>>(spec_of(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(
    Sorts, OrderIndexTest,
    ::testing::Values(std::vector<std::string>{}, std::vector<std::string>{"n"},
                      std::vector<std::string>{"-n"}, std::vector<std::string>{"s", "-n"},
                      std::vector<std::string>{"-s"}, std::vector<std::string>{"l", "-n"},
                      std::vector<std::string>{"-l"}));

TEST(OrderIndex, PrefixNeverContradictsTheFullOrder) {
  auto spec = spec_of({"v"});
  std::vector<std::string> values{"null",
                                  "-1e300",
                                  "-5",
                                  "-0.0",
                                  "0",
                                  "0.5",
                                  "1",
                                  "1.0",
                                  "2",
                                  "9007199254740993",
                                  "1e300",
                                  "\"\"",
                                  "\"a\"",
                                  "\"a\\u0000\"",
                                  "\"abcdefgh\"",
                                  "\"abcdefgi\"",
                                  "{}",
                                  "[]",
                                  "false",
                                  "true"};
  std::vector<std::pair<std::uint64_t, boost::json::object>> docs;
  for (auto& v : values) {
    boost::json::object d;
    d["id"] = "x";
    d["v"] = boost::json::parse(v);
    docs.emplace_back(spec.prefix_of(d), d);
  }
  for (auto& [pa, a] : docs) {
    for (auto& [pb, b] : docs) {
      if (pa < pb) {
        EXPECT_LT(spec.compare(a, b), 0)
            << boost::json::serialize(a) << " vs " << boost::json::serialize(b);
      }
    }
  }
}

}  // namespace
}  // namespace weir::core

namespace weir::core {
namespace {

// Bulk builds order runs of equal prefixes by the next keys when the prefixes are exact, by the
// strings read in place when they are long strings without escapes, and by whole positions
// otherwise: long strings sharing their first bytes (equal ones among them, and one whose
// escape makes it equal to another), fractions, big integers, objects, NULs, escapes, missing
// values — against one-by-one inserts.
TEST(OrderIndex, BuildOrdersTiesExactlyWhateverTheValues) {
  std::vector<std::string> values{"\"a\"",
                                  "\"abcdefgh1\"",
                                  "\"abcdefgh2\"",
                                  "\"abcdefgh2 and more\"",
                                  "\"abcdefg\"",
                                  "\"abcdefgh\\u0031\"",
                                  "\"abcdef\"",
                                  "\"abc\\u0000\"",
                                  "\"ab\\\"c\"",
                                  "1.25",
                                  "1.5",
                                  "1",
                                  "9007199254740993",
                                  "9007199254740992",
                                  "-3",
                                  "null",
                                  "{\"x\":1}",
                                  "{\"x\":2}",
                                  "[1,2]",
                                  "true",
                                  "false"};
  // And a field of one long value (every record ties on it, read in place), two that share
  // their first bytes, or those and an escaped twin of the first.
  const std::vector<std::string> few{"\"one long value shared\"", "\"one long value shared too\"",
                                     "\"one long value share\\u0064\""};
  std::mt19937 rng{3};
  for (auto [keys, v_values] :
       std::vector<std::pair<std::vector<std::string>, std::size_t>>{{{"v"}, values.size()},
                                                                     {{"v", "-w"}, values.size()},
                                                                     {{"-v", "w"}, values.size()},
                                                                     {{"-v", "-w"}, values.size()},
                                                                     {{"v", "w"}, 1},
                                                                     {{"-v"}, 1},
                                                                     {{"-v", "w"}, 2},
                                                                     {{"v", "-w"}, 3}}) {
    const auto& v_from = v_values <= few.size() ? few : values;
    auto spec = sort_spec::parse(keys).value();
    std::vector<record_ptr> recs;
    order_index<record_ptr> one{spec};
    for (int i = 0; i < 400; ++i) {
      auto text = R"({"id":"r)" + std::to_string(rng() % 100000) + R"(",)" +
                  (rng() % 7 ? R"("v":)" + v_from[rng() % v_values] + "," : "") + R"("w":)" +
                  values[rng() % values.size()] + "}";
      auto r = parse_record(text);
      ASSERT_TRUE(r) << text;
      if (one.find(spec.position_of(parse_doc(*r))) != one.end()) {
        continue;  // a repeated id
      }
      recs.push_back(r);
      one.insert(r, spec.position_of(parse_doc(*r)));
    }
    order_index<record_ptr> built{spec};
    built.build(recs.begin(), recs.end());
    ASSERT_EQ(built.size(), one.size());
    auto a = one.begin();
    for (auto b = built.begin(); b != built.end(); ++a, ++b) {
      ASSERT_EQ(a.rec().json, b.rec().json);
    }
  }
}

}  // namespace
}  // namespace weir::core

namespace weir::core {
namespace {

// Documents larger than the reader's 4 KiB buffer, sorted by long strings that tie in their
// first bytes: the positions the tree keeps (its separators) must not point into memory the
// reader frees or reuses on its next read (AddressSanitizer sees the freed blocks).
TEST(OrderIndex, PositionsOfLargeDocumentsOutliveTheReadersNextRead) {
  auto spec = sort_spec::parse(std::vector<std::string>{"k"}).value();
  order_index<record_ptr, 4, 4> idx{spec};
  std::map<std::string, record_ptr> ref;  // by key: the expected order
  std::mt19937 rng{11};
  for (int i = 0; i < 400; ++i) {
    boost::json::object doc;
    doc["id"] = "r" + std::to_string(i);
    auto key = "a shared beginning well past the prefix " + std::to_string(rng() % 100000) + "-" +
               std::to_string(i);
    doc["k"] = key;
    doc["pad"] = std::string(5000 + rng() % 3000, 'p');
    auto r = make_record(doc);
    ref[key] = r;
    idx.insert(r, spec.position_of(parse_doc(*r)));
    if (i % 3 == 2) {  // and erase one, found through the stored separators
      auto it = ref.begin();
      std::advance(it, static_cast<long>(rng() % ref.size()));
      idx.erase(spec.position_of(parse_doc(*it->second)));
      ref.erase(it);
    }
  }
  ASSERT_EQ(idx.size(), ref.size());
  auto it = idx.begin();
  for (auto& [key, r] : ref) {
    ASSERT_EQ(it.rec().id, r->id);
    ++it;
  }
}

}  // namespace
}  // namespace weir::core

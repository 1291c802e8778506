// core json diff: apply(a, diff(a, b)) == b for random document pairs, never larger than a full
// replace, and id-keyed arrays diffed by id.
#include "core/json_diff.hpp"

#include <gtest/gtest.h>

#include <random>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/json_patch.hpp"

namespace weir::core {
namespace {

namespace json = boost::json;

json::value random_value(std::mt19937& rng, int depth);

json::value random_scalar(std::mt19937& rng) {
  switch (rng() % 6) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(rng() % 5);
    case 3:
      return (rng() % 5) / 2.0;
    default:
      return json::string(std::string(1, static_cast<char>('a' + rng() % 4)));
  }
}

json::value random_value(std::mt19937& rng, int depth) {
  auto pick = depth <= 0 ? 0 : rng() % 5;
  if (pick <= 1) {
    return random_scalar(rng);
  }
  if (pick == 2) {
    json::array a;
    auto n = rng() % 4;
    for (std::size_t i = 0; i < n; ++i) {
      a.push_back(random_value(rng, depth - 1));
    }
    return a;
  }
  if (pick == 3) {
    // An array of objects with unique ids, like a dataset's rows.
    json::array a;
    std::vector<int> ids{0, 1, 2, 3, 4, 5};
    std::shuffle(ids.begin(), ids.end(), rng);
    auto n = rng() % 5;
    for (std::size_t i = 0; i < n; ++i) {
      a.push_back(json::object{{"id", "r" + std::to_string(ids[i])}, {"v", random_scalar(rng)}});
    }
    return a;
  }
  json::object o;
  auto n = rng() % 4;
  for (std::size_t i = 0; i < n; ++i) {
    static const char* keys[] = {"a", "b", "c/d", "e~f", ""};
    o[keys[rng() % 5]] = random_value(rng, depth - 1);
  }
  return o;
}

/// A variation of `v`: a few random changes, so most of the document stays.
json::value mutate(std::mt19937& rng, json::value v, int depth) {
  if (rng() % 4 == 0 || depth <= 0) {
    return rng() % 3 == 0 ? random_value(rng, 2) : v;
  }
  if (auto* o = v.if_object()) {
    for (auto& kv : *o) {
      kv.value() = mutate(rng, kv.value(), depth - 1);
    }
    if (rng() % 3 == 0) {
      (*o)["new" + std::to_string(rng() % 3)] = random_scalar(rng);
    }
  } else if (auto* a = v.if_array()) {
    for (auto& e : *a) {
      e = mutate(rng, e, depth - 1);
    }
    if (!a->empty() && rng() % 3 == 0) {
      std::shuffle(a->begin(), a->end(), rng);
    }
    if (rng() % 3 == 0) {
      a->push_back(random_value(rng, 1));
    }
  }
  return v;
}

TEST(JsonDiff, ApplyingTheDiffGivesTheTargetAndIsNeverLargerThanAReplace) {
  std::mt19937 rng{20261201};
  for (int round = 0; round < 5000; ++round) {
    auto a = random_value(rng, 4);
    auto b = round % 2 == 0 ? mutate(rng, a, 4) : random_value(rng, 4);
    auto patch = json_diff(a, b);
    auto doc = a;
    auto r = apply_patch(doc, patch);
    ASSERT_TRUE(r) << r.error().message << "\na: " << json::serialize(a)
                   << "\nb: " << json::serialize(b) << "\npatch: " << json::serialize(patch);
    ASSERT_TRUE(json_equal(doc, b))
        << "a: " << json::serialize(a) << "\nb: " << json::serialize(b)
        << "\npatch: " << json::serialize(patch) << "\ngot: " << json::serialize(doc);
    json::array whole{json::object{{"op", "replace"}, {"path", ""}, {"value", b}}};
    ASSERT_LE(json::serialize(patch).size(), json::serialize(whole).size());
  }
}

TEST(JsonDiff, SmallChangesMakeSmallPatches) {
  auto a = json::parse(R"({"title":"Tasks","rows":[{"id":"r1","n":1},{"id":"r2","n":2},
                                                     {"id":"r3","n":3}]})");
  auto b = json::parse(R"({"title":"Tasks","rows":[{"id":"r0","n":0},{"id":"r1","n":1},
                                                     {"id":"r2","n":5},{"id":"r3","n":3}]})");
  auto patch = json_diff(a, b);
  EXPECT_EQ(patch, json::parse(R"([{"op":"add","path":"/rows/0","value":{"id":"r0","n":0}},
                                    {"op":"replace","path":"/rows/2/n","value":5}])"));
  EXPECT_TRUE(json_diff(a, a).empty());
}

}  // namespace
}  // namespace weir::core

// all_matches against brute force: a pass over the records as they were at one moment, then the
// changes published after it (updates in and out of the filter, deletes, re-creations, several
// changes to one record), must give exactly the matches a fresh pass would.
#include "core/all_matches.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include <boost/json/parse.hpp>

namespace weir::core {
namespace {

record_ptr make(const std::string& id, int n, int v) {
  return make_record(boost::json::object{
      {"id", id}, {"n", n}, {"_ver", boost::json::object{{"id", std::to_string(v)}}}});
}

std::vector<std::string> sorted_json(const std::vector<record_ptr>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) {
    out.push_back(r->json);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class AllMatchesProperty : public ::testing::TestWithParam<int> {};

TEST_P(AllMatchesProperty, APassCaughtUpEqualsAFreshPass) {
  std::mt19937 rng{static_cast<unsigned>(GetParam())};
  const auto where = filter::parse(boost::json::parse(R"({"n":{"$gte":5}})")).value();
  int version = 0;
  for (int round = 0; round < 200; ++round) {
    std::map<std::string, record_ptr> live;
    for (int i = 0; i < 30; ++i) {
      if (rng() % 3) {
        live["r" + std::to_string(i)] = make("r" + std::to_string(i), rng() % 10, ++version);
      }
    }
    std::vector<record_ptr> taken;
    for (auto& [id, r] : live) {
      taken.push_back(r);
    }
    auto pass = all_matches::scan(taken, where);
    std::vector<std::pair<record_ptr, record_ptr>> journal;
    for (int c = 0, changes = static_cast<int>(rng() % 40); c < changes; ++c) {
      auto id = "r" + std::to_string(rng() % 30);
      auto it = live.find(id);
      record_ptr before = it == live.end() ? nullptr : it->second;
      record_ptr after = before && rng() % 4 == 0 ? nullptr : make(id, rng() % 10, ++version);
      journal.emplace_back(before, after);
      if (after) {
        live[id] = after;
      } else {
        live.erase(id);
      }
    }
    pass.catch_up(journal);
    std::vector<record_ptr> now;
    for (auto& [id, r] : live) {
      now.push_back(r);
    }
    auto fresh = all_matches::scan(now, where);
    ASSERT_EQ(sorted_json(pass.rows()), sorted_json(fresh.rows())) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, AllMatchesProperty, ::testing::Range(1, 4));

}  // namespace
}  // namespace weir::core

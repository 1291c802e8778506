// window_merge against brute force: several sources (objects), each an exact window_view of its
// first offset + limit matches, changed at random; after every source event the merged window
// equals a fresh query over the union of all sources, and its delta rebuilds it.
#include "core/window_merge.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include <boost/json/parse.hpp>

#include "core/window_view.hpp"

namespace weir::core {
namespace {

record_ptr make(const std::string& id, int n, int v) {
  boost::json::object d;
  d["id"] = id;
  d["n"] = n;
  d["_ver"] = boost::json::object{{"id", std::to_string(v)}};
  return make_record(d);
}

std::vector<std::string> jsons(const std::vector<record_ptr>& rows) {
  std::vector<std::string> out;
  for (auto& r : rows) {
    out.push_back(r->json);
  }
  return out;
}

struct source {
  explicit source(const sort_spec& s, const filter& f, std::uint64_t k)
      : idx(s), view(idx, f, 0, k, true) {}
  window_view::index idx;
  window_view view;
  std::map<std::string, record_ptr> live;
};

class WindowMergeProperty : public ::testing::TestWithParam<int> {};

TEST_P(WindowMergeProperty, MergedWindowEqualsAFreshQueryOverAllSources) {
  std::mt19937 rng{static_cast<unsigned>(GetParam())};
  auto spec = sort_spec::parse(std::vector<std::string>{"-n"}).value();
  auto f = filter::parse(boost::json::parse(R"({"n":{"$gte":3}})")).value();
  for (auto [offset, limit] :
       std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 3}, {2, 4}, {0, 1}, {5, 2}}) {
    window_merge merge{spec, offset, limit, true};
    std::map<std::string, std::unique_ptr<source>> sources;
    std::vector<record_ptr> shown;
    int version = 0;
    for (int step = 0; step < 600; ++step) {
      std::string obj = "o" + std::to_string(rng() % 4);
      auto& src = sources[obj];
      if (!src) {
        src = std::make_unique<source>(spec, f, merge.source_limit());
        src->view.fill();
        merge.set_source(obj, {}, src->view.total());
        merge.take_delta();
      }
      std::string id = "r" + std::to_string(rng() % 12);
      record_step s;
      boost::json::object bdoc, adoc;
      sort_position bpos, apos;
      if (auto it = src->live.find(id); it != src->live.end()) {
        s.before = it->second;
        bdoc = parse_doc(*s.before);
        bpos = spec.position_of(bdoc);
        s.before_doc = &bdoc;
        s.before_pos = &bpos;
      }
      if (!s.before || rng() % 4 != 0) {
        s.after = make(id, static_cast<int>(rng() % 10), ++version);
        adoc = parse_doc(*s.after);
        apos = spec.position_of(adoc);
        s.after_doc = &adoc;
        s.after_pos = &apos;
        s.ops = std::make_shared<change_ops>(ops_for_replace(s.before ? &bdoc : nullptr, adoc));
      }
      if (s.before) {
        src->idx.erase(bpos);
        src->live.erase(id);
      }
      if (s.after) {
        src->idx.insert(s.after, apos);
        src->live[id] = s.after;
      }
      src->view.apply(s);
      write_steps steps{{s.id(), &s}};
      if (auto d = src->view.end_write(steps)) {
        // What the actor glue does: give the rows their merged ids.
        for (auto& r : d->removed) {
          r.rec = with_object_prefix(*r.rec, obj);
        }
        for (auto& u : d->upserts) {
          u.rec = with_object_prefix(*u.rec, obj);
        }
        merge.apply_source(obj, *d);
      }
      auto md = merge.take_delta();
      // Brute force over every source.
      std::vector<record_ptr> all;
      for (auto& [o, sp] : sources) {
        for (auto& [rid, r] : sp->live) {
          if (f.matches(parse_doc(*r))) {
            all.push_back(with_object_prefix(*r, o));
          }
        }
      }
      std::sort(all.begin(), all.end(), [&](const record_ptr& a, const record_ptr& b) {
        return spec.compare(parse_doc(*a), parse_doc(*b)) < 0;
      });
      std::vector<record_ptr> expect;
      for (std::size_t i = offset; i < all.size() && expect.size() < limit; ++i) {
        expect.push_back(all[i]);
      }
      ASSERT_EQ(jsons(merge.visible()), jsons(expect)) << "step " << step;
      ASSERT_EQ(merge.total().value(), all.size());
      if (md) {
        apply_window_delta(shown, *md);
      }
      ASSERT_EQ(jsons(shown), jsons(expect)) << "delta at step " << step;
    }
  }
}

TEST(WindowMerge, ObjectIdsAreEscapedSoMergedIdsNeverCollide) {
  auto r1 = make("c", 1, 1);
  auto r2 = make("b/c", 2, 1);
  auto a = with_object_prefix(*r1, "a/b");  // object "a/b", record "c"
  auto b = with_object_prefix(*r2, "a");    // object "a", record "b/c"
  EXPECT_EQ(a->id, "a%2Fb/c");
  EXPECT_EQ(b->id, "a/b/c");
  EXPECT_EQ(with_object_prefix(*r1, "50%")->id, "50%25/c");
  EXPECT_EQ(with_object_prefix(*r1, "plain")->id, "plain/c");
  EXPECT_EQ(parse_doc(*a).at("id"), "a%2Fb/c");
}

TEST(WindowMerge, OneRecordInTwoSourcesShowsOnceAndLeavesCleanly) {
  // An object moving between members can briefly be held by two sources: each keeps its own
  // entry, the window shows the record once, and dropping either source touches only its own.
  auto spec = sort_spec::parse(std::vector<std::string>{"n"}).value();
  window_merge merge{spec, 0, 10, true};
  auto x = with_object_prefix(*make("1", 5, 1), "o");
  auto y = with_object_prefix(*make("2", 7, 1), "p");
  merge.set_source("@m1", {x}, 1);
  merge.set_source("@m2", {x, y}, 2);
  merge.take_delta();
  ASSERT_EQ(merge.visible().size(), 2u);
  EXPECT_EQ(merge.visible()[0]->id, "o/1");
  merge.drop_source("@m1");
  merge.take_delta();
  ASSERT_EQ(merge.visible().size(), 2u);  // @m2 still holds o/1
  EXPECT_EQ(merge.held(), 2u);
  merge.apply_source("@m2", window_delta{{window_removal{x, removal_reason::deleted}}, {}, 1});
  auto d = merge.take_delta();
  ASSERT_TRUE(d);
  ASSERT_EQ(merge.visible().size(), 1u);
  EXPECT_EQ(merge.visible()[0]->id, "p/2");
  EXPECT_EQ(merge.held(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, WindowMergeProperty, ::testing::Range(1, 4));

}  // namespace
}  // namespace weir::core

// window_view against brute force: thousands of random writes (creates, updates that move rows
// across the window's edges and in and out of the filter, deletes, batches of several) against
// many windows at once (sorts, filters, offsets, limits). After every write each window must
// equal a fresh query, its delta must turn the old window into the new one, and every removal
// must carry the right reason. The sort keys sometimes hold an array, a string, a fraction or
// nothing, so that windows whose filter bounds the first key (core/match_spans) read the right
// runs of the index: arrays match by an element and sort apart from numbers. Windows also open
// from a pass over the records taken some writes earlier (core/first_matches), as the shard
// opens them on a large dataset.
#include "core/window_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

struct world {
  explicit world(sort_spec s) : spec(s), idx(std::move(s)) {}
  sort_spec spec;
  window_view::index idx;
  std::map<std::string, record_ptr> live;
};

record_ptr make(const std::string& id, int n, const std::string& c, int v) {
  boost::json::object d;
  d["id"] = id;
  // n's shape comes from its value's low bits, so every run sees every shape.
  switch ((n * 7 + v) % 16) {
    case 0:
      d["n"] = boost::json::array{n, n + 3};
      break;
    case 1:
      d["n"] = "s" + std::to_string(n);
      break;
    case 2:
      break;  // missing
    case 3:
      d["n"] = n + 0.5;
      break;
    default:
      d["n"] = n;
  }
  if ((n + v) % 11 == 0) {
    d["c"] = boost::json::array{c, "x"};
  } else {
    d["c"] = c;
  }
  d["_ver"] = boost::json::object{{"id", std::to_string(v)}};
  return make_record(d);
}

struct window_case {
  std::vector<std::string> sort;
  std::string filter;
  std::uint64_t offset, limit;
};

/// Every match of `f` in order (documents parsed once per record version and cached: the
/// brute force runs after every write for every window).
std::vector<record_ptr> sorted_matches(const world& w, const filter& f) {
  static std::map<const record*, std::pair<record_ptr, boost::json::object>> docs;
  auto doc = [&](const record_ptr& r) -> const boost::json::object& {
    auto it = docs.find(r.get());
    if (it == docs.end() || it->second.first != r) {
      it = docs.insert_or_assign(r.get(), std::make_pair(r, parse_doc(*r))).first;
    }
    return it->second.second;
  };
  std::vector<record_ptr> all;
  for (auto& [id, r] : w.live) {
    if (f.matches(doc(r))) {
      all.push_back(r);
    }
  }
  std::sort(all.begin(), all.end(), [&](const record_ptr& a, const record_ptr& b) {
    return w.spec.compare(doc(a), doc(b)) < 0;
  });
  return all;
}

std::vector<record_ptr> brute(const world& w, const filter& f, std::uint64_t offset,
                              std::uint64_t limit, std::uint64_t* total) {
  auto all = sorted_matches(w, f);
  *total = all.size();
  std::vector<record_ptr> out;
  for (std::size_t i = offset; i < all.size() && out.size() < limit; ++i) {
    out.push_back(all[i]);
  }
  return out;
}

std::vector<std::string> ids(const std::vector<record_ptr>& rows) {
  std::vector<std::string> out;
  for (auto& r : rows) {
    out.push_back(r->json);
  }
  return out;
}

class WindowViewProperty : public ::testing::TestWithParam<int> {};

TEST_P(WindowViewProperty, EveryWindowEqualsAFreshQueryAfterEveryWrite) {
  std::mt19937 rng{static_cast<unsigned>(GetParam())};
  const std::vector<std::vector<std::string>> sorts{{"n"}, {"-n", "c"}, {"c", "-n"}, {"-c"}, {}};
  const std::vector<std::string> filters{"{}",
                                         R"({"c":"red"})",
                                         R"({"n":{"$gte":6}})",
                                         R"({"c":{"$in":["red","blue"]},"n":{"$lt":15}})",
                                         R"({"n":{"$gt":4,"$lte":12.5}})",
                                         R"({"n":7})",
                                         R"({"n":{"$gt":3},"c":"red"})",
                                         R"({"n":{"$gt":3,"$lt":"z"}})",
                                         R"({"n":{"$gte":"s1"}})",
                                         R"({"c":{"$regex":"^re"}})",
                                         R"({"c":{"$regex":"^g","$options":"s","$lt":"h"}})",
                                         R"({"$and":[{"n":{"$lt":9}}],"n":{"$gte":2}})",
                                         R"({"c":{"$gt":"blue","$lt":"red"}})",
                                         R"({"id":{"$gte":"r2","$lt":"r3"}})",
                                         R"({"id":{"$lt":"s"}})",
                                         R"({"n":{"$in":[3,7,"s5",11.5]}})",
                                         R"({"c":{"$ne":"red"}})",
                                         R"({"n":{"$nin":[1,2,3,null]}})",
                                         R"({"$or":[{"n":{"$lt":4}},{"n":{"$gt":15}}]})",
                                         R"({"n":null})",
                                         R"({"c":{"$not":{"$regex":"^r"}}})",
                                         R"({"$nor":[{"c":"red"},{"c":"blue"}]})"};
  const std::vector<std::uint64_t> offsets{0, 3};
  const std::vector<std::uint64_t> limits{1, 5};
  for (const auto& sort : sorts) {
    world w{sort_spec::parse(sort).value()};
    struct view_entry {
      filter f;
      std::unique_ptr<window_view> v;
      std::vector<record_ptr> shown;
      std::string text;  // the filter's spec
    };
    std::vector<view_entry> views;
    // Seed some rows before the windows open, so fill() starts from data.
    int version = 0;
    for (int i = 0; i < 12; ++i) {
      auto r = make("s" + std::to_string(i), static_cast<int>(rng() % 20),
                    std::vector<std::string>{"red", "blue", "green"}[rng() % 3], ++version);
      w.live[r->id] = r;
      w.idx.insert(r, w.spec.position_of(parse_doc(*r)));
    }
    for (auto& fs : filters) {
      for (auto off : offsets) {
        for (auto lim : limits) {
          auto f = filter::parse(boost::json::parse(fs)).value();
          auto v = std::make_unique<window_view>(w.idx, f, off, lim, true);
          v->fill();
          std::uint64_t total = 0;
          auto expect = brute(w, f, off, lim, &total);
          ASSERT_EQ(ids(v->visible()), ids(expect));
          ASSERT_EQ(v->total().value(), total);
          views.push_back({f, std::move(v), expect, fs});
        }
      }
    }
    // Passes over the records as they were at one write (first_matches, as a loader thread
    // makes them), brought up to date with the writes after it, then windows opened from them.
    struct pass {
      first_matches found;
      std::string text;
      std::uint64_t offset, limit;
    };
    std::vector<pass> passes;
    for (int write = 0; write < 250; ++write) {
      if (write % 50 == 10) {
        std::vector<record_ptr> records;
        for (auto& [id, r] : w.live) {
          records.push_back(r);
        }
        std::shuffle(records.begin(), records.end(), rng);
        for (auto& fs : filters) {
          auto off = offsets[rng() % offsets.size()], lim = limits[rng() % limits.size()];
          // Sometimes fewer than the window needs: the fill then walks the index from the
          // pass's bound, as for an offset past the pass's reach.
          std::size_t want = rng() % 3 == 0 ? 1 + rng() % 3 : off + lim + 1;
          auto f = filter::parse(boost::json::parse(fs)).value();
          passes.push_back({first_matches::scan(records, f, w.spec, want), fs, off, lim});
        }
      }
      if (write % 50 == 20) {
        for (auto& p : passes) {
          auto f = filter::parse(boost::json::parse(p.text)).value();
          auto v = std::make_unique<window_view>(w.idx, f, p.offset, p.limit, true);
          v->fill(p.found);
          std::uint64_t total = 0;
          auto expect = brute(w, f, p.offset, p.limit, &total);
          ASSERT_EQ(ids(v->visible()), ids(expect))
              << p.text << " offset " << p.offset << " limit " << p.limit;
          ASSERT_EQ(v->total().value(), total) << p.text;
          ASSERT_EQ(p.found.count(), total) << p.text;
          views.push_back({f, std::move(v), expect, p.text});
        }
        passes.clear();
      }
      if (write % 50 == 25) {
        // A window opened later with a filter an open window counts: fill() takes that count
        // (as the shard does for another page) and must equal a fresh query all the same.
        for (auto& fs : filters) {
          auto sibling = std::find_if(views.begin(), views.end(),
                                      [&](const view_entry& e) { return e.text == fs; });
          auto known = sibling->v->total();
          auto off = offsets[rng() % offsets.size()], lim = limits[rng() % limits.size()];
          auto f = filter::parse(boost::json::parse(fs)).value();
          auto v = std::make_unique<window_view>(w.idx, f, off, lim, true);
          v->fill(known);
          std::uint64_t total = 0;
          auto expect = brute(w, f, off, lim, &total);
          ASSERT_EQ(ids(v->visible()), ids(expect)) << fs;
          ASSERT_EQ(v->total().value(), total) << fs;
          views.push_back({f, std::move(v), expect, fs});
        }
      }
      // One write: 1..3 changes on distinct records.
      int k = 1 + static_cast<int>(rng() % 3);
      std::vector<std::string> touched;
      struct held {
        record_step step;
        boost::json::object bdoc, adoc;
        sort_position bpos, apos;
      };
      std::vector<std::unique_ptr<held>> steps;
      for (int c = 0; c < k; ++c) {
        std::string id = "r" + std::to_string(rng() % 40);
        if (std::find(touched.begin(), touched.end(), id) != touched.end()) {
          continue;
        }
        touched.push_back(id);
        auto h = std::make_unique<held>();
        auto it = w.live.find(id);
        if (it != w.live.end()) {
          h->step.before = it->second;
        }
        bool del = h->step.before && rng() % 4 == 0;
        if (!del) {
          h->step.after =
              make(id, static_cast<int>(rng() % 20),
                   std::vector<std::string>{"red", "blue", "green"}[rng() % 3], ++version);
        }
        if (h->step.before) {
          h->bdoc = parse_doc(*h->step.before);
          h->bpos = w.spec.position_of(h->bdoc);
          h->step.before_doc = &h->bdoc;
          h->step.before_pos = &h->bpos;
        }
        if (h->step.after) {
          h->adoc = parse_doc(*h->step.after);
          h->apos = w.spec.position_of(h->adoc);
          h->step.after_doc = &h->adoc;
          h->step.after_pos = &h->apos;
          h->step.ops = std::make_shared<change_ops>(
              ops_for_replace(h->step.before ? &h->bdoc : nullptr, h->adoc));
        }
        steps.push_back(std::move(h));
      }
      write_steps by_id;
      for (auto& h : steps) {
        auto& s = h->step;
        if (s.before) {
          w.idx.erase(*s.before_pos);
          w.live.erase(s.before->id);
        }
        if (s.after) {
          w.idx.insert(s.after, *s.after_pos);
          w.live[s.after->id] = s.after;
        }
        for (auto& ve : views) {
          ve.v->apply(s);
        }
        for (auto& p : passes) {
          p.found.apply(s.before.get(), s.after);
        }
        by_id.emplace(s.id(), &s);
      }
      for (auto& ve : views) {
        auto d = ve.v->end_write(by_id);
        std::uint64_t total = 0;
        auto expect = brute(w, ve.f, ve.v->offset(), ve.v->limit(), &total);
        ASSERT_EQ(ids(ve.v->visible()), ids(expect)) << "write " << write;
        ASSERT_EQ(ve.v->total().value(), total);
        auto rebuilt = ve.shown;
        if (d) {
          apply_window_delta(rebuilt, *d);
          for (auto& rm : d->removed) {
            auto it = by_id.find(rm.rec->id);
            auto want = removal_reason::displaced;
            if (it != by_id.end()) {
              if (!it->second->after) {
                want = removal_reason::deleted;
              } else if (!ve.f.matches(*it->second->after_doc)) {
                want = removal_reason::filtered_out;
              }
            }
            ASSERT_EQ(rm.reason, want) << rm.rec->json;
          }
          for (auto& up : d->upserts) {
            // The write's ops travel with rows it changed, never with rows that only moved.
            ASSERT_EQ(up.ops != nullptr, by_id.count(up.rec->id) > 0);
          }
        }
        ASSERT_EQ(ids(rebuilt), ids(expect)) << "delta of write " << write;
        ve.shown = expect;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, WindowViewProperty, ::testing::Range(1, 4));

/// Fills `w` (sorted on `n`) with 1,000 records (n 0…999); those with n < `head` or
/// n >= 1000 - `tail` carry "c":"red", the rest "blue".
void fill_ends(world& w, int head, int tail) {
  for (int n = 0; n < 1000; ++n) {
    boost::json::object d{{"id", "r" + std::to_string(1000 + n)},
                          {"n", n},
                          {"c", n < head || n >= 1000 - tail ? "red" : "blue"},
                          {"_ver", boost::json::object{{"id", "1"}}}};
    auto r = make_record(d);
    w.live[r->id] = r;
    w.idx.insert(r, w.spec.position_of(d));
  }
}

const filter red = filter::parse(boost::json::parse(R"({"c":"red"})")).value();

TEST(WindowViewFill, AWalkPastItsBudgetGivesUpUnlessTheRowsAreFound) {
  world w{sort_spec::parse(std::vector<std::string>{"n"}).value()};
  fill_ends(w, 2, 3);  // red at n 0, 1 and 997, 998, 999
  {
    // The window (1 row) and its look-ahead are the first two records: found within the
    // budget, and whether more follow is left open rather than read.
    window_view v{w.idx, red, 0, 1, false};
    ASSERT_TRUE(v.fill(std::nullopt, 100));
    ASSERT_EQ(v.visible().size(), 1u);
    EXPECT_EQ(v.visible()[0]->id, "r1000");
    // Both rows go: the window reads on from its last row and finds the far ones.
    struct deletion {
      record_step step;
      boost::json::object doc;
      sort_position pos;
    };
    auto erase = [&](deletion& d, const std::string& id) {
      d.step.before = w.live[id];
      d.doc = parse_doc(*d.step.before);
      d.pos = w.spec.position_of(d.doc);
      d.step.before_doc = &d.doc;
      d.step.before_pos = &d.pos;
      w.idx.erase(d.pos);
      v.apply(d.step);
    };
    deletion s0, s1;
    erase(s0, "r1000");
    erase(s1, "r1001");
    write_steps steps{{s0.step.id(), &s0.step}, {s1.step.id(), &s1.step}};
    v.end_write(steps);
    ASSERT_EQ(v.visible().size(), 1u);
    EXPECT_EQ(v.visible()[0]->id, "r1997");
  }
  {
    // The rows lie past the budget.
    window_view v{w.idx, red, 2, 1, false};
    EXPECT_FALSE(v.fill(std::nullopt, 100));
  }
  {
    // Found, but the count is wanted and unknown: the walk would have to read everything.
    window_view v{w.idx, red, 0, 1, true};
    EXPECT_FALSE(v.fill(std::nullopt, 100));
  }
}

TEST(WindowViewFill, AKnownCountEndsTheWalkAtTheLastRowOrTheLastMatch) {
  world w{sort_spec::parse(std::vector<std::string>{"n"}).value()};
  fill_ends(w, 2, 3);
  {
    window_view v{w.idx, red, 0, 1, true};
    ASSERT_TRUE(v.fill(5, 10));  // two matches read: the window and its look-ahead
    EXPECT_EQ(v.total(), 5u);
    ASSERT_EQ(v.visible().size(), 1u);
  }
  {
    // An offset past every match: the walk stops at the fifth match, the last there is.
    window_view v{w.idx, red, 10, 2, true};
    ASSERT_TRUE(v.fill(5, 1000));
    EXPECT_TRUE(v.visible().empty());
    EXPECT_EQ(v.total(), 5u);
  }
  {
    // The last three rows: the walk ends at the last match, the window complete.
    window_view v{w.idx, red, 2, 5, true};
    ASSERT_TRUE(v.fill(5, 1000));
    ASSERT_EQ(v.visible().size(), 3u);
    EXPECT_EQ(v.visible()[2]->id, "r1999");
  }
}

TEST(WindowViewFill, AnExactFilterOfManyRunsIsReadAtItsRanks) {
  for (const std::string sort : {"n", "-n"}) {
    world w{sort_spec::parse(std::vector<std::string>{sort}).value()};
    fill_ends(w, 0, 0);
    for (const char* text : {R"({"n":{"$in":[5,500,998,3,42]}})", R"({"n":{"$nin":[0,1,2,500]}})",
                             R"({"$or":[{"n":{"$lt":3}},{"n":{"$gte":996}}]})",
                             R"({"n":{"$not":{"$gte":2,"$lt":998}}})"}) {
      auto f = filter::parse(boost::json::parse(text)).value();
      for (std::uint64_t offset : {0, 1, 2, 3, 4, 5, 6, 994, 996, 1000}) {
        for (std::uint64_t limit : {1, 2, 3}) {
          // One read allowed: a walk over the index would give up before the count; the
          // runs' ranks give the rows and the count without one.
          window_view v{w.idx, f, offset, limit, true};
          ASSERT_TRUE(v.fill(std::nullopt, 1)) << sort << " " << text << " " << offset;
          std::uint64_t total = 0;
          auto expect = brute(w, f, offset, limit, &total);
          ASSERT_EQ(ids(v.visible()), ids(expect)) << sort << " " << text << " " << offset;
          ASSERT_EQ(v.total(), total) << sort << " " << text;
        }
      }
      // A row of the window deleted: the next match comes from the runs.
      window_view v{w.idx, f, 1, 2, true};
      ASSERT_TRUE(v.fill());
      const auto gone = v.visible().front();
      record_step step;
      step.before = gone;
      auto doc = parse_doc(*gone);
      auto pos = w.spec.position_of(doc);
      step.before_doc = &doc;
      step.before_pos = &pos;
      w.idx.erase(pos);
      w.live.erase(gone->id);
      v.apply(step);
      v.end_write(write_steps{{step.id(), &step}});
      std::uint64_t total = 0;
      auto expect = brute(w, f, 1, 2, &total);
      EXPECT_EQ(ids(v.visible()), ids(expect)) << sort << " " << text;
      EXPECT_EQ(v.total(), total);
      w.idx.insert(gone, pos);
      w.live[gone->id] = gone;
    }
  }
}

}  // namespace
}  // namespace weir::core

// A window whose rows its sort's index does not give within a bounded walk (matches far down the
// sort, or none at all), on a dataset large enough that the walk would hold the unit's writes
// (from 16,384 records): its rows are found by a pass over the records on a loader thread
// (weir_dataset_passes_total{kind="filter"}), exact with the writes published meanwhile, and it
// goes on from there like any window. When its filter bounds a field no index leads with
// ({"tag": "late"}), an index on that field is built after the pass (kind="index"), and later
// filters on that field read their counts and matches from its ranks. A window whose matches
// lie near the start of its sort opens in place. An unbounded query's first result on such a
// dataset comes from a pass too, or from an index's few records that can match.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "actors/runtime.hpp"
#include "dataset_pass_support.hpp"
#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

constexpr int seeded = seeded_records;

std::vector<std::string> ids_of(const std::map<std::string, json::value>& window) {
  std::vector<std::string> out;
  for (auto& [id, doc] : window) {
    out.push_back(id);
  }
  return out;
}

/// Applies `s`'s frames until its rows' ids are `want` (sorted), for at most 10 s.
void await_ids(windowed_stream& s, const std::vector<std::string>& want) {
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       ids_of(s.window()) != want && std::chrono::steady_clock::now() < deadline;) {
    if (auto f = s.next(500ms)) {
      s.apply(*f);
    }
  }
}

class WindowScan : public ::testing::Test {
 protected:
  void SetUp() override {
    // No named query filters `items` here: one would have the node keep an index on its
    // field (named_filter_index_test.cpp), and these tests count the indexes built.
    node = start_node(dir.path(), "", items_all_queries_yaml());
    ASSERT_TRUE(node);
    port = node->http_port();
    seed_tagged_records(port);
    if (HasFatalFailure()) {
      return;
    }
    // The sort's index, built once (a pass of its own kind).
    auto first = windowed_query(port, "t", "object",
                                R"({"objectId":"c","dataset":"items","sort":["n"],"limit":1})");
    ASSERT_EQ(first.status, 200u) << first.body;
    EXPECT_EQ(dataset_passes(port, "index"), 1);
  }

  /// Once `go`, turns early records late (r5, r6, …; `flipped` counts them) until three more
  /// after `opened`: some are published while a pass runs, and each sorts before every match
  /// the pass can have found.
  void flip_while_opening(const std::atomic<bool>& go, const std::atomic<bool>& opened,
                          int& flipped) {
    while (!go) {
      std::this_thread::yield();
    }
    for (int extra = 0; extra < 3; ++flipped) {
      int i = 5 + flipped;
      put_record(port, "t", "c", "items", "r" + std::to_string(i),
                 R"({"n":)" + std::to_string(i) + R"(,"tag":"late"})");
      if (opened) {
        ++extra;
      }
    }
  }

  /// Opens a window of three sorted by `n` with `filter` while early records turn late
  /// (flip_while_opening), and waits until it holds r5, r6 and r7, as a window that missed no
  /// flip does. Returns how many turned.
  int open_first_three_while_flipping(const std::string& filter) {
    std::atomic<bool> go{false}, opened{false};
    int flipped = 0;
    std::thread writer([&] { flip_while_opening(go, opened, flipped); });
    go = true;
    windowed_stream s{
        port, "t", "object",
        R"({"objectId":"c","dataset":"items","sort":["n"],"limit":3,"filter":)" + filter + "}"};
    EXPECT_EQ(s.status(), 200u) << s.client().response().body;
    if (s.status() == 200u) {
      s.open(30s);
    }
    opened = true;
    writer.join();
    const std::vector<std::string> want{"r5", "r6", "r7"};
    if (s.status() == 200u) {
      await_ids(s, want);
    }
    EXPECT_EQ(ids_of(s.window()), want);
    return flipped;
  }

  /// Opens eight windows of two sorted by `n`, each with the filter {"tag": <tag>, "n": {"$ne":
  /// one of the late ones}, "k": {"$ne": k}} (matches far down the sort), at once from as many
  /// connections, and checks each opens on exactly its first two matches.
  void open_eight_far_filters_at_once(const std::string& tag) {
    constexpr int windows = 8;
    std::vector<std::unique_ptr<windowed_stream>> streams(windows);
    std::vector<std::thread> openers;
    for (int k = 0; k < windows; ++k) {
      openers.emplace_back([&, k] {
        auto s = std::make_unique<windowed_stream>(
            port, "t", "object",
            R"({"objectId":"c","dataset":"items","sort":["n"],"limit":2,"filter":{"tag":)" + tag +
                R"(,"n":{"$ne":)" + std::to_string(late_from + k % 10) + R"(},"k":{"$ne":)" +
                std::to_string(k) + "}}}");
        if (s->status() == 200u) {
          s->open(30s);
        }
        streams[static_cast<std::size_t>(k)] = std::move(s);
      });
    }
    for (auto& t : openers) {
      t.join();
    }
    for (int k = 0; k < windows; ++k) {
      auto& s = *streams[static_cast<std::size_t>(k)];
      ASSERT_EQ(s.status(), 200u) << s.client().response().body;
      std::vector<std::string> want;
      for (int i = late_from; want.size() < 2; ++i) {
        if (i != late_from + k % 10) {
          want.push_back("r" + std::to_string(i));
        }
      }
      EXPECT_EQ(ids_of(s.window()), want) << "window " << k;
    }
  }

  void wait_for_index_builds() { weir::test::wait_for_index_builds(*node); }

  /// A snapshot of the window sorted by `n` with `filter`, its total included: (total, ids).
  std::pair<int, std::vector<std::string>> page_of(const std::string& filter, int offset,
                                                   int limit) {
    auto r = windowed_query(port, "t", "object",
                            R"({"objectId":"c","dataset":"items","sort":["n"],"includeTotal":true,)"
                            R"("offset":)" +
                                std::to_string(offset) + R"(,"limit":)" + std::to_string(limit) +
                                R"(,"filter":)" + filter + "}");
    EXPECT_EQ(r.status, 200u) << r.body;
    auto body = r.json().as_object();
    return {body["total"].to_number<int>(), ids_of(by_record_id(body["records"]))};
  }

  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

// Filters that bound no field ($not of a regex that is no prefix, $exists): no index can say
// where their matches are.
TEST_F(WindowScan, MatchesFarDownTheSortAreFoundByAPassThatTakesTheWritesMadeMeanwhile) {
  const double before = dataset_passes(port, "filter");
  // Early records turn late (r5, r6, …) from before the subscribe until after its window
  // opened, so some are published while the pass runs: each sorts before every match the pass
  // can have found, so a pass that missed one would open on the wrong rows.
  const int flipped = open_first_three_while_flipping(R"({"tag":{"$not":{"$regex":"y$"}}})");
  EXPECT_EQ(dataset_passes(port, "filter"), before + 1);
  // The pass's count was kept, with every flip in it: a page with its total whose rows (and
  // look-ahead) lie among the flipped records opens without another pass.
  auto page = windowed_query(
      port, "t", "object",
      R"({"objectId":"c","dataset":"items","sort":["n"],"limit":1,)"
      R"("offset":1,"includeTotal":true,"filter":{"tag":{"$not":{"$regex":"y$"}}}})");
  ASSERT_EQ(page.status, 200u) << page.body;
  auto body = page.json().as_object();
  EXPECT_EQ(body["total"].to_number<int>(), seeded - late_from + flipped) << flipped << " flips";
  EXPECT_EQ(ids_of(by_record_id(body["records"])), std::vector<std::string>{"r6"});
  EXPECT_EQ(dataset_passes(port, "filter"), before + 1);
  EXPECT_EQ(dataset_passes(port, "index"), 1);
}

TEST_F(WindowScan, AFilterMatchingNothingOpensEmptyAndTakesItsFirstMatch) {
  const double before = dataset_passes(port, "filter");
  windowed_stream s{port, "t", "object",
                    R"({"objectId":"c","dataset":"items","sort":["n"],"limit":3,)"
                    R"("filter":{"tag":{"$exists":false}}})"};
  ASSERT_EQ(s.status(), 200u) << s.client().response().body;
  s.open(30s);
  EXPECT_TRUE(s.window().empty());
  EXPECT_EQ(dataset_passes(port, "filter"), before + 1);
  put_record(port, "t", "c", "items", "r20000", R"({"n":20000})");
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       s.window().empty() && std::chrono::steady_clock::now() < deadline;) {
    if (auto f = s.next(500ms)) {
      s.apply(*f);
    }
  }
  EXPECT_EQ(ids_of(s.window()), std::vector<std::string>{"r20000"});
}

TEST_F(WindowScan, AnUnboundedQuerysFirstResultComesFromAPassThatTakesTheWritesMadeMeanwhile) {
  const double before = dataset_passes(port, "filter");
  std::atomic<bool> go{false}, opened{false};
  int flipped = 0;
  std::thread writer([&] {
    flip_while_opening(go, opened, flipped);
    // And one of the seeded matches leaves.
    auto d = http(port, "DELETE", "/v1/spaces/t/objects/c/datasets/items/records/r39995");
    EXPECT_EQ(d.status, 200u) << d.body;
  });
  go = true;
  windowed_stream s{port, "t", "object",
                    R"({"objectId":"c","dataset":"items","filter":{"tag":"late"}})"};
  ASSERT_EQ(s.status(), 200u) << s.client().response().body;
  s.open(30s);
  opened = true;
  writer.join();
  std::vector<std::string> want;
  for (int i = late_from; i < seeded; ++i) {
    if (i != 39995) {
      want.push_back("r" + std::to_string(i));
    }
  }
  for (int k = 0; k < flipped; ++k) {
    want.push_back("r" + std::to_string(5 + k));
  }
  std::sort(want.begin(), want.end());
  await_ids(s, want);
  EXPECT_EQ(ids_of(s.window()), want);
  EXPECT_EQ(dataset_passes(port, "filter"), before + 1);
  // The filter bounds `tag`: the index on it was built after the pass, and another unbounded
  // query bounding `tag` reads its few records from it, without a pass: the strings in its
  // interval, and the records holding an array there (one element matches).
  EXPECT_EQ(dataset_passes(port, "index"), 2);
  wait_for_index_builds();
  // (New ids: the flips may have reached any early one.)
  put_record(port, "t", "c", "items", "z1", R"({"n":40001,"tag":["x","late"]})");
  want.push_back("z1");
  std::sort(want.begin(), want.end());
  windowed_stream again{
      port, "t", "object",
      R"({"objectId":"c","dataset":"items","filter":{"tag":{"$gte":"l","$lt":"m"}}})"};
  ASSERT_EQ(again.status(), 200u) << again.client().response().body;
  again.open(30s);
  EXPECT_EQ(ids_of(again.window()), want);
  EXPECT_EQ(dataset_passes(port, "filter"), before + 1);
  // And it goes on like any unbounded query: a write that matches reaches it.
  put_record(port, "t", "c", "items", "z2", R"({"n":40002,"tag":"late"})");
  want.push_back("z2");
  std::sort(want.begin(), want.end());
  await_ids(again, want);
  EXPECT_EQ(ids_of(again.window()), want);
}

TEST_F(WindowScan, ManyFiltersOpenedTogetherWaitInLineForTheirPassesAndAllOpen) {
  // Eight windows with eight different filters, all far down the sort, asked for at once from
  // as many connections: a dataset runs one pass at a time and the rest wait in line (each pass
  // holds a copy of the dataset's record references); every window opens, exact.
  const double before = dataset_passes(port, "filter");
  open_eight_far_filters_at_once(R"({"$ne":"early"})");
  EXPECT_EQ(dataset_passes(port, "filter"), before + 8);
  EXPECT_EQ(node->runtime().stats().filter_passes_peak, 1u);  // never two of one dataset at once
  EXPECT_EQ(node->runtime().stats().filter_passes_running, 0u);
  EXPECT_EQ(dataset_passes(port, "index"), 1);  // no field is bounded: no field index
}

TEST_F(WindowScan, ManyFiltersOnOneFieldOpenedTogetherBuildItsIndexOnce) {
  // The same eight windows with filters that bound `tag`: the first pass builds the index on
  // `tag` after it, and the passes in line behind it build none of their own (each would be
  // an O(N log N) build thrown away).
  open_eight_far_filters_at_once(R"("late")");
  EXPECT_EQ(dataset_passes(port, "index"), 2);  // `n`, and `tag` once
  EXPECT_EQ(node->runtime().stats().filter_passes_peak, 1u);
}

TEST_F(WindowScan, AFilterOnAFieldNoIndexLeadsWithGetsAnIndexOnItSoLaterFiltersOnItOpenFromIt) {
  const double before = dataset_passes(port, "filter");
  // The first filter on `tag` opens from a pass, and the index on `tag` is built after it.
  // Early records turn late meanwhile: the pass's and then the build's journal must bring each
  // in, or the windows below would open on the wrong rows.
  const int flipped = open_first_three_while_flipping(R"({"tag":"late"})");
  EXPECT_EQ(dataset_passes(port, "filter"), before + 1);
  EXPECT_EQ(dataset_passes(port, "index"), 2);  // `n`, then `tag` (started as the pass ended)
  // A window does not wait for that build (it would take a pass meanwhile); these do.
  wait_for_index_builds();
  const int late = seeded - late_from + flipped;
  // Rows far down the sort (past the flipped records): the walk of 16,384 entries would not
  // reach them, and the index on `tag` says the only records that can match are the late ones,
  // read here in `n` order.
  EXPECT_EQ(page_of(R"({"tag":"late"})", flipped + 1, 2),
            (std::pair{late, std::vector<std::string>{"r39991", "r39992"}}));
  // A filter no index counts alone (two fields): its count and rows from the records in the
  // runs an index gives.
  EXPECT_EQ(page_of(R"({"tag":"late","n":{"$gte":39990}})", 0, 2),
            (std::pair{seeded - late_from, std::vector<std::string>{"r39990", "r39991"}}));
  // Other filters on `tag`, their counts from the index's ranks: no pass, no new index.
  EXPECT_EQ(page_of(R"({"tag":"late"})", 1, 1), (std::pair{late, std::vector<std::string>{"r6"}}));
  EXPECT_EQ(page_of(R"({"tag":{"$gte":"l","$lt":"m"}})", 0, 2),
            (std::pair{late, std::vector<std::string>{"r5", "r6"}}));
  EXPECT_EQ(page_of(R"({"tag":"none"})", 0, 2), (std::pair{0, std::vector<std::string>{}}));
  EXPECT_EQ(page_of(R"({"tag":{"$regex":"^ear"}})", 0, 1),
            (std::pair{late_from - flipped, std::vector<std::string>{"r0"}}));
  // Unions and complements of values of `tag` too.
  EXPECT_EQ(page_of(R"({"tag":{"$in":["none","late"]}})", 1, 1),
            (std::pair{late, std::vector<std::string>{"r6"}}));
  EXPECT_EQ(page_of(R"({"tag":{"$ne":"early"}})", 0, 2),
            (std::pair{late, std::vector<std::string>{"r5", "r6"}}));
  EXPECT_EQ(page_of(R"({"$or":[{"tag":"late"},{"tag":{"$lt":"b"}}]})", 0, 1),
            (std::pair{late, std::vector<std::string>{"r5"}}));
  EXPECT_EQ(page_of(R"({"tag":{"$nin":["late"]}})", 0, 1),
            (std::pair{late_from - flipped, std::vector<std::string>{"r0"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before + 1);
  EXPECT_EQ(dataset_passes(port, "index"), 2);
  // Matches too many to read here, far down the sort: the count from the ranks, the rows from a
  // pass (r5… turned late, so the 30,001st early record is r(30000 + flipped)).
  EXPECT_EQ(page_of(R"({"tag":"early"})", 30000, 1),
            (std::pair{late_from - flipped,
                       std::vector<std::string>{"r" + std::to_string(30000 + flipped)}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before + 2);
  EXPECT_EQ(dataset_passes(port, "index"), 2);
}

TEST_F(WindowScan, AnOrAcrossFieldsGetsAnIndexPerBranchThenOpensFromTheirRuns) {
  using ids = std::vector<std::string>;
  const double before = dataset_passes(port, "filter");
  // `n` has its index (the sort's); the branch on `tag` has none: a pass, then `tag`'s index.
  const std::string tag_or_n = R"({"$or":[{"tag":"late"},{"n":{"$lt":3}}]})";
  EXPECT_EQ(page_of(tag_or_n, 2, 2), (std::pair{13, ids{"r2", "r39990"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before + 1);
  wait_for_index_builds();
  EXPECT_EQ(dataset_passes(port, "index"), 2);  // `n`, then `tag`
  // Each branch read from its own index's runs, a record in both once: no pass.
  EXPECT_EQ(page_of(tag_or_n, 11, 2), (std::pair{13, ids{"r39998", "r39999"}}));
  EXPECT_EQ(page_of(R"({"$or":[{"tag":"late"},{"n":{"$gte":39995}}]})", 0, 2),
            (std::pair{10, ids{"r39990", "r39991"}}));
  EXPECT_EQ(
      page_of(R"({"n":{"$ne":39990},"$and":[{"$or":[{"n":1},{"tag":{"$in":["late"]}}]}]})", 0, 2),
      (std::pair{10, ids{"r1", "r39991"}}));
  put_record(port, "t", "c", "items", "r7", R"({"n":7,"tag":"late"})");
  EXPECT_EQ(page_of(tag_or_n, 2, 2), (std::pair{14, ids{"r2", "r7"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before + 1);
  EXPECT_EQ(dataset_passes(port, "index"), 2);
  // Branches whose runs hold too many records to read here: a pass.
  EXPECT_EQ(page_of(R"({"$or":[{"tag":"early"},{"n":{"$gte":39998}}]})", 30000, 1),
            (std::pair{seeded - 10 - 1 + 2, ids{"r30001"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before + 2);
}

TEST_F(WindowScan, RowsFoundNearTheStartOpenInPlaceThoughNoOtherMatchFollowsForLong) {
  // Four matches at the top of the sort and none after them: the window of three and its
  // look-ahead are found at once, and no pass is made to learn that nothing follows.
  for (int i = 0; i < 4; ++i) {
    put_record(port, "t", "c", "items", "r" + std::to_string(i),
               R"({"n":)" + std::to_string(i) + R"(,"tag":"head"})");
  }
  const double before = dataset_passes(port, "filter");
  windowed_stream s{port, "t", "object",
                    R"({"objectId":"c","dataset":"items","sort":["n"],"limit":3,)"
                    R"("filter":{"tag":"head"}})"};
  ASSERT_EQ(s.status(), 200u) << s.client().response().body;
  s.open(30s);
  EXPECT_EQ(ids_of(s.window()), (std::vector<std::string>{"r0", "r1", "r2"}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
  // Three leave: the window reads on and finds the only one left.
  for (int i = 0; i < 3; ++i) {
    auto d =
        http(port, "DELETE", "/v1/spaces/t/objects/c/datasets/items/records/r" + std::to_string(i));
    ASSERT_EQ(d.status, 200u) << d.body;
  }
  const std::vector<std::string> want{"r3"};
  await_ids(s, want);
  EXPECT_EQ(ids_of(s.window()), want);
}

TEST_F(WindowScan, MatchesNearTheStartOfTheSortOpenInPlace) {
  const double before = dataset_passes(port, "filter");
  auto r = windowed_query(port, "t", "object",
                          R"({"objectId":"c","dataset":"items","sort":["n"],"limit":3,)"
                          R"("filter":{"tag":"early"}})");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(ids_of(by_record_id(r.json().as_object()["records"])),
            (std::vector<std::string>{"r0", "r1", "r2"}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
}

}  // namespace
}  // namespace weir::test

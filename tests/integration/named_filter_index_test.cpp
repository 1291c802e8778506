// A named query's filter is known when the node starts ({"tag": "{tag}"}, {"tag": {"$in": …}},
// {"$nor": [{"tag": …}]}): once a dataset it reads holds 16,384 records, the unit keeps an index
// on each field the filter bounds
// (actors/shard_views.cpp, keep_filter_indexes), built on a loader thread as the dataset grows
// past that size or when a unit that large is loaded. The query's first page then takes its
// count and its rows from that index: no pass over every record (weir_dataset_passes_total
// {kind="filter"} stays where it was), which at a million records is ~0.3 s. The index is
// kept whatever windows come and go (not dropped to make room for their sorts, nor for being
// unused) and counts against query.maxSortIndexesPerDataset, leaving windows at least one.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "dataset_pass_support.hpp"
#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

const char* const queries = R"(queries:
  - name: T.Items.ByTag
    route: /api/t/items/by-tag
    space: t
    object: "{obj}"
    dataset: items
    filter: { tag: "{tag}" }
    sort: ["n"]
    arguments: { obj: string, tag: string }
)";

/// A named query over t/c/items sorted by n, as a YAML list entry.
std::string query_of_c(const std::string& name, const std::string& route, const std::string& filter,
                       const std::string& arguments) {
  return "  - name: " + name + "\n    route: " + route +
         "\n    space: t\n    object: c\n    dataset: items\n    filter: " + filter +
         "\n    sort: [\"n\"]\n    arguments: " + arguments + "\n";
}

class NamedFilterIndex : public ::testing::Test {
 protected:
  /// Starts the node with `entries` (query_of_c) as its queries.
  void start_with(const std::string& entries) {
    node = start_node(dir.path(), "", "queries:\n" + entries);
    ASSERT_TRUE(node);
    port = node->http_port();
  }

  void start(const std::string& extra = "") {
    node = start_node(dir.path(), extra, std::string{queries});
    ASSERT_TRUE(node);
    port = node->http_port();
  }

  void seed() { seed_tagged_records(port); }

  void wait_for_index_builds() { weir::test::wait_for_index_builds(*node); }

  /// Page `page` of two of T.Items.ByTag for `tag` (an HTTP snapshot): totalItems and the ids.
  std::pair<std::uint64_t, std::vector<std::string>> page_of(const std::string& tag, int page) {
    return page_at("/api/t/items/by-tag?obj=c&tag=" + tag, page);
  }

  /// Page `page` of two of the named query at `route_and_arguments`.
  std::pair<std::uint64_t, std::vector<std::string>> page_at(const std::string& route_and_arguments,
                                                             int page = 0) {
    auto r = http(port, "GET", route_and_arguments + "&pageSize=2&page=" + std::to_string(page));
    EXPECT_EQ(r.status, 200u) << r.body;
    auto body = r.json().as_object();
    std::vector<std::string> ids;
    for (const auto& row : body["data"].as_array()) {
      ids.emplace_back(row.at("id").as_string());
    }
    return {body["paging"].as_object()["totalItems"].to_number<std::uint64_t>(), ids};
  }

  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

using ids = std::vector<std::string>;

TEST_F(NamedFilterIndex, AGrowingDatasetGetsTheIndexAndTheFirstPageNeedsNoPass) {
  start();
  seed();
  wait_for_index_builds();
  EXPECT_EQ(dataset_passes(port, "index"), 1);  // `tag`, as the dataset passed 16,384 records
  const double before = dataset_passes(port, "filter");
  EXPECT_EQ(page_of("late", 0), (std::pair{std::uint64_t{10}, ids{"r39990", "r39991"}}));
  EXPECT_EQ(page_of("late", 4), (std::pair{std::uint64_t{10}, ids{"r39998", "r39999"}}));
  EXPECT_EQ(page_of("none", 0), (std::pair{std::uint64_t{0}, ids{}}));
  // Dense matches: the count from the ranks, the rows from the sort's index near its start.
  EXPECT_EQ(page_of("early", 1), (std::pair{std::uint64_t{late_from}, ids{"r2", "r3"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
  // Writes keep it exact.
  put_record(port, "t", "c", "items", "r5", R"({"n":5,"tag":"late"})");
  EXPECT_EQ(page_of("late", 0), (std::pair{std::uint64_t{11}, ids{"r5", "r39990"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
  EXPECT_EQ(dataset_passes(port, "index"), 2);  // and `n`, the query's sort, for its first page
}

TEST_F(NamedFilterIndex, ALoadedUnitGetsTheIndexAndWindowsOfOtherSortsCannotDropIt) {
  // Two sorts per dataset: the index on `tag` takes one, windows share the other.
  const std::string limits = "query:\n  maxSortIndexesPerDataset: 2\n";
  start(limits);
  seed();
  wait_for_index_builds();
  node.reset();
  start(limits);  // the unit is read back from the store on its first use
  auto w = windowed_query(port, "t", "object",
                          R"({"objectId":"c","dataset":"items","sort":["-n"],"limit":1})");
  ASSERT_EQ(w.status, 200u) << w.body;
  wait_for_index_builds();
  EXPECT_EQ(dataset_passes(port, "index"), 2);  // `tag` as the unit loaded, `-n` for the window
  // Each window of a new sort drops the one before (no window reads it), never `tag`'s. A
  // snapshot's window closes a moment after its answer: until then its sort is in use.
  for (const char* sort : {R"(["id"])", R"(["-id"])"}) {
    const auto body =
        std::string{R"({"objectId":"c","dataset":"items","limit":1,"sort":)"} + sort + "}";
    w = windowed_query(port, "t", "object", body);
    for (auto until = std::chrono::steady_clock::now() + 5s;
         w.status == 503 && std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(20ms);
      w = windowed_query(port, "t", "object", body);
    }
    ASSERT_EQ(w.status, 200u) << w.body;
  }
  wait_for_index_builds();
  // A third sort while a window holds the only free one: refused, `tag`'s index stays.
  const char* on_n = R"({"objectId":"c","dataset":"items","sort":["n"],"limit":1})";
  auto open = std::make_unique<windowed_stream>(port, "t", "object", on_n);
  for (auto until = std::chrono::steady_clock::now() + 5s;
       open->status() == 503 && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(20ms);
    open = std::make_unique<windowed_stream>(port, "t", "object", on_n);
  }
  ASSERT_EQ(open->status(), 200u);
  open->open(10s);
  auto refused = windowed_query(port, "t", "object",
                                R"({"objectId":"c","dataset":"items","sort":["ts"],"limit":1})");
  EXPECT_EQ(refused.status, 503u) << refused.body;
  const double before = dataset_passes(port, "filter");
  EXPECT_EQ(page_of("late", 1), (std::pair{std::uint64_t{10}, ids{"r39992", "r39993"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
}

TEST_F(NamedFilterIndex, AQueryOfOneObjectIndexesThatObjectsDatasetOnly) {
  start_with(
      query_of_c("T.Items.OfC", "/api/t/items/of-c", R"({ tag: "{tag}" })", "{ tag: string }"));
  seed_tagged_records(port, "d");
  seed_tagged_records(port, "c");
  wait_for_index_builds();
  EXPECT_EQ(dataset_passes(port, "index"), 1);  // c's, not d's
}

TEST_F(NamedFilterIndex, UnionsAndComplementsOfOneFieldAreCountedFromItsIndex) {
  start_with(query_of_c("T.Items.InTags", "/api/t/items/in-tags",
                        R"({ tag: { $in: ["{a}", "{b}"] } })", "{ a: string, b: string }") +
             query_of_c("T.Items.NotTag", "/api/t/items/not-tag", R"({ $nor: [{ tag: "{tag}" }] })",
                        "{ tag: string }"));
  seed();
  wait_for_index_builds();
  EXPECT_EQ(dataset_passes(port, "index"), 1);  // `tag`, once for both queries
  const double before = dataset_passes(port, "filter");
  EXPECT_EQ(page_at("/api/t/items/in-tags?a=late&b=none"),
            (std::pair{std::uint64_t{10}, ids{"r39990", "r39991"}}));
  EXPECT_EQ(page_at("/api/t/items/in-tags?a=late&b=early"),
            (std::pair{std::uint64_t{seeded_records}, ids{"r0", "r1"}}));
  EXPECT_EQ(page_at("/api/t/items/in-tags?a=x&b=y"), (std::pair{std::uint64_t{0}, ids{}}));
  // Sparse matches at the end of the sort: their rows come from the runs `tag`'s index gives.
  EXPECT_EQ(page_at("/api/t/items/not-tag?tag=early"),
            (std::pair{std::uint64_t{10}, ids{"r39990", "r39991"}}));
  EXPECT_EQ(page_at("/api/t/items/not-tag?tag=late"),
            (std::pair{std::uint64_t{late_from}, ids{"r0", "r1"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
  // Writes keep them exact.
  put_record(port, "t", "c", "items", "r5", R"({"n":5,"tag":"late"})");
  EXPECT_EQ(page_at("/api/t/items/not-tag?tag=early"),
            (std::pair{std::uint64_t{11}, ids{"r5", "r39990"}}));
  EXPECT_EQ(page_at("/api/t/items/in-tags?a=late&b=none"),
            (std::pair{std::uint64_t{11}, ids{"r5", "r39990"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
}

TEST_F(NamedFilterIndex, TypesAndMissingFieldsAreReadFromTheFieldsIndex) {
  // $type admits whole type classes of `tag`'s index, counted from its ranks; $exists: false
  // admits its null run (missing sorts as null), whose few records are read: neither is a pass.
  start_with(query_of_c("T.Items.Tagged", "/api/t/items/tagged", R"({ tag: { $type: "string" } })",
                        "{ x: string }") +
             query_of_c("T.Items.Untagged", "/api/t/items/untagged",
                        R"({ tag: { $exists: false } })", "{ x: string }"));
  seed();
  wait_for_index_builds();
  EXPECT_EQ(dataset_passes(port, "index"), 1);  // `tag`, once for both queries
  const double before = dataset_passes(port, "filter");
  EXPECT_EQ(page_at("/api/t/items/tagged?x=1"),
            (std::pair{std::uint64_t{seeded_records}, ids{"r0", "r1"}}));
  EXPECT_EQ(page_at("/api/t/items/untagged?x=1"), (std::pair{std::uint64_t{0}, ids{}}));
  put_record(port, "t", "c", "items", "r5", R"({"n":5})");
  put_record(port, "t", "c", "items", "r7", R"({"n":7,"tag":null})");
  put_record(port, "t", "c", "items", "r8", R"({"n":8,"tag":8})");
  put_record(port, "t", "c", "items", "r9", R"({"n":9,"tag":["a"]})");
  EXPECT_EQ(page_at("/api/t/items/tagged?x=1", 3),
            (std::pair{std::uint64_t{seeded_records - 3}, ids{"r9", "r10"}}));
  EXPECT_EQ(page_at("/api/t/items/untagged?x=1"), (std::pair{std::uint64_t{1}, ids{"r5"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
}

TEST_F(NamedFilterIndex, TwoFieldsOneFixedToAValueAreCountedFromOneIndexOnBoth) {
  // Each field's bounds admit more than 16,384 records (tag early: 39,990; n >= 10,000:
  // 30,000), so neither field's own index could count the filter: one on ["tag", "n"] does.
  start_with(
      query_of_c("T.Items.ByTagSince", "/api/t/items/by-tag-since",
                 R"({ tag: "{tag}", n: { $gte: "{min}" } })", "{ tag: string, min: integer }") +
      query_of_c("T.Items.OfTag", "/api/t/items/of-tag", R"({ tag: "{tag}" })", "{ tag: string }"));
  seed();
  wait_for_index_builds();
  // ["tag", "n"] alone: it serves the query on `tag` alone as an index on `tag` would.
  EXPECT_EQ(dataset_passes(port, "index"), 1);
  const double before = dataset_passes(port, "filter");
  EXPECT_EQ(page_at("/api/t/items/of-tag?tag=late"),
            (std::pair{std::uint64_t{10}, ids{"r39990", "r39991"}}));
  EXPECT_EQ(page_at("/api/t/items/by-tag-since?tag=early&min=10000"),
            (std::pair{std::uint64_t{late_from - 10000}, ids{"r10000", "r10001"}}));
  EXPECT_EQ(page_at("/api/t/items/by-tag-since?tag=late&min=39995"),
            (std::pair{std::uint64_t{5}, ids{"r39995", "r39996"}}));
  EXPECT_EQ(page_at("/api/t/items/by-tag-since?tag=early&min=39990"),
            (std::pair{std::uint64_t{0}, ids{}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
  put_record(port, "t", "c", "items", "r20000", R"({"n":20000,"tag":"late"})");
  EXPECT_EQ(page_at("/api/t/items/by-tag-since?tag=late&min=0"),
            (std::pair{std::uint64_t{11}, ids{"r20000", "r39990"}}));
  EXPECT_EQ(page_at("/api/t/items/by-tag-since?tag=early&min=10000"),
            (std::pair{std::uint64_t{late_from - 10001}, ids{"r10000", "r10001"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
}

TEST_F(NamedFilterIndex, ADottedPathIsIndexedAsAFieldIs) {
  // `meta.tag` holds what `tag` holds in seed_tagged_records; $or branches on dotted paths too.
  start_with(query_of_c("T.Items.ByMetaTag", "/api/t/items/by-meta-tag", R"({ meta.tag: "{tag}" })",
                        "{ tag: string }") +
             query_of_c("T.Items.MetaOr", "/api/t/items/meta-or",
                        R"({ $or: [{ meta.tag: "{tag}" }, { meta.n: { $lt: "{below}" } }] })",
                        "{ tag: string, below: integer }"));
  for (int from = 0; from < seeded_records; from += 10000) {
    json::array upsert;
    for (int i = from; i < from + 10000; ++i) {
      upsert.push_back(json::object{
          {"id", "r" + std::to_string(i)},
          {"n", i},
          {"meta", json::object{{"tag", i >= late_from ? "late" : "early"}, {"n", i}}}});
    }
    auto r = http(port, "POST", "/v1/spaces/t/objects/c/datasets/items/records",
                  json::serialize(json::object{{"upsert", std::move(upsert)}}),
                  {{"Content-Type", "application/json"}});
    ASSERT_EQ(r.status, 200u) << r.body;
  }
  wait_for_index_builds();
  EXPECT_EQ(dataset_passes(port, "index"), 2);  // `meta.tag` and `meta.n`
  const double before = dataset_passes(port, "filter");
  EXPECT_EQ(page_at("/api/t/items/by-meta-tag?tag=late", 1),
            (std::pair{std::uint64_t{10}, ids{"r39992", "r39993"}}));
  EXPECT_EQ(page_at("/api/t/items/meta-or?tag=late&below=2"),
            (std::pair{std::uint64_t{12}, ids{"r0", "r1"}}));
  put_record(port, "t", "c", "items", "r5", R"({"n":5,"meta":{"tag":"late"}})");
  put_record(port, "t", "c", "items", "r39991", R"({"n":39991,"meta":[{"tag":"late"}]})");
  EXPECT_EQ(page_at("/api/t/items/by-meta-tag?tag=late"),
            (std::pair{std::uint64_t{10}, ids{"r5", "r39990"}}));
  EXPECT_EQ(page_at("/api/t/items/meta-or?tag=late&below=2", 1),
            (std::pair{std::uint64_t{12}, ids{"r5", "r39990"}}));
  EXPECT_EQ(dataset_passes(port, "filter"), before);
}

}  // namespace
}  // namespace weir::test

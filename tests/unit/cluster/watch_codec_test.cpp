// The Watch stream's codec (cluster/watch_codec.hpp) without a stream: what an owner writes of a
// query's snapshot and updates, a gateway reads back as the same rows, removals with their
// reasons, upserts at their places with their ops, unbounded changes, and a total alone; a row
// that is not a record (a peer's bug, or a newer peer's shape) is dropped rather than served.
#include "cluster/watch_codec.hpp"

#include <gtest/gtest.h>

namespace weir::cluster {
namespace {

core::record_ptr rec(const std::string& id, int n) {
  return core::make_record(
      boost::json::object{{"id", id}, {"n", n}, {"_ver", boost::json::object{{"id", "v1"}}}});
}

TEST(WatchCodec, ASnapshotReadsBackAsTheSameRowsAndTotal) {
  actors::view_snapshot s;
  s.rows = {rec("a", 1), rec("b", 2)};
  s.total = 7;
  v1::Snapshot wire;
  to_proto(s, &wire);
  wire.add_records_json(R"(["not","a","record"])");  // dropped, not served
  auto back = from_proto(42, wire);
  EXPECT_EQ(back.seq, 42u);
  ASSERT_EQ(back.rows.size(), 2u);
  EXPECT_EQ(back.rows[0]->json, s.rows[0]->json);
  EXPECT_EQ(back.rows[1]->id, "b");
  EXPECT_EQ(back.total, 7u);

  actors::view_snapshot uncounted;
  v1::Snapshot empty;
  to_proto(uncounted, &empty);
  EXPECT_FALSE(from_proto(1, empty).total.has_value());
}

TEST(WatchCodec, AWindowDeltaKeepsReasonsPlacesAndOps) {
  auto d = std::make_shared<core::window_delta>();
  d->removed.push_back({rec("gone", 1), core::removal_reason::deleted});
  d->removed.push_back({rec("out", 2), core::removal_reason::filtered_out});
  d->removed.push_back({rec("pushed", 3), core::removal_reason::displaced});
  auto ops = std::make_shared<const core::change_ops>(
      core::parse_change_ops(R"([{"type":"$set","path":["n"],"payload":5}])"));
  d->upserts.push_back({0, rec("new", 5), true, ops});
  d->upserts.push_back({2, rec("moved", 6), false, nullptr});
  actors::view_update u;
  u.delta = d;
  u.total = 9;
  u.synthetic = true;
  v1::Update wire;
  to_proto(u, &wire);
  auto* bad = wire.add_upserts();  // not a record: dropped, the rest read
  bad->set_index(1);
  bad->set_json("42");
  auto back = from_proto(5, "ver-5", wire);
  EXPECT_EQ(back.seq, 5u);
  EXPECT_EQ(back.version_id, "ver-5");
  EXPECT_TRUE(back.synthetic);
  EXPECT_FALSE(back.object_deleted);
  EXPECT_EQ(back.total, 9u);
  ASSERT_TRUE(back.delta);
  EXPECT_FALSE(back.changes);
  ASSERT_EQ(back.delta->removed.size(), 3u);
  EXPECT_EQ(back.delta->removed[0].rec->id, "gone");
  EXPECT_EQ(back.delta->removed[0].reason, core::removal_reason::deleted);
  EXPECT_EQ(back.delta->removed[1].reason, core::removal_reason::filtered_out);
  EXPECT_EQ(back.delta->removed[2].reason, core::removal_reason::displaced);
  ASSERT_EQ(back.delta->upserts.size(), 2u);
  EXPECT_EQ(back.delta->upserts[0].index, 0u);
  EXPECT_TRUE(back.delta->upserts[0].added);
  ASSERT_TRUE(back.delta->upserts[0].ops);
  EXPECT_EQ(back.delta->upserts[0].ops->json, ops->json);
  EXPECT_EQ(back.delta->upserts[1].index, 2u);
  EXPECT_FALSE(back.delta->upserts[1].added);
  EXPECT_FALSE(back.delta->upserts[1].ops);
  EXPECT_EQ(back.delta->upserts[1].rec->json, d->upserts[1].rec->json);
  EXPECT_EQ(back.delta->total, 9u);
}

TEST(WatchCodec, UnboundedChangesKeepBothSidesAndWhetherTheRecordStillExists) {
  auto list = std::make_shared<std::vector<actors::view_change>>();
  actors::view_change created;
  created.after = rec("c", 1);
  created.after_exists = true;
  created.ops = std::make_shared<const core::change_ops>(
      core::parse_change_ops(R"([{"type":"$set","path":["n"],"payload":1}])"));
  actors::view_change filtered;
  filtered.before = rec("f", 2);
  filtered.after_exists = true;  // it still exists, it no longer matches
  actors::view_change deleted;
  deleted.before = rec("d", 3);
  list->push_back(created);
  list->push_back(filtered);
  list->push_back(deleted);
  actors::view_update u;
  u.changes = list;
  v1::Update wire;
  to_proto(u, &wire);
  auto back = from_proto(6, "ver-6", wire);
  ASSERT_TRUE(back.changes);
  EXPECT_FALSE(back.delta);
  ASSERT_EQ(back.changes->size(), 3u);
  const auto& c = (*back.changes)[0];
  EXPECT_FALSE(c.before);
  ASSERT_TRUE(c.after);
  EXPECT_EQ(c.after->json, created.after->json);
  EXPECT_TRUE(c.after_exists);
  const auto& f = (*back.changes)[1];
  ASSERT_TRUE(f.before);
  EXPECT_FALSE(f.after);
  EXPECT_TRUE(f.after_exists);
  const auto& d = (*back.changes)[2];
  ASSERT_TRUE(d.before);
  EXPECT_EQ(d.before->id, "d");
  EXPECT_FALSE(d.after_exists);
  ASSERT_TRUE(c.ops);
  EXPECT_EQ(c.ops->json, created.ops->json);
  EXPECT_FALSE(f.ops);
}

TEST(WatchCodec, AnUpdateOfTheTotalAloneIsAnEmptyDeltaWithIt) {
  actors::view_update u;
  u.total = 3;
  u.object_deleted = true;
  v1::Update wire;
  to_proto(u, &wire);
  auto back = from_proto(7, "", wire);
  ASSERT_TRUE(back.delta);
  EXPECT_TRUE(back.delta->empty());
  EXPECT_EQ(back.delta->total, 3u);
  EXPECT_TRUE(back.object_deleted);
}

}  // namespace
}  // namespace weir::cluster

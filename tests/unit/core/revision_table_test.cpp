// Tests for core/revision_table: every row of Arc hub §4, tombstone expiry and the tombstone cap.
#include "core/revision_table.hpp"

#include <gtest/gtest.h>

#include <string>

namespace weir::core {
namespace {

using namespace std::chrono_literals;
using tp = std::chrono::steady_clock::time_point;

const tp t0{};

TEST(RevisionTable, AwareSubscribeStartsAndHigherRevisionReplaces) {
  revision_table t;
  EXPECT_EQ(t.on_subscribe("q", 1, t0), subscribe_outcome::start);
  EXPECT_TRUE(t.is_active("q"));
  EXPECT_EQ(t.current_revision("q"), 1u);
  EXPECT_EQ(t.on_subscribe("q", 3, t0), subscribe_outcome::start);
  EXPECT_EQ(t.current_revision("q"), 3u);
  EXPECT_EQ(t.active_count(), 1u);
}

TEST(RevisionTable, DuplicateAndStaleSubscribesAreIgnored) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", 5, t0), subscribe_outcome::start);
  EXPECT_EQ(t.on_subscribe("q", 5, t0), subscribe_outcome::ignore);
  EXPECT_EQ(t.on_subscribe("q", 4, t0), subscribe_outcome::ignore);
  EXPECT_EQ(t.current_revision("q"), 5u);
  EXPECT_TRUE(t.is_active("q"));
}

TEST(RevisionTable, LegacySubscribeReplacesLegacy) {
  revision_table t;
  EXPECT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::start);
  EXPECT_TRUE(t.is_active("q"));
  EXPECT_EQ(t.current_revision("q"), std::nullopt);
  EXPECT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::start);
  EXPECT_EQ(t.active_count(), 1u);
}

TEST(RevisionTable, AwareSubscribeSupersedesLegacy) {
  // The revision-aware client first sends legacy subscribes, then re-sends with revisions (§12).
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::start);
  EXPECT_EQ(t.on_subscribe("q", 1, t0), subscribe_outcome::start);
  EXPECT_EQ(t.current_revision("q"), 1u);
  EXPECT_TRUE(t.is_current("q", 1));
  EXPECT_FALSE(t.is_current("q", std::nullopt));
}

TEST(RevisionTable, LegacyCannotOverrideAware) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", 2, t0), subscribe_outcome::start);
  EXPECT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::ignore);
  EXPECT_EQ(t.on_unsubscribe("q", std::nullopt, t0), unsubscribe_outcome::ignore);
  EXPECT_TRUE(t.is_active("q"));
  EXPECT_EQ(t.current_revision("q"), 2u);
}

TEST(RevisionTable, LegacyCannotResurrectTombstone) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", 2, t0), subscribe_outcome::start);
  ASSERT_EQ(t.on_unsubscribe("q", 2, t0), unsubscribe_outcome::cancel);
  EXPECT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::ignore);
  EXPECT_FALSE(t.is_active("q"));
  EXPECT_TRUE(t.is_tombstoned("q"));
}

TEST(RevisionTable, UnsubscribeAtCurrentTombstonesAndRepeatIsIdempotent) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", 3, t0), subscribe_outcome::start);
  EXPECT_EQ(t.on_unsubscribe("q", 3, t0), unsubscribe_outcome::cancel);
  EXPECT_FALSE(t.is_active("q"));
  EXPECT_TRUE(t.is_tombstoned("q"));
  EXPECT_EQ(t.current_revision("q"), 3u);
  EXPECT_EQ(t.tombstone_count(), 1u);
  EXPECT_EQ(t.active_count(), 0u);
  EXPECT_EQ(t.on_unsubscribe("q", 3, t0 + 10s), unsubscribe_outcome::ignore);
  EXPECT_EQ(t.tombstone_count(), 1u);
  // The idempotent repeat did not refresh the tombstone's age.
  t.expire(t0 + 120s);
  EXPECT_EQ(t.tombstone_count(), 0u);
}

TEST(RevisionTable, StaleUnsubscribeIsIgnored) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", 4, t0), subscribe_outcome::start);
  EXPECT_EQ(t.on_unsubscribe("q", 3, t0), unsubscribe_outcome::ignore);
  EXPECT_TRUE(t.is_active("q"));
  EXPECT_EQ(t.current_revision("q"), 4u);
}

TEST(RevisionTable, UnsubscribeAboveCurrentTombstonesAtThatRevision) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", 2, t0), subscribe_outcome::start);
  EXPECT_EQ(t.on_unsubscribe("q", 5, t0), unsubscribe_outcome::cancel);
  EXPECT_EQ(t.current_revision("q"), 5u);
  EXPECT_TRUE(t.is_tombstoned("q"));
  EXPECT_EQ(t.on_subscribe("q", 5, t0), subscribe_outcome::ignore);
  EXPECT_EQ(t.on_subscribe("q", 6, t0), subscribe_outcome::start);
  EXPECT_TRUE(t.is_active("q"));
  EXPECT_EQ(t.tombstone_count(), 0u);
}

TEST(RevisionTable, UnsubscribeAboveTombstoneMovesIt) {
  revision_table t;
  ASSERT_EQ(t.on_unsubscribe("q", 2, t0), unsubscribe_outcome::cancel);
  EXPECT_EQ(t.on_unsubscribe("q", 4, t0 + 100s), unsubscribe_outcome::cancel);
  EXPECT_EQ(t.current_revision("q"), 4u);
  EXPECT_EQ(t.tombstone_count(), 1u);
  // Re-tombstoned at t0+100s, so it outlives the first tombstone's expiry.
  t.expire(t0 + 130s);
  EXPECT_TRUE(t.is_tombstoned("q"));
  t.expire(t0 + 220s);
  EXPECT_FALSE(t.is_tombstoned("q"));
}

TEST(RevisionTable, UnsubscribeBeforeSubscribeBlocksTheDelayedSubscribe) {
  revision_table t;
  EXPECT_EQ(t.on_unsubscribe("q", 1, t0), unsubscribe_outcome::cancel);
  EXPECT_TRUE(t.is_tombstoned("q"));
  EXPECT_EQ(t.on_subscribe("q", 1, t0), subscribe_outcome::ignore);
  EXPECT_FALSE(t.is_active("q"));
  EXPECT_EQ(t.on_subscribe("q", 2, t0), subscribe_outcome::start);
}

TEST(RevisionTable, AwareUnsubscribeOfLegacyMakesItAware) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::start);
  EXPECT_EQ(t.on_unsubscribe("q", 1, t0), unsubscribe_outcome::cancel);
  EXPECT_TRUE(t.is_tombstoned("q"));
  EXPECT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::ignore);
}

TEST(RevisionTable, LegacyUnsubscribeCancelsAndForgets) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::start);
  EXPECT_EQ(t.on_unsubscribe("q", std::nullopt, t0), unsubscribe_outcome::cancel);
  EXPECT_FALSE(t.is_active("q"));
  EXPECT_FALSE(t.is_tombstoned("q"));
  EXPECT_EQ(t.tombstone_count(), 0u);
  EXPECT_EQ(t.active_count(), 0u);
  EXPECT_EQ(t.on_unsubscribe("q", std::nullopt, t0), unsubscribe_outcome::ignore);
  EXPECT_EQ(t.on_unsubscribe("unknown", std::nullopt, t0), unsubscribe_outcome::ignore);
}

TEST(RevisionTable, TerminationTombstonesAwareAtCurrent) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", 7, t0), subscribe_outcome::start);
  t.on_terminated("q", t0);
  EXPECT_FALSE(t.is_active("q"));
  EXPECT_TRUE(t.is_tombstoned("q"));
  EXPECT_EQ(t.current_revision("q"), 7u);
  EXPECT_FALSE(t.is_current("q", 7));
  EXPECT_EQ(t.on_subscribe("q", 7, t0), subscribe_outcome::ignore);
  EXPECT_EQ(t.on_unsubscribe("q", 7, t0), unsubscribe_outcome::ignore);
  EXPECT_EQ(t.on_subscribe("q", 8, t0), subscribe_outcome::start);
}

TEST(RevisionTable, TerminationForgetsLegacy) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::start);
  t.on_terminated("q", t0);
  EXPECT_FALSE(t.is_active("q"));
  EXPECT_FALSE(t.is_tombstoned("q"));
  EXPECT_EQ(t.tombstone_count(), 0u);
  EXPECT_EQ(t.on_subscribe("q", std::nullopt, t0), subscribe_outcome::start);
  t.on_terminated("unknown", t0);
  EXPECT_EQ(t.active_count(), 1u);
}

TEST(RevisionTable, TerminationOfTombstoneKeepsItsAge) {
  revision_table t;
  ASSERT_EQ(t.on_unsubscribe("q", 1, t0), unsubscribe_outcome::cancel);
  t.on_terminated("q", t0 + 60s);
  t.expire(t0 + 120s);
  EXPECT_FALSE(t.is_tombstoned("q"));
}

TEST(RevisionTable, IsCurrentTracksTheLiveRevisionOnly) {
  revision_table t;
  ASSERT_EQ(t.on_subscribe("q", 1, t0), subscribe_outcome::start);
  ASSERT_EQ(t.on_subscribe("q", 2, t0), subscribe_outcome::start);
  EXPECT_FALSE(t.is_current("q", 1));  // a delayed emission of the replaced owner
  EXPECT_TRUE(t.is_current("q", 2));
  EXPECT_FALSE(t.is_current("other", std::nullopt));
}

TEST(RevisionTable, TombstonesExpireAfterTwoMinutesByDefault) {
  revision_table t;
  ASSERT_EQ(t.on_unsubscribe("a", 1, t0), unsubscribe_outcome::cancel);
  ASSERT_EQ(t.on_unsubscribe("b", 1, t0 + 30s), unsubscribe_outcome::cancel);
  t.expire(t0 + 119s);
  EXPECT_EQ(t.tombstone_count(), 2u);
  t.expire(t0 + 120s);
  EXPECT_EQ(t.tombstone_count(), 1u);
  EXPECT_FALSE(t.is_tombstoned("a"));
  EXPECT_EQ(t.current_revision("a"), std::nullopt);
  EXPECT_TRUE(t.is_tombstoned("b"));
  // Once expired the id is forgotten: even a legacy subscribe starts again.
  EXPECT_EQ(t.on_subscribe("a", std::nullopt, t0 + 120s), subscribe_outcome::start);
}

TEST(RevisionTable, ExpiryRunsImplicitlyOnEveryCall) {
  revision_table t(revision_options{10s, 1024});
  ASSERT_EQ(t.on_unsubscribe("a", 5, t0), unsubscribe_outcome::cancel);
  // After expiry the stale subscribe is no longer known to be stale.
  EXPECT_EQ(t.on_subscribe("a", 1, t0 + 10s), subscribe_outcome::start);
  ASSERT_EQ(t.on_unsubscribe("b", 5, t0), unsubscribe_outcome::cancel);
  EXPECT_EQ(t.on_unsubscribe("c", std::nullopt, t0 + 20s), unsubscribe_outcome::ignore);
  EXPECT_EQ(t.tombstone_count(), 0u);
  ASSERT_EQ(t.on_unsubscribe("d", 5, t0 + 20s), unsubscribe_outcome::cancel);
  t.on_terminated("zzz", t0 + 30s);
  EXPECT_EQ(t.tombstone_count(), 0u);
}

TEST(RevisionTable, ActiveSubscriptionsNeverExpire) {
  revision_table t(revision_options{1s, 1});
  ASSERT_EQ(t.on_subscribe("a", 1, t0), subscribe_outcome::start);
  ASSERT_EQ(t.on_subscribe("b", std::nullopt, t0), subscribe_outcome::start);
  t.expire(t0 + 1h);
  ASSERT_EQ(t.on_unsubscribe("c", 1, t0 + 1h), unsubscribe_outcome::cancel);
  ASSERT_EQ(t.on_unsubscribe("d", 1, t0 + 1h), unsubscribe_outcome::cancel);
  EXPECT_TRUE(t.is_active("a"));
  EXPECT_TRUE(t.is_active("b"));
  EXPECT_EQ(t.active_count(), 2u);
  EXPECT_EQ(t.tombstone_count(), 1u);
}

TEST(RevisionTable, CapEvictsOldestByTimeThenQueryIdOrdinal) {
  revision_table t(revision_options{120s, 3});
  ASSERT_EQ(t.on_unsubscribe("m", 1, t0 + 1s), unsubscribe_outcome::cancel);
  ASSERT_EQ(t.on_unsubscribe("b", 1, t0 + 1s), unsubscribe_outcome::cancel);
  ASSERT_EQ(t.on_unsubscribe("a", 1, t0 + 2s), unsubscribe_outcome::cancel);
  ASSERT_EQ(t.on_unsubscribe("Z", 1, t0 + 3s), unsubscribe_outcome::cancel);
  // Over the cap by one: the oldest time is t0+1s, shared by "b" and "m"; "b" < "m" ordinally.
  EXPECT_EQ(t.tombstone_count(), 3u);
  EXPECT_FALSE(t.is_tombstoned("b"));
  EXPECT_TRUE(t.is_tombstoned("m"));
  ASSERT_EQ(t.on_subscribe("x", 1, t0 + 4s), subscribe_outcome::start);
  t.on_terminated("x", t0 + 4s);
  EXPECT_EQ(t.tombstone_count(), 3u);
  EXPECT_FALSE(t.is_tombstoned("m"));
  EXPECT_TRUE(t.is_tombstoned("a"));
  EXPECT_TRUE(t.is_tombstoned("Z"));
  EXPECT_TRUE(t.is_tombstoned("x"));
}

TEST(RevisionTable, CapOrdinalIsBytewiseNotAlphabetic) {
  revision_table t(revision_options{120s, 1});
  ASSERT_EQ(t.on_unsubscribe("a", 1, t0), unsubscribe_outcome::cancel);
  ASSERT_EQ(t.on_unsubscribe("Z", 1, t0), unsubscribe_outcome::cancel);
  // "Z" (0x5A) sorts before "a" (0x61), so it goes first.
  EXPECT_TRUE(t.is_tombstoned("a"));
  EXPECT_FALSE(t.is_tombstoned("Z"));
}

TEST(RevisionTable, CapNeverEvictsActiveSubscriptions) {
  revision_table t(revision_options{120s, 2});
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(t.on_subscribe("live" + std::to_string(i), 1, t0), subscribe_outcome::start);
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(t.on_unsubscribe("dead" + std::to_string(i), 1, t0 + std::chrono::seconds(i)),
              unsubscribe_outcome::cancel);
  }
  EXPECT_EQ(t.active_count(), 10u);
  EXPECT_EQ(t.tombstone_count(), 2u);
  EXPECT_TRUE(t.is_tombstoned("dead3"));
  EXPECT_TRUE(t.is_tombstoned("dead4"));
}

TEST(RevisionTable, DefaultCapIs1024) {
  revision_table t;
  for (int i = 0; i < 1100; ++i) {
    ASSERT_EQ(t.on_unsubscribe("q" + std::to_string(i), 1, t0 + std::chrono::milliseconds(i)),
              unsubscribe_outcome::cancel);
  }
  EXPECT_EQ(t.tombstone_count(), 1024u);
  EXPECT_FALSE(t.is_tombstoned("q75"));
  EXPECT_TRUE(t.is_tombstoned("q76"));
  EXPECT_TRUE(t.is_tombstoned("q1099"));
}

TEST(RevisionTable, ResubscribeClearsTheTombstoneFromTheIndex) {
  revision_table t(revision_options{120s, 1});
  ASSERT_EQ(t.on_unsubscribe("a", 1, t0), unsubscribe_outcome::cancel);
  ASSERT_EQ(t.on_subscribe("a", 2, t0 + 1s), subscribe_outcome::start);
  EXPECT_EQ(t.tombstone_count(), 0u);
  // If the stale index entry had survived, this tombstone would push it out and "a" would vanish.
  ASSERT_EQ(t.on_unsubscribe("b", 1, t0 + 2s), unsubscribe_outcome::cancel);
  EXPECT_TRUE(t.is_active("a"));
  EXPECT_TRUE(t.is_tombstoned("b"));
  t.expire(t0 + 1h);
  EXPECT_TRUE(t.is_active("a"));
  EXPECT_EQ(t.current_revision("a"), 2u);
}

}  // namespace
}  // namespace weir::core

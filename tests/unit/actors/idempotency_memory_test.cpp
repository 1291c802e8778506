// What a unit's shard remembers of Idempotency-Keys (actors/idempotency_memory.hpp), without an
// actor: acknowledged keys until they expire, a bound that forgets those closest to expiry
// first, what it forgot handed over once for the store to delete (but never a key in use again),
// and retries of a write still in flight answered with its outcome.
#include "actors/idempotency_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace weir::actors {
namespace {

core::idempotency_entry entry(const std::string& key, std::int64_t expires_in_ms) {
  return core::idempotency_entry{key, "v-" + key, 42, idempotency_memory::now_ms() + expires_in_ms};
}

TEST(IdempotencyMemory, AKeyIsFoundUntilItExpires) {
  idempotency_memory m;
  m.remember(entry("live", 60000), 10);
  m.remember(entry("gone", -1), 10);
  ASSERT_NE(m.find("live"), nullptr);
  EXPECT_EQ(m.find("live")->version_id, "v-live");
  EXPECT_EQ(m.find("gone"), nullptr);  // expired: forgotten when looked up
  EXPECT_EQ(m.find("never"), nullptr);
  EXPECT_EQ(m.size(), 1u);
}

TEST(IdempotencyMemory, PastItsBoundTheKeysClosestToExpiryAreForgottenFirst) {
  idempotency_memory m;
  m.remember(entry("soon", 10000), 3);
  m.remember(entry("late", 90000), 3);
  m.remember(entry("mid", 50000), 3);
  m.remember(entry("new", 70000), 3);  // a fourth: "soon" goes
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m.find("soon"), nullptr);
  EXPECT_NE(m.find("late"), nullptr);
  EXPECT_NE(m.find("mid"), nullptr);
  EXPECT_NE(m.find("new"), nullptr);
  // The same key again replaces its entry rather than holding two.
  m.remember(entry("mid", 80000), 3);
  EXPECT_EQ(m.size(), 3u);
  m.remember(entry("another", 85000), 3);  // now "new" (70 s) is the closest to expiry
  EXPECT_EQ(m.find("new"), nullptr);
  EXPECT_NE(m.find("mid"), nullptr);
}

TEST(IdempotencyMemory, WhatItForgetsIsHandedOverOnceForTheStoreToDelete) {
  idempotency_memory m;
  m.remember(entry("expired", -1), 2);
  m.remember(entry("a", 10000), 2);
  m.remember(entry("b", 20000), 2);  // "expired" goes as it expired
  m.remember(entry("c", 30000), 2);  // "a" goes past the bound
  m.remember(entry("b", 40000), 2);  // the same key again: replaced, not forgotten
  auto gone = m.take_forgotten();
  std::sort(gone.begin(), gone.end());
  EXPECT_EQ(gone, (std::vector<std::string>{"a", "expired"}));
  EXPECT_TRUE(m.take_forgotten().empty());
  // A key forgotten and then used anew (remembered, or a write under it in flight) is kept:
  // deleting it after its new entry is stored would lose that entry.
  m.remember(entry("d", 50000), 2);  // "c" goes
  m.start("c", 7);
  m.remember(entry("e", 60000), 2);  // "b" goes
  m.remember(entry("b", 70000), 2);  // … and comes back ("d" goes)
  gone = m.take_forgotten();
  std::sort(gone.begin(), gone.end());
  EXPECT_EQ(gone, (std::vector<std::string>{"d"}));
}

TEST(IdempotencyMemory, RetriesOfAWriteInFlightGetItsOutcomeAsAReplay) {
  idempotency_memory m;
  m.start("k", 7);
  ASSERT_NE(m.pending("k"), nullptr);
  EXPECT_EQ(m.pending("k")->fingerprint, 7u);
  std::vector<core::result<write_outcome>> answers;
  for (int i = 0; i < 2; ++i) {
    m.pending("k")->waiters.push_back(
        [&](core::result<write_outcome> r) { answers.push_back(std::move(r)); });
  }
  m.settle("k", write_outcome{"v9", false});
  ASSERT_EQ(answers.size(), 2u);
  for (auto& a : answers) {
    ASSERT_TRUE(a);
    EXPECT_EQ(a->version_id, "v9");
    EXPECT_TRUE(a->replayed);
  }
  EXPECT_EQ(m.pending("k"), nullptr);
  m.settle("k", write_outcome{"v10", false});  // settled twice: nothing to answer
  EXPECT_EQ(answers.size(), 2u);
}

TEST(IdempotencyMemory, RetriesOfAWriteThatFailedGetTheSameRefusal) {
  idempotency_memory m;
  m.start("k", 7);
  std::optional<core::result<write_outcome>> answer;
  m.pending("k")->waiters.push_back([&](core::result<write_outcome> r) { answer = std::move(r); });
  m.settle("k", core::make_error("store.write_failed", "disk full"));
  ASSERT_TRUE(answer);
  ASSERT_FALSE(*answer);
  EXPECT_EQ(answer->error().code, "store.write_failed");
}

}  // namespace
}  // namespace weir::actors

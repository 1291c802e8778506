// Tests for store/captured_rows: a captured transaction's row keys are kept once each, and in
// bounded memory — past the per-dataset bound a dataset is kept as "whole", past the total
// bound the dataset a new row belongs to is, and past the dataset bound only the fact that the
// transaction happened ("everything") — however many rows the transaction changed.
#include "store/captured_rows.hpp"

#include <gtest/gtest.h>

#include <string>

namespace weir::store {
namespace {

captured_row row(std::string object, std::string id, std::string dataset = "items") {
  return {"s", std::move(object), std::move(dataset), std::move(id)};
}

TEST(CapturedRows, EachRowOnceInKeyOrder) {
  captured_rows c;
  c.add(row("o2", "b"));
  c.add(row("o1", "z"));
  c.add(row("o1", "a"));
  c.add(row("o1", "z"));  // updated twice in the transaction
  auto txn = c.take();
  ASSERT_EQ(txn.rows.size(), 3u);
  EXPECT_EQ(txn.rows[0].object + "/" + txn.rows[0].id, "o1/a");
  EXPECT_EQ(txn.rows[1].object + "/" + txn.rows[1].id, "o1/z");
  EXPECT_EQ(txn.rows[2].object + "/" + txn.rows[2].id, "o2/b");
  EXPECT_TRUE(txn.whole.empty());
  EXPECT_FALSE(txn.everything);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.keys(), 0u);
}

TEST(CapturedRows, ADatasetPastItsBoundIsKeptWholeAndItsKeysFreed) {
  captured_rows c{{.per_dataset = 3, .total = 100, .datasets = 10}};
  for (int i = 0; i < 1000; ++i) {
    c.add(row("big", "r" + std::to_string(i)));
    EXPECT_LE(c.keys(), 3u);
  }
  c.add(row("small", "x"));
  c.add(row("big", "r1", "other"));  // another dataset of the same unit is apart
  auto txn = c.take();
  ASSERT_EQ(txn.whole.size(), 1u);
  EXPECT_EQ(txn.whole[0].object, "big");
  EXPECT_EQ(txn.whole[0].dataset, "items");
  ASSERT_EQ(txn.rows.size(), 2u);
  EXPECT_EQ(txn.rows[0].dataset, "other");
  EXPECT_EQ(txn.rows[1].object, "small");
}

TEST(CapturedRows, ARowChangedManyTimesIsOneRowOfItsDataset) {
  captured_rows c{{.per_dataset = 3, .total = 100, .datasets = 10}};
  for (int i = 0; i < 5000; ++i) {
    c.add(row("o1", "hot"));
    c.add(row("o1", "warm"));
  }
  EXPECT_LE(c.keys(), 3u);
  auto txn = c.take();
  EXPECT_TRUE(txn.whole.empty());
  ASSERT_EQ(txn.rows.size(), 2u);
  EXPECT_EQ(txn.rows[0].id, "hot");
  EXPECT_EQ(txn.rows[1].id, "warm");
}

TEST(CapturedRows, PastTheTotalBoundNewRowsTurnTheirDatasetsWhole) {
  captured_rows c{{.per_dataset = 10, .total = 20, .datasets = 1000}};
  for (int o = 0; o < 100; ++o) {
    for (int i = 0; i < 5; ++i) {
      c.add(row("o" + std::to_string(o), "r" + std::to_string(i)));
      EXPECT_LE(c.keys(), 20u);
    }
  }
  auto txn = c.take();
  EXPECT_FALSE(txn.everything);
  EXPECT_LE(txn.rows.size(), 20u);
  // Every dataset is either listed row by row, completely, or whole.
  EXPECT_EQ(txn.rows.size() / 5 + txn.whole.size(), 100u);
  EXPECT_EQ(txn.rows.size() % 5, 0u);
}

TEST(CapturedRows, PastTheDatasetBoundOnlyTheFactIsKept) {
  captured_rows c{{.per_dataset = 10, .total = 1000, .datasets = 50}};
  for (int o = 0; o < 100000; ++o) {
    c.add(row("o" + std::to_string(o), "r"));
    ASSERT_LE(c.keys(), 50u);
  }
  EXPECT_FALSE(c.empty());
  auto txn = c.take();
  EXPECT_TRUE(txn.everything);
  EXPECT_TRUE(txn.rows.empty());
  EXPECT_TRUE(txn.whole.empty());
  // The next transaction starts afresh.
  c.add(row("o1", "a"));
  auto next = c.take();
  EXPECT_FALSE(next.everything);
  EXPECT_EQ(next.rows.size(), 1u);
}

TEST(CapturedRows, AChangeNamingNoRowsRefreshesEverythingAndKeepsNothingElse) {
  // A TRUNCATE of weir_records among row changes: the rows before and after it are dropped.
  captured_rows c;
  c.add(row("o1", "a"));
  c.add_everything();
  EXPECT_FALSE(c.empty());
  EXPECT_EQ(c.keys(), 0u);
  c.add(row("o2", "b"));
  EXPECT_EQ(c.keys(), 0u);
  auto txn = c.take();
  EXPECT_TRUE(txn.everything);
  EXPECT_TRUE(txn.rows.empty());
  EXPECT_TRUE(txn.whole.empty());
}

TEST(CapturedRows, ClearForgetsATransaction) {
  captured_rows c{{.per_dataset = 1, .total = 10, .datasets = 1}};
  c.add(row("o1", "a"));
  c.add(row("o2", "a"));  // past the dataset bound
  c.clear();
  EXPECT_TRUE(c.empty());
  auto txn = c.take();
  EXPECT_FALSE(txn.everything);
  EXPECT_TRUE(txn.rows.empty());
}

}  // namespace
}  // namespace weir::store

// Rendezvous ownership: deterministic, order-independent, balanced, and minimal movement when
// the member list changes.
#include "core/rendezvous.hpp"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

namespace weir::core {
namespace {

std::string owner(const std::vector<std::string>& m, const std::string& unit) {
  return m[rendezvous_owner(m, unit)];
}

TEST(Rendezvous, StableHashIsFixed) {
  // Every node must agree: pin the function so a change to it is a visible, deliberate break.
  EXPECT_EQ(stable_hash(""), 0xf52a15e9a9b5e89bULL);
  EXPECT_EQ(stable_hash("weir"), 0xfb3884be95259539ULL);
  EXPECT_NE(stable_hash("a"), stable_hash("b"));
  // And so ownership itself: a cluster upgraded node by node must keep agreeing.
  EXPECT_EQ(rendezvous_owner({"weir-0", "weir-1", "weir-2"}, unit_name("demo", "main")), 0u);
}

TEST(Rendezvous, UnitNamesDoNotRunTogether) {
  EXPECT_NE(unit_name("ab", "c"), unit_name("a", "bc"));
  EXPECT_NE(unit_name("a", ""), unit_name("", "a"));
}

TEST(Rendezvous, OrderOfMembersDoesNotMatter) {
  std::vector<std::string> a{"n1", "n2", "n3"};
  std::vector<std::string> b{"n3", "n1", "n2"};
  for (int i = 0; i < 500; ++i) {
    auto u = unit_name("space", "obj-" + std::to_string(i));
    EXPECT_EQ(owner(a, u), owner(b, u));
  }
}

TEST(Rendezvous, SpreadsUnitsEvenly) {
  std::vector<std::string> m{"weir-0", "weir-1", "weir-2"};
  std::map<std::string, int> count;
  const int n = 30000;
  for (int i = 0; i < n; ++i) {
    ++count[owner(m, unit_name("s", std::to_string(i)))];
  }
  for (auto& [id, c] : count) {
    EXPECT_GT(c, n / 3 - n / 30) << id;
    EXPECT_LT(c, n / 3 + n / 30) << id;
  }
}

TEST(Rendezvous, AddingAMemberMovesOnlyUnitsItWins) {
  std::vector<std::string> before{"n1", "n2", "n3"};
  std::vector<std::string> after{"n1", "n2", "n3", "n4"};
  int moved = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    auto u = unit_name("s", std::to_string(i));
    auto o1 = owner(before, u);
    auto o2 = owner(after, u);
    if (o1 != o2) {
      EXPECT_EQ(o2, "n4");  // nothing moves between the old members
      ++moved;
    }
  }
  EXPECT_GT(moved, n / 4 - n / 25);
  EXPECT_LT(moved, n / 4 + n / 25);
}

TEST(Rendezvous, SingleMemberOwnsEverything) {
  std::vector<std::string> m{"only"};
  EXPECT_EQ(rendezvous_owner(m, unit_name("a", "b")), 0u);
}

}  // namespace
}  // namespace weir::core

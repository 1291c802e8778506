// Tests for core/change_set: item identity, typed identity equality, and both §5.1 algorithms.
#include "core/change_set.hpp"

#include <gtest/gtest.h>

#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

boost::json::value j(std::string_view text) {
  return boost::json::parse(text);
}
boost::json::array arr(std::string_view text) {
  return boost::json::parse(text).as_array();
}
std::string s(const boost::json::array& a) {
  return boost::json::serialize(a);
}

TEST(ItemIdentity, FindsIdCaseInsensitively) {
  for (const char* text : {R"({"id":1})", R"({"Id":1})", R"({"ID":1})", R"({"iD":1})"}) {
    const auto item = j(text);
    const auto* id = item_identity(item);
    ASSERT_NE(id, nullptr) << text;
    EXPECT_EQ(id->as_int64(), 1);
  }
  const auto item = j(R"({"name":"x","Id":"abc","v":2})");
  ASSERT_NE(item_identity(item), nullptr);
  EXPECT_EQ(item_identity(item)->as_string(), "abc");
}

TEST(ItemIdentity, RequiresExactlyOneIdMember) {
  EXPECT_EQ(item_identity(j(R"({"id":1,"Id":2})")), nullptr);
  EXPECT_EQ(item_identity(j(R"({"name":"x"})")), nullptr);
  EXPECT_EQ(item_identity(j(R"({"ids":1})")), nullptr);
  EXPECT_EQ(item_identity(j(R"({"_id":1})")), nullptr);
}

TEST(ItemIdentity, NonObjectsHaveNoIdentity) {
  EXPECT_EQ(item_identity(j("1")), nullptr);
  EXPECT_EQ(item_identity(j(R"("id")")), nullptr);
  EXPECT_EQ(item_identity(j(R"([{"id":1}])")), nullptr);
  EXPECT_EQ(item_identity(j("null")), nullptr);
}

TEST(ItemIdentity, AcceptsStringBoolAndSafeNumbers) {
  EXPECT_NE(item_identity(j(R"({"id":""})")), nullptr);
  EXPECT_NE(item_identity(j(R"({"id":true})")), nullptr);
  EXPECT_NE(item_identity(j(R"({"id":false})")), nullptr);
  EXPECT_NE(item_identity(j(R"({"id":-5})")), nullptr);
  EXPECT_NE(item_identity(j(R"({"id":1.5})")), nullptr);
  EXPECT_NE(item_identity(j(R"({"id":9007199254740991})")), nullptr);
  EXPECT_NE(item_identity(j(R"({"id":-9007199254740991})")), nullptr);
  EXPECT_NE(item_identity(j(R"({"id":-4503599627370495.5})")), nullptr);  // trunc is safe
}

TEST(ItemIdentity, RejectsUnsafeNumbersAndOtherKinds) {
  EXPECT_EQ(item_identity(j(R"({"id":9007199254740992})")), nullptr);
  EXPECT_EQ(item_identity(j(R"({"id":-9007199254740992})")), nullptr);
  EXPECT_EQ(item_identity(j(R"({"id":18446744073709551615})")), nullptr);
  EXPECT_EQ(item_identity(j(R"({"id":1e300})")), nullptr);
  EXPECT_EQ(item_identity(j(R"({"id":null})")), nullptr);
  EXPECT_EQ(item_identity(j(R"({"id":{"a":1}})")), nullptr);
  EXPECT_EQ(item_identity(j(R"({"id":[1]})")), nullptr);
}

TEST(IdentityEqual, ComparesByTypeAndExactValue) {
  EXPECT_FALSE(identity_equal(j(R"("1")"), j("1")));
  EXPECT_FALSE(identity_equal(j(R"("abc")"), j(R"("ABC")")));
  EXPECT_FALSE(identity_equal(j("true"), j("1")));
  EXPECT_FALSE(identity_equal(j("1"), j("2")));
  EXPECT_TRUE(identity_equal(j(R"("abc")"), j(R"("abc")")));
  EXPECT_TRUE(identity_equal(j("true"), j("true")));
  EXPECT_FALSE(identity_equal(j("true"), j("false")));
}

TEST(IdentityEqual, NumbersCompareByValueAcrossKinds) {
  // Boost.JSON holds 1 as int64, 1.0 as double and 2^63 as uint64; JSON has one number type.
  EXPECT_TRUE(identity_equal(j("1"), j("1.0")));
  EXPECT_EQ(identity_hash(j("1")), identity_hash(j("1.0")));
  EXPECT_TRUE(identity_equal(boost::json::value(std::uint64_t{7}), boost::json::value(7)));
  EXPECT_EQ(identity_hash(boost::json::value(std::uint64_t{7})), identity_hash(j("7")));
  EXPECT_TRUE(identity_equal(j("0"), j("-0.0")));
  EXPECT_EQ(identity_hash(j("0")), identity_hash(j("-0.0")));
  EXPECT_FALSE(identity_equal(j("1"), j("1.5")));
}

TEST(ComputeChangeSet, WalksIdsInTheRequiredOrders) {
  const auto prev = arr(R"([{"id":1,"v":"a"},{"id":2,"v":"b"},{"id":3,"v":"c"},{"id":4,"v":"d"}])");
  const auto cur = arr(R"([{"id":5,"v":"e"},{"id":3,"v":"C"},{"id":2,"v":"b"},{"id":6,"v":"f"},
                           {"id":1,"v":"A"}])");
  const auto cs = compute_change_set(prev, cur);
  EXPECT_EQ(s(cs.added), R"([{"id":5,"v":"e"},{"id":6,"v":"f"}])");
  EXPECT_EQ(s(cs.replaced), R"([{"id":3,"v":"C"},{"id":1,"v":"A"}])");
  EXPECT_EQ(s(cs.removed), R"([{"id":4,"v":"d"}])");
}

TEST(ComputeChangeSet, RemovedFollowsPreviousOrderAndCarriesWholeItems) {
  const auto prev = arr(R"([{"id":"z","n":1},{"id":"a","n":2},{"id":"m","n":3}])");
  const auto cur = arr(R"([])");
  const auto cs = compute_change_set(prev, cur);
  EXPECT_TRUE(cs.added.empty());
  EXPECT_TRUE(cs.replaced.empty());
  EXPECT_EQ(s(cs.removed), s(prev));
}

TEST(ComputeChangeSet, EmptyBaselineAddsEverything) {
  const auto cur = arr(R"([{"id":1},{"id":2}])");
  const auto cs = compute_change_set(boost::json::array{}, cur);
  EXPECT_EQ(s(cs.added), s(cur));
  EXPECT_TRUE(cs.replaced.empty());
  EXPECT_TRUE(cs.removed.empty());
}

TEST(ComputeChangeSet, UnchangedSnapshotIsEmpty) {
  const auto a = arr(R"([{"id":1,"v":[1,2]},{"Id":"x","v":{"k":null}}])");
  const auto cs = compute_change_set(a, a);
  EXPECT_TRUE(cs.added.empty());
  EXPECT_TRUE(cs.replaced.empty());
  EXPECT_TRUE(cs.removed.empty());
}

TEST(ComputeChangeSet, IdentityIsTyped) {
  const auto cs = compute_change_set(arr(R"([{"id":1}])"), arr(R"([{"id":"1"}])"));
  EXPECT_EQ(s(cs.added), R"([{"id":"1"}])");
  EXPECT_EQ(s(cs.removed), R"([{"id":1}])");
  EXPECT_TRUE(cs.replaced.empty());
}

TEST(ComputeChangeSet, MemberOrderIsPartOfTheSerialization) {
  // Same members in another order are different bytes on the wire, so the item is replaced.
  const auto cs =
      compute_change_set(arr(R"([{"id":1,"a":1,"b":2}])"), arr(R"([{"id":1,"b":2,"a":1}])"));
  EXPECT_EQ(s(cs.replaced), R"([{"id":1,"b":2,"a":1}])");
}

TEST(ComputeChangeSet, MissingIdentityFallsBackToJsonSets) {
  // One item without an id sends the whole comparison to JSON sets: no replaced, ever.
  const auto prev = arr(R"([{"id":1,"v":1},{"name":"x"}])");
  const auto cur = arr(R"([{"id":1,"v":2},{"name":"x"},{"name":"y"}])");
  const auto cs = compute_change_set(prev, cur);
  EXPECT_EQ(s(cs.added), R"([{"id":1,"v":2},{"name":"y"}])");
  EXPECT_TRUE(cs.replaced.empty());
  EXPECT_EQ(s(cs.removed), R"([{"id":1,"v":1}])");
}

TEST(ComputeChangeSet, MissingIdentityInPreviousAlsoFallsBack) {
  const auto cs = compute_change_set(arr(R"([3,{"id":1,"v":1}])"), arr(R"([{"id":1,"v":2}])"));
  EXPECT_EQ(s(cs.added), R"([{"id":1,"v":2}])");
  EXPECT_TRUE(cs.replaced.empty());
  EXPECT_EQ(s(cs.removed), R"([3,{"id":1,"v":1}])");
}

TEST(ComputeChangeSet, DuplicateIdFallsBackToJsonSets) {
  const auto prev = arr(R"([{"id":1,"v":1},{"id":2,"v":1}])");
  const auto cur = arr(R"([{"id":1,"v":1},{"id":2,"v":2},{"id":2,"v":3}])");
  const auto cs = compute_change_set(prev, cur);
  EXPECT_EQ(s(cs.added), R"([{"id":2,"v":2},{"id":2,"v":3}])");
  EXPECT_TRUE(cs.replaced.empty());
  EXPECT_EQ(s(cs.removed), R"([{"id":2,"v":1}])");
}

TEST(ComputeChangeSet, DuplicateNumericIdAcrossKindsIsADuplicate) {
  // 1 and 1.0 are the same identity, so this array repeats an id and falls back.
  const auto cs = compute_change_set(arr(R"([{"id":1}])"), arr(R"([{"id":1},{"id":1.0}])"));
  EXPECT_EQ(s(cs.added), R"([{"id":1E0}])");
  EXPECT_TRUE(cs.replaced.empty());
  EXPECT_TRUE(cs.removed.empty());
}

TEST(ComputeChangeSet, JsonSetReportsEachRepeatedItem) {
  const auto cs = compute_change_set(arr(R"([1,2])"), arr(R"([3,3,2,2])"));
  EXPECT_EQ(s(cs.added), "[3,3]");
  EXPECT_EQ(s(cs.removed), "[1]");
  // Duplicate-count-only and order-only changes are invisible.
  const auto same = compute_change_set(arr(R"([1,2])"), arr(R"([2,1,1])"));
  EXPECT_TRUE(same.added.empty());
  EXPECT_TRUE(same.removed.empty());
}

TEST(AppendChangeSetJson, WritesAllThreeArrays) {
  std::string out = "x";
  append_change_set_json(out, change_set{});
  EXPECT_EQ(out, R"(x{"added":[],"replaced":[],"removed":[]})");

  change_set cs;
  cs.added.push_back(j(R"({"id":"a\"b"})"));
  cs.replaced.push_back(j("2"));
  cs.removed.push_back(j("null"));
  std::string out2;
  append_change_set_json(out2, cs);
  EXPECT_EQ(out2, R"({"added":[{"id":"a\"b"}],"replaced":[2],"removed":[null]})");
  EXPECT_NO_THROW(boost::json::parse(out2));
}

}  // namespace
}  // namespace weir::core

// Tests for core/change_ops (windowed-subscribe §8): the ops of a create and of a replace, the ops
// of a PATCH ($inc delivered as the $set of its result), and their encoding through a projection.
#include "core/change_ops.hpp"

#include <string>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

using boost::json::parse;

boost::json::object obj(const char* json) {
  return parse(json).as_object();
}

projection proj(const char* spec) {
  auto p = projection::parse(parse(spec));
  EXPECT_TRUE(p) << spec;
  return p ? std::move(p).value() : projection{};
}

/// The ops of PATCH `body` on `before`, with the after-document apply_update produces.
change_ops patch(const char* before, const char* body, boost::json::object* after_out = nullptr) {
  auto spec = parse_update(parse(body));
  EXPECT_TRUE(spec) << body << ": " << (spec ? "" : spec.error().message);
  if (!spec) {
    return {};
  }
  auto after = obj(before);
  auto applied = apply_update(*spec, after);
  EXPECT_TRUE(applied) << body;
  if (after_out) {
    *after_out = after;
  }
  return ops_for_update(*spec, after);
}

// ---- ops_for_replace -----------------------------------------------------------------------

TEST(ChangeOps, CreateIsOneRootSet) {
  auto after =
      obj(R"({"id":"m1","text":"hi","n":1,"tags":["a"],"o":{"x":null},"_ver":{"id":"v"}})");
  auto ops = ops_for_replace(nullptr, after);
  ASSERT_EQ(ops.ops.size(), 1U);
  EXPECT_FALSE(ops.empty());
  EXPECT_FALSE(ops.ops[0].unset);
  EXPECT_TRUE(ops.ops[0].path.empty());
  EXPECT_EQ(ops.json, R"([{"type":"$set","path":[],"payload":{"text":"hi","n":1,"tags":["a"],)"
                      R"("o":{"x":null}}}])");
}

TEST(ChangeOps, CreateKeepsOtherUnderscoreFields) {
  auto ops = ops_for_replace(nullptr, obj(R"({"id":"m1","_traces":[1],"a":1,"_ver":{"id":"v"}})"));
  EXPECT_EQ(ops.json, R"([{"type":"$set","path":[],"payload":{"_traces":[1],"a":1}}])");
}

TEST(ChangeOps, CreateOfOnlyServerFieldsIsEmpty) {
  auto ops = ops_for_replace(nullptr, obj(R"({"id":"m1","_ver":{"id":"v"}})"));
  EXPECT_TRUE(ops.empty());
  EXPECT_EQ(ops.json, "[]");
  EXPECT_EQ(encode_ops(ops, projection{}), "");
}

TEST(ChangeOps, Replace) {
  auto before = obj(R"({"id":"r","same":1,"chg":"x","gone":true,"obj":{"a":1},"_ver":{"id":"1"}})");
  auto after =
      obj(R"({"id":"r","same":1,"chg":"y","obj":{"a":1,"b":2},"new":[1],"_ver":{"id":"2"}})");
  auto ops = ops_for_replace(&before, after);
  ASSERT_EQ(ops.ops.size(), 2U);
  EXPECT_EQ(ops.json,
            R"([{"type":"$set","path":[],"payload":{"chg":"y","obj":{"a":1,"b":2},"new":[1]}},)"
            R"({"type":"$unset","path":[],"payload":{"gone":true}}])");
  EXPECT_FALSE(ops.ops[0].unset);
  EXPECT_TRUE(ops.ops[1].unset);
  EXPECT_TRUE(ops.ops[1].path.empty());
}

TEST(ChangeOps, ReplaceUnchangedIsEmpty) {
  auto before = obj(R"({"id":"r","a":1,"o":{"x":1,"y":[1,2]},"_ver":{"id":"1"}})");
  // Only `_ver` changed; member order inside an object does not count.
  auto after = obj(R"({"id":"r","a":1,"o":{"y":[1,2],"x":1},"_ver":{"id":"2"}})");
  auto ops = ops_for_replace(&before, after);
  EXPECT_TRUE(ops.empty());
  EXPECT_EQ(ops.json, "[]");
}

TEST(ChangeOps, ReplaceCountsANumberKindChange) {
  auto before = obj(R"({"id":"r","n":1,"m":2.0})");
  auto after = obj(R"({"id":"r","n":1.0,"m":2.0})");
  auto ops = ops_for_replace(&before, after);
  ASSERT_EQ(ops.ops.size(), 1U);
  ASSERT_TRUE(ops.ops[0].payload.is_object());
  const auto& payload = ops.ops[0].payload.as_object();
  ASSERT_EQ(payload.size(), 1U);
  ASSERT_TRUE(payload.contains("n"));
  EXPECT_TRUE(payload.at("n").is_double());
  EXPECT_EQ(ops.json, R"([{"type":"$set","path":[],"payload":{"n":1E0}}])");
}

TEST(ChangeOps, ReplaceOnlyRemovals) {
  auto before = obj(R"({"id":"r","a":1,"b":2,"_ver":{"id":"1"}})");
  auto after = obj(R"({"id":"r","_ver":{"id":"2"}})");
  EXPECT_EQ(ops_for_replace(&before, after).json,
            R"([{"type":"$unset","path":[],"payload":{"a":true,"b":true}}])");
}

TEST(ChangeOps, ReplaceIgnoresServerFields) {
  // A before without `_ver` and an after that gains one: still nothing.
  auto before = obj(R"({"id":"r","a":1})");
  auto after = obj(R"({"id":"r","a":1,"_ver":{"id":"2"}})");
  EXPECT_TRUE(ops_for_replace(&before, after).empty());
  // Nor does `_ver` going away unset it.
  EXPECT_TRUE(ops_for_replace(&after, before).empty());
}

TEST(ChangeOps, DottedTopLevelKeysGetTheirOwnOp) {
  auto create = ops_for_replace(nullptr, obj(R"({"id":"r","x":2,"a.b":1,"y":3})"));
  EXPECT_EQ(create.json, R"([{"type":"$set","path":[],"payload":{"x":2,"y":3}},)"
                         R"({"type":"$set","path":["a.b"],"payload":1}])");
  ASSERT_EQ(create.ops.size(), 2U);
  EXPECT_EQ(create.ops[1].path, (std::vector<std::string>{"a.b"}));

  auto only_dotted = ops_for_replace(nullptr, obj(R"({"id":"r","a.b":1})"));
  EXPECT_EQ(only_dotted.json, R"([{"type":"$set","path":["a.b"],"payload":1}])");

  auto before = obj(R"({"id":"r","a.b":1,"c.d":2,"e":3,"f":4})");
  auto after = obj(R"({"id":"r","c.d":5,"f":4})");
  auto replace = ops_for_replace(&before, after);
  EXPECT_EQ(replace.json, R"([{"type":"$set","path":["c.d"],"payload":5},)"
                          R"({"type":"$unset","path":["a.b"]},)"
                          R"({"type":"$unset","path":[],"payload":{"e":true}}])");
  ASSERT_EQ(replace.ops.size(), 3U);
  EXPECT_TRUE(replace.ops[1].payload.is_null());
}

// ---- ops_for_update ------------------------------------------------------------------------

TEST(ChangeOps, UpdateSetUnsetInc) {
  boost::json::object after;
  auto ops = patch(R"({"id":"r","n":3,"c":1,"_ver":{"id":"1"}})",
                   R"({"$set":{"a.b":1},"$unset":{"c":true},"$inc":{"n":2}})", &after);
  EXPECT_EQ(after, obj(R"({"id":"r","n":5,"_ver":{"id":"1"},"a":{"b":1}})"));
  ASSERT_EQ(ops.ops.size(), 3U);
  EXPECT_EQ(ops.ops[0].path, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(ops.ops[0].unset);
  EXPECT_TRUE(ops.ops[1].unset);
  EXPECT_TRUE(ops.ops[1].payload.is_null());
  EXPECT_FALSE(ops.ops[2].unset);
  EXPECT_EQ(ops.ops[2].payload, 5);
  EXPECT_EQ(ops.json, R"([{"type":"$set","path":["a","b"],"payload":1},)"
                      R"({"type":"$unset","path":["c"]},)"
                      R"({"type":"$set","path":["n"],"payload":5}])");
}

TEST(ChangeOps, IncIsTheResultingValue) {
  // Of a missing field: the increment itself.
  EXPECT_EQ(patch(R"({"id":"r"})", R"({"$inc":{"s.count":4}})").json,
            R"([{"type":"$set","path":["s","count"],"payload":4}])");
  // Double arithmetic.
  EXPECT_EQ(patch(R"({"id":"r","x":1.5})", R"({"$inc":{"x":1}})").json,
            R"([{"type":"$set","path":["x"],"payload":2.5E0}])");
  // Negative increments.
  EXPECT_EQ(patch(R"({"id":"r","x":1})", R"({"$inc":{"x":-3}})").json,
            R"([{"type":"$set","path":["x"],"payload":-2}])");
}

TEST(ChangeOps, UpdatePayloadsAreTheAssignedValues) {
  EXPECT_EQ(patch(R"({"id":"r"})", R"({"$set":{"reactions.👍.acc1":true,"o":{"k":[1,null]}}})").json,
            R"([{"type":"$set","path":["reactions","👍","acc1"],"payload":true},)"
            R"({"type":"$set","path":["o"],"payload":{"k":[1,null]}}])");
  EXPECT_EQ(patch(R"({"id":"r","q":"x"})", R"({"$set":{"q":null}})").json,
            R"([{"type":"$set","path":["q"],"payload":null}])");
  // $unset of a missing path is still reported as given.
  EXPECT_EQ(patch(R"({"id":"r"})", R"({"$unset":{"nope.x":1}})").json,
            R"([{"type":"$unset","path":["nope","x"]}])");
}

TEST(ChangeOps, PathSegmentsAreEscaped) {
  EXPECT_EQ(patch(R"({"id":"r"})", R"({"$set":{"q\"k.b\\s":1}})").json,
            R"([{"type":"$set","path":["q\"k","b\\s"],"payload":1}])");
}

// ---- encode_ops ----------------------------------------------------------------------------

TEST(ChangeOps, EncodeWithoutProjectionIsTheJson) {
  auto ops = patch(R"({"id":"r","n":1})", R"({"$set":{"a":1},"$inc":{"n":1}})");
  EXPECT_EQ(encode_ops(ops, projection{}), ops.json);
  auto create = ops_for_replace(nullptr, obj(R"({"id":"r","a":1,"b.c":2})"));
  EXPECT_EQ(encode_ops(create, projection{}), create.json);
}

TEST(ChangeOps, EncodeDropsOpsOutsideTheProjection) {
  auto ops = patch(R"({"id":"r"})", R"({"$set":{"a.x":1,"b":2},"$unset":{"c":1}})");
  EXPECT_EQ(encode_ops(ops, proj(R"({"a":0})")),
            R"([{"type":"$set","path":["b"],"payload":2},{"type":"$unset","path":["c"]}])");
  EXPECT_EQ(encode_ops(ops, proj(R"({"b":1})")), R"([{"type":"$set","path":["b"],"payload":2}])");
  EXPECT_EQ(encode_ops(ops, proj(R"({"a.x":1,"c":1})")),
            R"([{"type":"$set","path":["a","x"],"payload":1},{"type":"$unset","path":["c"]}])");
  // Everything outside: nothing at all, so the caller omits `ops`.
  EXPECT_EQ(encode_ops(ops, proj(R"({"z":1})")), "");
  EXPECT_EQ(encode_ops(ops, proj(R"({"a":0,"b":0,"c":0})")), "");
}

TEST(ChangeOps, EncodeFiltersRootMultiOpPerKey) {
  auto create = ops_for_replace(nullptr, obj(R"({"id":"r","a":1,"b":2,"c":3,"_t":4})"));
  EXPECT_EQ(encode_ops(create, proj(R"({"a":1,"c":1})")),
            R"([{"type":"$set","path":[],"payload":{"a":1,"c":3}}])");
  EXPECT_EQ(encode_ops(create, proj(R"({"b":0})")),
            R"([{"type":"$set","path":[],"payload":{"a":1,"c":3}}])");
  EXPECT_EQ(encode_ops(create, proj(R"({"_t":1,"a":0,"b":0,"c":0})")),
            R"([{"type":"$set","path":[],"payload":{"_t":4}}])");
  EXPECT_EQ(encode_ops(create, proj(R"({"z":1})")), "");

  auto before = obj(R"({"id":"r","a":1,"b":2,"c":3})");
  auto after = obj(R"({"id":"r","a":9,"b":8})");
  auto replace = ops_for_replace(&before, after);
  EXPECT_EQ(encode_ops(replace, proj(R"({"a":1,"c":1})")),
            R"([{"type":"$set","path":[],"payload":{"a":9}},)"
            R"({"type":"$unset","path":[],"payload":{"c":true}}])");
  EXPECT_EQ(encode_ops(replace, proj(R"({"b":1})")),
            R"([{"type":"$set","path":[],"payload":{"b":8}}])");
  EXPECT_EQ(encode_ops(replace, proj(R"({"c":0,"a":0})")),
            R"([{"type":"$set","path":[],"payload":{"b":8}}])");
}

TEST(ChangeOps, EncodeProjectsPartlyCoveredPayloads) {
  auto ops = patch(R"({"id":"r"})", R"({"$set":{"a":{"x":1,"y":2},"l":[{"x":1,"y":2},3]}})");
  EXPECT_EQ(encode_ops(ops, proj(R"({"a.x":1,"l.y":1})")),
            R"([{"type":"$set","path":["a"],"payload":{"x":1}},)"
            R"({"type":"$set","path":["l"],"payload":[{"y":2}]}])");
  EXPECT_EQ(encode_ops(ops, proj(R"({"a.x":0})")),
            R"([{"type":"$set","path":["a"],"payload":{"y":2}},)"
            R"({"type":"$set","path":["l"],"payload":[{"x":1,"y":2},3]}])");
  // A partly covered path whose value holds none of the covered fields is dropped.
  auto scalar = patch(R"({"id":"r"})", R"({"$set":{"a":5}})");
  EXPECT_EQ(encode_ops(scalar, proj(R"({"a.x":1})")), "");

  // The same in a root multi-set.
  auto create = ops_for_replace(nullptr, obj(R"({"id":"r","a":{"x":1,"y":2},"b":1,"c":{"y":1}})"));
  EXPECT_EQ(encode_ops(create, proj(R"({"a.x":1,"c.x":1})")),
            R"([{"type":"$set","path":[],"payload":{"a":{"x":1}}}])");

  // A partly covered $unset stays whole: there is no payload to narrow.
  auto unset = patch(R"({"id":"r","a":{"x":1}})", R"({"$unset":{"a":1}})");
  EXPECT_EQ(encode_ops(unset, proj(R"({"a.x":1})")), R"([{"type":"$unset","path":["a"]}])");
  auto before = obj(R"({"id":"r","a":{"x":1},"b":1})");
  auto after = obj(R"({"id":"r","b":1})");
  EXPECT_EQ(encode_ops(ops_for_replace(&before, after), proj(R"({"a.x":1})")),
            R"([{"type":"$unset","path":[],"payload":{"a":true}}])");
}

TEST(ChangeOps, EncodeDeepOpsUnderAnIncludedField) {
  auto ops = patch(R"({"id":"r"})", R"({"$set":{"reactions.x.acc":true,"text":"t"}})");
  EXPECT_EQ(encode_ops(ops, proj(R"({"reactions":1})")),
            R"([{"type":"$set","path":["reactions","x","acc"],"payload":true}])");
  EXPECT_EQ(encode_ops(ops, proj(R"({"reactions.y":1,"text":1})")),
            R"([{"type":"$set","path":["text"],"payload":"t"}])");
}

}  // namespace
}  // namespace weir::core

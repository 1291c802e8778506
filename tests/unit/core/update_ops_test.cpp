// Tests for core/update_ops: PATCH body grammar, apply semantics, $inc arithmetic, atomicity.
#include "core/update_ops.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

using boost::json::parse;

struct parse_error_case {
  const char* body;
  const char* code;
  const char* detail_key;  // nullptr: don't check details
  const char* detail_value;
};

TEST(ParseUpdate, ErrorTable) {
  const parse_error_case cases[] = {
      {"[]", "request.not_object", nullptr, nullptr},
      {"1", "request.not_object", nullptr, nullptr},
      {"null", "request.not_object", nullptr, nullptr},
      {"{}", "update.empty", nullptr, nullptr},
      {R"({"$set":{}})", "update.empty", nullptr, nullptr},
      {R"({"$set":{},"$unset":{}})", "update.empty", nullptr, nullptr},
      {R"({"$push":{"a":1}})", "update.unknown_operator", "operator", "$push"},
      {R"({"a":1})", "update.unknown_operator", "operator", "a"},
      {R"({"$set":{"a":1},"name":"x"})", "update.unknown_operator", "operator", "name"},
      {R"({"$set":1})", "update.invalid", "operator", "$set"},
      {R"({"$unset":["a"]})", "update.invalid", "operator", "$unset"},
      {R"({"$inc":null})", "update.invalid", "operator", "$inc"},
      {R"({"$inc":{"n":"2"}})", "update.invalid", "path", "n"},
      {R"({"$inc":{"n":null}})", "update.invalid", "path", "n"},
      {R"({"$set":{"id":"x"}})", "update.forbidden_field", "path", "id"},
      {R"({"$unset":{"_ver":1}})", "update.forbidden_field", "path", "_ver"},
      {R"({"$set":{"_ver.id":"x"}})", "update.forbidden_field", "path", "_ver.id"},
      {R"({"$inc":{"id.n":1}})", "update.forbidden_field", "path", "id.n"},
      {R"({"$set":{"a..b":1}})", "request.invalid_field", "field", "a..b"},
      {R"({"$set":{"":1}})", "request.invalid_field", "field", ""},
      {R"({"$set":{"a":1},"$unset":{"a":true}})", "update.conflict", "path", "a"},
      {R"({"$set":{"a.b":1},"$inc":{"a.b":1}})", "update.conflict", "path", "a.b"},
      {R"({"$set":{"a":{}},"$inc":{"a.n":1}})", "update.conflict", "path", "a.n"},
      {R"({"$set":{"a.b":1,"a":2}})", "update.conflict", "path", "a"},
  };
  for (const auto& c : cases) {
    auto spec = parse_update(parse(c.body));
    ASSERT_FALSE(spec) << c.body;
    EXPECT_EQ(spec.error().code, c.code) << c.body;
    EXPECT_FALSE(spec.error().message.empty()) << c.body;
    if (c.detail_key != nullptr) {
      const auto* d = spec.error().details.if_contains(c.detail_key);
      ASSERT_NE(d, nullptr) << c.body;
      EXPECT_EQ(*d, c.detail_value) << c.body;
    }
  }
}

TEST(ParseUpdate, AcceptsNearMissesOfForbiddenFields) {
  // Only the "id"/"_ver" segments themselves are server-owned.
  auto spec = parse_update(parse(R"({"$set":{"idx":1,"a.id":2,"_version":3,"x._ver":4}})"));
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->ops.size(), 4U);
}

TEST(ParseUpdate, ParsesOpsWithSplitPaths) {
  auto spec = parse_update(parse(R"({"$set":{"a.b":1},"$unset":{"c":true},"$inc":{"n":2}})"));
  ASSERT_TRUE(spec);
  ASSERT_EQ(spec->ops.size(), 3U);
  EXPECT_EQ(spec->ops[0].kind, update_op_kind::set);
  EXPECT_EQ(spec->ops[0].path.segments(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(spec->ops[0].value, 1);
  EXPECT_EQ(spec->ops[1].kind, update_op_kind::unset);
  EXPECT_EQ(spec->ops[2].kind, update_op_kind::inc);
  EXPECT_EQ(spec->ops[2].value, 2);
}

struct apply_case {
  const char* doc;
  const char* update;
  const char* expected;
};

TEST(ApplyUpdate, Table) {
  const apply_case cases[] = {
      // $set: replace, add, create intermediates, nested objects as values
      {R"({"id":"r","a":1})", R"({"$set":{"a":2}})", R"({"id":"r","a":2})"},
      {R"({"id":"r"})", R"({"$set":{"a.b.c":true}})", R"({"id":"r","a":{"b":{"c":true}}})"},
      {R"({"id":"r","a":{"x":1}})", R"({"$set":{"a.y":{"z":[1]}}})",
       R"({"id":"r","a":{"x":1,"y":{"z":[1]}}})"},
      {R"({"id":"r","a":{"b":1}})", R"({"$set":{"a.b":null}})", R"({"id":"r","a":{"b":null}})"},
      // $set on arrays by index, with padding past the end
      {R"({"id":"r","l":[1,2]})", R"({"$set":{"l.1":9}})", R"({"id":"r","l":[1,9]})"},
      {R"({"id":"r","l":[1]})", R"({"$set":{"l.3":9}})", R"({"id":"r","l":[1,null,null,9]})"},
      {R"({"id":"r","l":[{"k":1}]})", R"({"$set":{"l.0.k":2}})", R"({"id":"r","l":[{"k":2}]})"},
      {R"({"id":"r","l":[]})", R"({"$set":{"l.1.k":2}})", R"({"id":"r","l":[null,{"k":2}]})"},
      // $unset: remove, keep member order, missing is a no-op, arrays get null
      {R"({"id":"r","a":1,"b":2,"c":3})", R"({"$unset":{"a":1}})", R"({"id":"r","b":2,"c":3})"},
      {R"({"id":"r","a":{"b":1,"c":2}})", R"({"$unset":{"a.b":""}})", R"({"id":"r","a":{"c":2}})"},
      {R"({"id":"r"})", R"({"$unset":{"a.b.c":1}})", R"({"id":"r"})"},
      {R"({"id":"r","a":5})", R"({"$unset":{"a.b":1}})", R"({"id":"r","a":5})"},
      {R"({"id":"r","l":[1,2]})", R"({"$unset":{"l.0":1}})", R"({"id":"r","l":[null,2]})"},
      {R"({"id":"r","l":[1,2]})", R"({"$unset":{"l.5":1}})", R"({"id":"r","l":[1,2]})"},
      {R"({"id":"r","l":[1,2]})", R"({"$unset":{"l.x":1}})", R"({"id":"r","l":[1,2]})"},
      // $inc: add, create missing, nested
      {R"({"id":"r","n":1})", R"({"$inc":{"n":2}})", R"({"id":"r","n":3})"},
      {R"({"id":"r"})", R"({"$inc":{"n":-2}})", R"({"id":"r","n":-2})"},
      {R"({"id":"r"})", R"({"$inc":{"s.n":1.5}})", R"({"id":"r","s":{"n":1.5}})"},
      {R"({"id":"r","n":1})", R"({"$inc":{"n":0.5}})", R"({"id":"r","n":1.5})"},
      // several ops together
      {R"({"id":"r","a":{"x":1},"n":1,"gone":true})",
       R"({"$set":{"a.y":2,"b":"s"},"$unset":{"gone":1},"$inc":{"n":1}})",
       R"({"id":"r","a":{"x":1,"y":2},"n":2,"b":"s"})"},
  };
  for (const auto& c : cases) {
    auto spec = parse_update(parse(c.update));
    ASSERT_TRUE(spec) << c.update << ": " << spec.error().message;
    auto doc = parse(c.doc).as_object();
    auto ok = apply_update(*spec, doc);
    ASSERT_TRUE(ok) << c.doc << " " << c.update << ": " << ok.error().message;
    // Compare serialized text: member order matters for stored records.
    EXPECT_EQ(boost::json::serialize(doc), boost::json::serialize(parse(c.expected)))
        << c.doc << " " << c.update;
  }
}

// Found by fuzzing (fuzz/regressions/write_body): an index far past an array's end padded it
// with that many nulls, so a few bytes of PATCH could allocate gigabytes. Padding is bounded.
TEST(ApplyUpdate, PaddingAnArrayIsBounded) {
  auto doc = parse(R"({"id":"r","l":[1,2]})").as_object();
  const auto before = boost::json::serialize(doc);
  for (const char* update : {R"({"$set":{"l.999999999":1}})", R"({"$inc":{"l.1027":1}})",
                             R"({"$set":{"l.99999999999.k":1}})"}) {
    auto spec = parse_update(parse(update));
    ASSERT_TRUE(spec) << update;
    auto r = apply_update(*spec, doc);
    ASSERT_FALSE(r) << update;
    EXPECT_EQ(r.error().code, "update.index_out_of_range") << update;
    EXPECT_EQ(boost::json::serialize(doc), before) << "changed by a refused update: " << update;
  }
  // Up to the bound it pads: 2 elements, then 1024 nulls, then the value at index 1026.
  auto spec = parse_update(parse(R"({"$set":{"l.1026":7}})"));
  ASSERT_TRUE(spec);
  ASSERT_TRUE(apply_update(*spec, doc));
  ASSERT_EQ(doc.at("l").as_array().size(), 1027u);
  EXPECT_EQ(doc.at("l").as_array()[1026], 7);
  EXPECT_TRUE(doc.at("l").as_array()[1025].is_null());
}

TEST(ApplyUpdate, IncKeepsIntegerKinds) {
  auto doc = parse(R"({"id":"r","n":1})").as_object();
  ASSERT_TRUE(apply_update(parse_update(parse(R"({"$inc":{"n":2}})")).value(), doc));
  EXPECT_TRUE(doc.at("n").is_int64());
  EXPECT_EQ(doc.at("n").as_int64(), 3);

  ASSERT_TRUE(apply_update(parse_update(parse(R"({"$inc":{"n":1.0}})")).value(), doc));
  EXPECT_TRUE(doc.at("n").is_double());
  EXPECT_EQ(doc.at("n").as_double(), 4.0);
}

TEST(ApplyUpdate, IncOverflowBecomesDouble) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  {
    boost::json::object doc{{"id", "r"}, {"n", max}};
    update_spec spec{{update_op{update_op_kind::inc, json_path::parse("n").value(), 1}}};
    ASSERT_TRUE(apply_update(spec, doc));
    ASSERT_TRUE(doc.at("n").is_double());
    EXPECT_DOUBLE_EQ(doc.at("n").as_double(), 9223372036854775808.0);
  }
  {
    boost::json::object doc{{"id", "r"}, {"n", min}};
    update_spec spec{{update_op{update_op_kind::inc, json_path::parse("n").value(), -1}}};
    ASSERT_TRUE(apply_update(spec, doc));
    ASSERT_TRUE(doc.at("n").is_double());
    EXPECT_DOUBLE_EQ(doc.at("n").as_double(), -9223372036854775809.0);
  }
  {
    // Just below the edge stays an int64.
    boost::json::object doc{{"id", "r"}, {"n", max - 1}};
    update_spec spec{{update_op{update_op_kind::inc, json_path::parse("n").value(), 1}}};
    ASSERT_TRUE(apply_update(spec, doc));
    ASSERT_TRUE(doc.at("n").is_int64());
    EXPECT_EQ(doc.at("n").as_int64(), max);
  }
}

TEST(ApplyUpdate, IncWithUint64PicksNarrowestKind) {
  const std::uint64_t umax = std::numeric_limits<std::uint64_t>::max();
  auto run = [](boost::json::value start, boost::json::value by) {
    boost::json::object doc{{"id", "r"}, {"n", start}};
    update_spec spec{{update_op{update_op_kind::inc, json_path::parse("n").value(), by}}};
    EXPECT_TRUE(apply_update(spec, doc));
    return doc.at("n");
  };
  auto back_to_int = run(std::uint64_t{9223372036854775808ULL}, std::int64_t{-1});
  EXPECT_TRUE(back_to_int.is_int64());
  EXPECT_EQ(back_to_int.as_int64(), std::numeric_limits<std::int64_t>::max());
  auto still_uint = run(umax - 1, std::int64_t{1});
  EXPECT_TRUE(still_uint.is_uint64());
  EXPECT_EQ(still_uint.as_uint64(), umax);
  auto overflow = run(umax, std::uint64_t{1});
  EXPECT_TRUE(overflow.is_double());
  EXPECT_DOUBLE_EQ(overflow.as_double(), 18446744073709551616.0);
}

struct mismatch_case {
  const char* doc;
  const char* update;
  const char* path;
};

TEST(ApplyUpdate, TypeMismatchLeavesDocUnchanged) {
  const mismatch_case cases[] = {
      {R"({"id":"r","n":"7"})", R"({"$inc":{"n":1}})", "n"},
      {R"({"id":"r","n":null})", R"({"$inc":{"n":1}})", "n"},
      {R"({"id":"r","n":[1]})", R"({"$inc":{"n":1}})", "n"},
      {R"({"id":"r","a":5})", R"({"$set":{"a.b":1}})", "a.b"},
      {R"({"id":"r","a":"s"})", R"({"$inc":{"a.b.c":1}})", "a.b.c"},
      {R"({"id":"r","a":null})", R"({"$set":{"a.b":1}})", "a.b"},
      {R"({"id":"r","l":[1]})", R"({"$set":{"l.x":1}})", "l.x"},
      {R"({"id":"r","l":[1]})", R"({"$set":{"l.0.x":1}})", "l.0.x"},
      // Atomicity: earlier ops in the same update that would succeed are not applied.
      {R"({"id":"r","ok":1,"a":5})",
       R"({"$set":{"ok":2,"fresh.x":1},"$unset":{"ok2":1},"$inc":{"a.b":1}})", "a.b"},
      {R"({"id":"r","a":{"x":1},"t":true})",
       R"({"$unset":{"a.x":1},"$set":{"new":1},"$inc":{"t":1}})", "t"},
  };
  for (const auto& c : cases) {
    auto spec = parse_update(parse(c.update));
    ASSERT_TRUE(spec) << c.update;
    auto doc = parse(c.doc).as_object();
    const auto before = boost::json::serialize(doc);
    auto res = apply_update(*spec, doc);
    ASSERT_FALSE(res) << c.doc << " " << c.update;
    EXPECT_EQ(res.error().code, "update.type_mismatch");
    EXPECT_EQ(res.error().details.at("path"), c.path);
    EXPECT_EQ(boost::json::serialize(doc), before) << c.update;
  }
}

}  // namespace
}  // namespace weir::core

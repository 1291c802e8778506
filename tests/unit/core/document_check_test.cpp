// Tests for core/document_check and the limits it applies where documents are built: the checks
// on trees and on text, PATCH update ops and JSON Patch under the same bounds (issue 22).
#include "core/document_check.hpp"

#include <chrono>
#include <string>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/hub_codec.hpp"
#include "core/json_diff.hpp"
#include "core/json_patch.hpp"
#include "core/record_rules.hpp"
#include "core/update_ops.hpp"
#include "core/windowed_request.hpp"

namespace weir::core {
namespace {

std::string nested(std::size_t depth, const std::string& leaf = "1") {
  std::string s;
  for (std::size_t i = 0; i < depth; ++i) {
    s += "{\"a\":";
  }
  s += leaf;
  s.append(depth, '}');
  return s;
}

std::string code_of(const result<void>& r) {
  return r ? "" : r.error().code;
}

TEST(DocumentCheck, DepthUpToTheLimitPassesOneMoreIsRefused) {
  auto ok = boost::json::parse(nested(max_document_depth), {}, document_parse_options());
  EXPECT_TRUE(check_document(ok, {}));
  EXPECT_TRUE(check_document_text(nested(max_document_depth), {}));
  // A document one deeper cannot even be parsed with the document options.
  auto deep = parse_json(nested(max_document_depth + 1));
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().code, "record.too_deep");
  EXPECT_EQ(code_of(check_document_text(nested(max_document_depth + 1), {})), "record.too_deep");
}

TEST(DocumentCheck, HugeDepthInTextIsRefusedWithoutRecursion) {
  // 1,000,000 levels: a recursive walker would overflow the stack long before the end.
  std::string text(1000000, '[');
  EXPECT_EQ(code_of(check_document_text(text, {})), "record.too_deep");
  auto parsed = parse_json(text);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code, "record.too_deep");
}

TEST(DocumentCheck, NumbersJsonCannotCarryAreRefused) {
  for (const char* text : {R"({"n":1e400})", R"({"n":-1e400})", R"({"a":[1,{"b":1e999}]})"}) {
    auto v = parse_json(text);
    ASSERT_TRUE(v) << text;
    auto r = check_document(v.value(), {});
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code, "record.invalid_number") << text;
    EXPECT_EQ(code_of(check_document_text(text, {})), "record.invalid_number") << text;
  }
  // A 10,000-digit integer is one Boost.JSON makes a double: infinity.
  std::string big = "{\"n\":" + std::string(10000, '9') + "}";
  EXPECT_EQ(code_of(check_document_text(big, {})), "record.invalid_number");
  // The largest finite double is fine.
  EXPECT_TRUE(check_document_text(R"({"n":1.7976931348623157e308})", {}));
}

TEST(DocumentCheck, ErrorDetailsPointAtTheValue) {
  auto v = parse_json(R"({"a":[0,{"b":1e400}]})");
  auto r = check_document(v.value(), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(boost::json::serialize(r.error().details.at("path")), R"("/a/1/b")");
}

TEST(DocumentCheck, MembersKeysAndSize) {
  document_limits small;
  small.max_members = 3;
  small.max_key_bytes = 4;
  small.max_bytes = 40;
  EXPECT_EQ(code_of(check_document_text(R"({"a":[1,2,3,4]})", small)), "record.too_many_members");
  EXPECT_EQ(code_of(check_document_text(R"({"a":1,"b":2,"c":3,"d":4})", small)),
            "record.too_many_members");
  EXPECT_EQ(code_of(check_document_text(R"({"abcde":1})", small)), "record.key_too_long");
  EXPECT_EQ(code_of(check_document_text(R"({"a":")" + std::string(50, 'x') + "\"}", small)),
            "record.too_large");
  EXPECT_TRUE(check_document_text(R"({"a":[1,2,3]})", small));
}

TEST(DocumentCheck, TextThatIsNotUtf8) {
  // Boost.JSON refuses these when parsing; the SAX check says why.
  EXPECT_EQ(code_of(check_document_text("{\"a\":\"\xff\"}", {})), "request.invalid_utf8");
  EXPECT_EQ(code_of(check_document_text("{\"\xc0\xaf\":1}", {})), "request.invalid_utf8");
  auto p = parse_json("{\"a\":\"\xed\xa0\x80\"}");  // a UTF-16 surrogate written as UTF-8
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, "request.invalid_utf8");
  EXPECT_EQ(parse_json("{\"a\":").error().code, "request.bad_json");
}

TEST(RecordIds, NotUtf8IsRefused) {
  for (std::string id :
       {std::string{"\xff"}, std::string{"\xc0\xaf"}, std::string{"a\xed\xa0\x80"}}) {
    auto r = validate_id(id, "id");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, "request.invalid_utf8");
  }
  EXPECT_TRUE(validate_id("caf\xc3\xa9", "id"));
}

TEST(UpdateLimits, ADottedPathOfManySegmentsIsRefusedCheaply) {
  std::string path = "a";
  for (int i = 0; i < 120000; ++i) {
    path += ".a";
  }
  boost::json::object set;
  set[path] = 1;
  auto r = parse_update(boost::json::object{{"$set", set}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "record.too_deep");
}

TEST(UpdateLimits, ASetValueNestingPastTheLimitWhereItLandsIsRefused) {
  // 10 segments + a value 60 deep = 70 > 64.
  auto body = parse_json(R"({"$set":{"a.b.c.d.e.f.g.h.i.j":)" + nested(60) + "}}");
  ASSERT_TRUE(body);
  auto r = parse_update(body.value());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "record.too_deep");
  auto fine = parse_json(R"({"$set":{"a.b":)" + nested(10) + "}}");
  EXPECT_TRUE(parse_update(fine.value()));
}

TEST(UpdateLimits, IncPastTheLargestDoubleIsRefusedAndChangesNothing) {
  boost::json::object doc{{"n", 1.7e308}};
  auto spec = parse_update(boost::json::parse(R"({"$inc":{"n":1.7e308}})"));
  ASSERT_TRUE(spec);
  auto r = apply_update(spec.value(), doc);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "record.invalid_number");
  EXPECT_EQ(doc.at("n").as_double(), 1.7e308);
}

TEST(UpdateLimits, ManyPathsConflictCheckIsNotQuadratic) {
  boost::json::object set;
  for (int i = 0; i < 50000; ++i) {
    set["f" + std::to_string(i)] = i;
  }
  EXPECT_TRUE(parse_update(boost::json::object{{"$set", set}}));
}

TEST(PatchLimits, DoublingCopiesStopAtTheSizeBound) {
  // ~1 KB of patch: 30 copies each doubling an array would make 2^30 elements.
  boost::json::value doc = boost::json::parse(R"({"a":[1,2,3,4,5,6,7,8]})");
  boost::json::array patch;
  for (int i = 0; i < 30; ++i) {
    patch.push_back(boost::json::object{{"op", "copy"}, {"from", "/a"}, {"path", "/a/-"}});
  }
  document_limits limits;
  limits.max_bytes = 64 * 1024;
  auto before = boost::json::serialize(doc);
  auto r = apply_patch(doc, patch, patch_mode::strict, limits);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "record.too_large");
  EXPECT_EQ(boost::json::serialize(doc), before);  // atomic
}

TEST(PatchLimits, DeepPointersAndDeepValuesAreRefused) {
  std::string pointer;
  for (int i = 0; i < 100000; ++i) {
    pointer += "/a";
  }
  boost::json::array p1{boost::json::object{{"op", "add"}, {"path", pointer}, {"value", 1}}};
  EXPECT_EQ(code_of(check_patch(p1, patch_mode::strict, {})), "record.too_deep");
  // A value that nests past the limit where it lands.
  boost::json::value doc = parse_json(nested(40)).value();
  auto deep = parse_json(nested(30));
  std::string at;
  for (int i = 0; i < 40; ++i) {
    at += "/a";
  }
  boost::json::array p2{
      boost::json::object{{"op", "replace"}, {"path", at}, {"value", deep.value()}}};
  auto r = apply_patch(doc, p2, patch_mode::strict, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "record.too_deep");
  boost::json::array p3{
      boost::json::object{{"op", "add"}, {"path", "/n"}, {"value", parse_json("1e400").value()}}};
  EXPECT_EQ(code_of(check_patch(p3, patch_mode::strict, {})), "record.invalid_number");
}

TEST(RequestLimits, WindowedBodiesAndHubFramesRefuseNumbersJsonCannotCarry) {
  auto r = parse_windowed_request(
      windowed_scope::object, false, "s",
      std::string_view{R"({"objectId":"o","dataset":"d","filter":{"n":1e400}})"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "request.invalid_field");
  EXPECT_EQ(r.error().details.at("field"), boost::json::value("filter"));
  std::string deep_body(100000, '[');
  auto deep =
      parse_windowed_request(windowed_scope::object, false, "s", std::string_view{deep_body});
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().code, "request.bad_json");
  auto f = parse_client_frame(R"({"type":"Subscribe","queryId":"q","revision":1,)"
                              R"("payload":{"queryName":"A.B","arguments":{"n":1e400}}})");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().code, "hub.malformed");
}

TEST(JsonDiffBudget, NestedKeyedArraysDiffInBoundedTime) {
  // [{"id":"x","c":[{"id":"x","c":…}]}] 31 levels deep (62 nestings): both array strategies
  // recurse into the one element at every level, 2^31 walks without a bound. The leaf differs.
  auto build = [](int leaf) {
    boost::json::value v = leaf;
    for (int level = 0; level < 31; ++level) {
      v = boost::json::array{boost::json::object{{"id", "x"}, {"c", v}}};
    }
    return v;
  };
  auto a = build(1);
  auto b = build(2);
  auto start = std::chrono::steady_clock::now();
  auto patch = json_diff(a, b);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(2));
  auto applied = a;
  ASSERT_TRUE(apply_patch(applied, patch));
  EXPECT_EQ(boost::json::serialize(applied), boost::json::serialize(b));
}

}  // namespace
}  // namespace weir::core

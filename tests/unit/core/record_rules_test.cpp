// Tests for core/record_rules: id validation, upsert normalization, version stamping.
#include "core/record_rules.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

using boost::json::parse;
using boost::json::serialize;

TEST(ValidateId, AcceptsOrdinaryIds) {
  for (const std::string& id :
       std::vector<std::string>{"a", "msg_1", "obj/rec", "with space", "\xc3\xa9t\xc3\xa9",
                                std::string(max_record_id_size, 'x')}) {
    EXPECT_TRUE(validate_id(id, "id")) << id;
  }
}

TEST(ValidateId, RejectsEmptyLongAndControlCharacters) {
  const std::string bad[] = {
      "",
      std::string(max_record_id_size + 1, 'x'),
      std::string("a\0b", 3),
      "tab\there",
      "new\nline",
      "del\x7f",
      "\x1f",
  };
  for (const auto& id : bad) {
    auto r = validate_id(id, "recordId");
    ASSERT_FALSE(r) << id;
    EXPECT_EQ(r.error().code, "request.invalid_field");
    EXPECT_EQ(r.error().details.at("field"), "recordId");
  }
}

TEST(NormalizeRecord, NotAnObject) {
  for (const char* body : {"[]", "\"x\"", "null", "3"}) {
    auto r = normalize_record(parse(body), std::nullopt);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().code, "request.not_object");
  }
}

TEST(NormalizeRecord, IdRules) {
  struct error_case {
    const char* body;
    std::optional<std::string_view> path_id;
    const char* code;
  };
  const error_case cases[] = {
      {R"({"text":"x"})", std::nullopt, "request.missing_field"},
      {R"({"id":1})", std::nullopt, "request.invalid_field"},
      {R"({"id":null})", "a", "request.invalid_field"},
      {R"({"id":""})", std::nullopt, "request.invalid_field"},
      {R"({"id":"a\u0000"})", std::nullopt, "request.invalid_field"},
      {R"({"id":"a"})", "b", "record.id_mismatch"},
      {R"({"text":"x"})", "", "request.invalid_field"},
      {R"({"text":"x"})", "bad\nid", "request.invalid_field"},
  };
  for (const auto& c : cases) {
    auto r = normalize_record(parse(c.body), c.path_id);
    ASSERT_FALSE(r) << c.body;
    EXPECT_EQ(r.error().code, c.code) << c.body;
    if (std::string_view(c.code) != "record.id_mismatch") {
      EXPECT_EQ(r.error().details.at("field"), "id") << c.body;
    }
  }
}

TEST(NormalizeRecord, MismatchDetailsNameBothIds) {
  auto r = normalize_record(parse(R"({"id":"a"})"), "b");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().details.at("id"), "a");
  EXPECT_EQ(r.error().details.at("pathId"), "b");
}

TEST(NormalizeRecord, FillsIdFromPathAndDropsClientVer) {
  auto r = normalize_record(parse(R"({"text":"hi","_ver":{"id":"zz"},"n":1})"), "m1");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(serialize(*r), R"({"text":"hi","n":1,"id":"m1"})");
}

TEST(NormalizeRecord, MatchingIdsAndBodyOnlyIdAreKept) {
  auto same = normalize_record(parse(R"({"id":"m1","a":1})"), "m1");
  ASSERT_TRUE(same);
  EXPECT_EQ(serialize(*same), R"({"id":"m1","a":1})");
  auto body_only = normalize_record(parse(R"({"a":1,"id":"m2","_ver":null,"b":2})"), std::nullopt);
  ASSERT_TRUE(body_only);
  EXPECT_EQ(serialize(*body_only), R"({"a":1,"id":"m2","b":2})");
}

TEST(StampVersion, AppendsWhenAlreadyInShape) {
  auto rec = parse(R"({"id":"r","a":1})").as_object();
  stamp_version(rec, "0z");
  EXPECT_EQ(serialize(rec), R"({"id":"r","a":1,"_ver":{"id":"0z"}})");
  stamp_version(rec, "10-");  // replaces, stays last
  EXPECT_EQ(serialize(rec), R"({"id":"r","a":1,"_ver":{"id":"10-"}})");
}

TEST(StampVersion, ReordersIdFirstAndVerLast) {
  auto rec = parse(R"({"a":1,"_ver":{"id":"old","x":1},"id":"r","b":2})").as_object();
  stamp_version(rec, "00");
  EXPECT_EQ(serialize(rec), R"({"id":"r","a":1,"b":2,"_ver":{"id":"00"}})");
}

TEST(StampVersion, AfterNormalizeGivesCanonicalRecord) {
  auto r = normalize_record(parse(R"({"text":"hi","_ver":{"id":"zz"}})"), "m1");
  ASSERT_TRUE(r);
  stamp_version(*r, "0-");
  EXPECT_EQ(serialize(*r), R"({"id":"m1","text":"hi","_ver":{"id":"0-"}})");
}

TEST(StampVersion, WithoutIdStillPutsVerLast) {
  auto rec = parse(R"({"_ver":1,"a":1})").as_object();
  stamp_version(rec, "00");
  EXPECT_EQ(serialize(rec), R"({"a":1,"_ver":{"id":"00"}})");
}

TEST(ContainsNulCharacter, FindsTheEscapeButNotAnEscapedBackslash) {
  EXPECT_TRUE(contains_nul_character(R"({"a":"x\u0000y"})"));
  EXPECT_TRUE(contains_nul_character(R"({"a":"\\\u0000"})"));    // a backslash, then U+0000
  EXPECT_FALSE(contains_nul_character(R"({"a":"x\\u0000y"})"));  // the text \u0000
  EXPECT_FALSE(contains_nul_character(R"({"u0000":1,"b":"u0000"})"));
  EXPECT_TRUE(contains_nul_character(R"({"a":"\u00001"})"));  // U+0000 then "1"
}

}  // namespace
}  // namespace weir::core

// core json patch: the public conformance suite (json-patch-tests, both files, every enabled
// case, strict mode) with atomicity checked on every failing case; the lenient mode; pointers.
#include "core/json_patch.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/json_pointer.hpp"

namespace weir::core {
namespace {

namespace json = boost::json;

json::array load_suite(const std::string& name) {
  std::ifstream in{std::string{WEIR_CONFORMANCE_DIR} + "/json-patch-tests/" + name};
  EXPECT_TRUE(in) << "cannot read " << name;
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str()).as_array();
}

class Conformance : public testing::TestWithParam<const char*> {};

TEST_P(Conformance, EveryEnabledCasePassesAndFailuresLeaveTheDocumentUnchanged) {
  auto suite = load_suite(GetParam());
  int ran = 0, skipped = 0, expected = 0, errors = 0;
  for (std::size_t i = 0; i < suite.size(); ++i) {
    const auto& rec = suite[i].as_object();
    auto comment = rec.contains("comment") ? json::serialize(rec.at("comment")) : std::string{};
    SCOPED_TRACE(std::string{GetParam()} + " #" + std::to_string(i) + " " + comment);
    if (const auto* d = rec.if_contains("disabled"); d && d->is_bool() && d->get_bool()) {
      ++skipped;
      continue;
    }
    if (!rec.contains("doc") || !rec.contains("patch")) {
      continue;  // a comment-only record
    }
    ++ran;
    json::value doc = rec.at("doc");
    const json::value before = doc;
    auto r = apply_patch(doc, rec.at("patch"), patch_mode::strict);
    if (rec.contains("error")) {
      ++errors;
      EXPECT_FALSE(r) << "should fail: " << json::serialize(rec.at("error"));
      EXPECT_TRUE(json_equal(doc, before)) << "changed to " << json::serialize(doc);
      EXPECT_EQ(json::serialize(doc), json::serialize(before));
    } else {
      EXPECT_TRUE(r) << r.error().message;
      if (const auto* want = rec.if_contains("expected")) {
        ++expected;
        EXPECT_TRUE(json_equal(doc, *want))
            << json::serialize(doc) << " != " << json::serialize(*want);
      }
    }
  }
  std::printf(
      "json-patch-tests %s: %d cases run (%d with expected, %d with error), %d disabled "
      "skipped\n",
      GetParam(), ran, expected, errors, skipped);
  EXPECT_GT(ran, 0);
}

INSTANTIATE_TEST_SUITE_P(JsonPatchTests, Conformance,
                         testing::Values("tests.json", "spec_tests.json"), [](const auto& info) {
                           return std::string{info.param} == "tests.json" ? "Tests" : "SpecTests";
                         });

json::value j(std::string_view text) {
  return json::parse(text);
}

TEST(JsonPatch, LenientModeDropsUnknownOpsWithAWarningAndAppliesTheRest) {
  auto doc = j(R"({"a":1})");
  auto patch = j(R"([{"op":"add","path":"/b","value":2},{"op":"frobnicate","path":"/a"},
                     {"op":"remove","path":"/a"}])");
  auto strict_doc = doc;
  auto strict = apply_patch(strict_doc, patch, patch_mode::strict);
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().code, "patch.invalid");
  EXPECT_EQ(strict_doc, doc);
  auto lenient = apply_patch(doc, patch, patch_mode::lenient);
  ASSERT_TRUE(lenient) << lenient.error().message;
  ASSERT_EQ(lenient->warnings.size(), 1u);
  EXPECT_NE(lenient->warnings[0].find("frobnicate"), std::string::npos);
  EXPECT_EQ(doc, j(R"({"b":2})"));
}

TEST(JsonPatch, ALaterFailureUndoesEarlierOperationsInBothModes) {
  for (auto mode : {patch_mode::strict, patch_mode::lenient}) {
    auto doc = j(R"({"a":{"b":[1,2]}})");
    auto before = doc;
    auto r = apply_patch(doc, j(R"([{"op":"add","path":"/a/b/-","value":3},
                               {"op":"remove","path":"/a/c"}])"),
                         mode);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, "patch.path_not_found");
    EXPECT_EQ(r.error().details.at("index"), 1);
    EXPECT_EQ(doc, before);
  }
}

TEST(JsonPatch, ErrorsNameTheirOperation) {
  auto doc = j(R"({"a":[1],"n":1})");
  auto code = [&](std::string_view patch) {
    auto copy = doc;
    auto r = apply_patch(copy, j(patch));
    return r ? std::string{"ok"} : r.error().code;
  };
  EXPECT_EQ(code(R"([{"op":"test","path":"/n","value":1.0}])"), "ok");  // numeric equality
  EXPECT_EQ(code(R"([{"op":"test","path":"/n","value":2}])"), "patch.test_failed");
  EXPECT_EQ(code(R"([{"op":"add","path":"/a/2","value":0}])"), "patch.out_of_bounds");
  EXPECT_EQ(code(R"([{"op":"add","path":"/a/01","value":0}])"), "patch.invalid_target");
  EXPECT_EQ(code(R"([{"op":"move","from":"/a","path":"/a/0"}])"), "patch.move_into_child");
  EXPECT_EQ(code(R"([{"op":"add","path":"a","value":0}])"), "patch.invalid_pointer");
  EXPECT_EQ(code(R"([{"op":"remove","path":""}])"), "patch.invalid_target");
  EXPECT_EQ(code(R"([{"op":"add","path":"/x"}])"), "patch.invalid");
  EXPECT_EQ(code(R"({"op":"add"})"), "patch.invalid");
  EXPECT_EQ(code(R"([{"op":"add","path":"/x","value":1,"extra":"kept"}])"), "ok");
}

TEST(JsonPointer, EscapesAndIndexes) {
  auto p = json_pointer::parse("/a~1b/m~0n/~01");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->tokens(), (std::vector<std::string>{"a/b", "m~n", "~1"}));
  EXPECT_EQ(p->to_string(), "/a~1b/m~0n/~01");
  EXPECT_EQ(json_pointer::parse("/")->tokens(), std::vector<std::string>{""});
  EXPECT_FALSE(json_pointer::parse("/a~2"));
  EXPECT_FALSE(json_pointer::parse("/a~"));
  EXPECT_FALSE(json_pointer::parse("a"));
  EXPECT_EQ(pointer_array_index("0"), 0u);
  EXPECT_EQ(pointer_array_index("10"), 10u);
  for (auto bad : {"01", "-1", "+1", "1e0", " 1", "-", ""}) {
    EXPECT_FALSE(pointer_array_index(bad)) << bad;
  }
}

}  // namespace
}  // namespace weir::core

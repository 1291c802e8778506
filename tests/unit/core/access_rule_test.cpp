// core::access_rule: the rule forms configuration accepts and what each lets through.
#include "core/access_rule.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace weir::core {
namespace {

access_rule rule(std::string_view json) {
  auto r = parse_access_rule(boost::json::parse(json), "authorize");
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : access_rule{};
}

principal signed_in(std::vector<std::string> roles = {}, boost::json::object claims = {}) {
  principal p;
  p.subject = "ada";
  p.roles = std::move(roles);
  p.claims = std::move(claims);
  return p;
}

std::string code(const access_rule& r, const principal& p) {
  auto ok = check_access(r, p);
  return ok ? "ok" : ok.error().code;
}

TEST(AccessRule, AnonymousLetsEveryoneThrough) {
  EXPECT_EQ(code(rule(R"("anonymous")"), principal{}), "ok");
  EXPECT_EQ(code(rule("null"), principal{}), "ok");
}

TEST(AccessRule, AuthenticatedNeedsASubject) {
  auto r = rule(R"("authenticated")");
  EXPECT_EQ(code(r, principal{}), "auth.required");
  EXPECT_EQ(code(r, signed_in()), "ok");
}

TEST(AccessRule, RolesNeedOneOfThem) {
  auto r = rule(R"({"roles": ["admin", "ops"]})");
  EXPECT_EQ(code(r, principal{}), "auth.required");
  EXPECT_EQ(code(r, signed_in({"reader"})), "auth.forbidden");
  EXPECT_EQ(code(r, signed_in({"reader", "ops"})), "ok");
}

TEST(AccessRule, ClaimsMustMatchOrBeContained) {
  auto r = rule(R"({"claims": {"plan": "pro", "verified": true}})");
  EXPECT_EQ(code(r, signed_in({}, {{"plan", "pro"}, {"verified", true}})), "ok");
  EXPECT_EQ(code(r, signed_in({}, {{"plan", "free"}, {"verified", true}})), "auth.forbidden");
  EXPECT_EQ(code(r, signed_in({}, {{"plan", "pro"}})), "auth.forbidden");
  EXPECT_EQ(
      code(r, signed_in({}, {{"plan", boost::json::array{"free", "pro"}}, {"verified", true}})),
      "ok");
}

TEST(AccessRule, BadRulesAreConfigErrors) {
  for (auto bad : {R"("admins")", R"(3)", R"({"roles": []})", R"({"roles": [1]})",
                   R"({"claims": {"a": {"b": 1}}})", R"({"groups": ["x"]})"}) {
    auto r = parse_access_rule(boost::json::parse(bad), "authorize");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "config.invalid");
    EXPECT_EQ(r.error().message.rfind("authorize: ", 0), 0u) << r.error().message;
  }
}

}  // namespace
}  // namespace weir::core

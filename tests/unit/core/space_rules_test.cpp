// core::space_rules: patterns, first match, and the answers for read and write.
#include "core/space_rules.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace weir::core {
namespace {

std::vector<space_rule> rules(std::string_view json) {
  auto r = parse_space_rules(boost::json::parse(json));
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : std::vector<space_rule>{};
}

TEST(SpaceRules, FirstMatchDecidesAndUnmatchedSpacesAreOpen) {
  auto rs = rules(R"([{"name": "public", "write": "authenticated"},
                      {"name": "team-*", "read": "authenticated", "write": {"roles": ["writer"]}},
                      {"name": "*", "read": {"roles": ["admin"]}}])");
  principal anon;
  principal ada;
  ada.subject = "ada";
  principal writer = ada;
  writer.roles = {"writer"};
  auto code = [&](std::string_view space, space_access a, const principal& p) {
    auto ok = check_space_access(rs, space, a, p);
    return ok ? std::string{"ok"} : ok.error().code;
  };
  EXPECT_EQ(code("public", space_access::read, anon), "ok");
  EXPECT_EQ(code("public", space_access::write, anon), "auth.required");
  EXPECT_EQ(code("team-a", space_access::read, anon), "auth.required");
  EXPECT_EQ(code("team-a", space_access::read, ada), "ok");
  EXPECT_EQ(code("team-a", space_access::write, ada), "auth.forbidden");
  EXPECT_EQ(code("team-a", space_access::write, writer), "ok");
  EXPECT_EQ(code("other", space_access::read, writer), "auth.forbidden");
  EXPECT_EQ(code("other", space_access::write, anon), "ok");
  EXPECT_TRUE(check_space_access({}, "x", space_access::write, anon));
  auto e = check_space_access(rs, "team-a", space_access::read, anon).error();
  EXPECT_EQ(e.details.at("space"), "team-a");
}

TEST(SpaceRules, BadEntriesAreConfigErrors) {
  for (auto bad : {R"({})", R"([3])", R"([{"read": "anonymous"}])", R"([{"name": "a*b"}])",
                   R"([{"name": "a", "reads": "anonymous"}])", R"([{"name": "a", "read": "x"}])"}) {
    auto r = parse_space_rules(boost::json::parse(bad));
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "config.invalid");
  }
}

}  // namespace
}  // namespace weir::core

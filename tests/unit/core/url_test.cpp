// core/url: percent-decoding (every escape checked), target and path splitting, and the
// lenient query-string split the routes read their arguments with.
#include "core/url.hpp"

#include <gtest/gtest.h>

namespace weir::core {
namespace {

TEST(Url, PercentDecodingChecksEveryEscape) {
  EXPECT_EQ(percent_decode("a%20b"), "a b");
  EXPECT_EQ(percent_decode("%2F%2f"), "//");
  EXPECT_EQ(percent_decode("caf%C3%A9"), "caf\xC3\xA9");
  EXPECT_EQ(percent_decode(""), "");
  EXPECT_EQ(percent_decode("%00"), std::string(1, '\0'));  // id rules refuse it later
  for (const char* bad : {"%", "%2", "a%G0", "%0g", "50%", "%%"}) {
    EXPECT_FALSE(percent_decode(bad).has_value()) << bad;
  }
}

TEST(Url, PlusIsASpaceOnlyWhereAsked) {
  EXPECT_EQ(percent_decode("a+b"), "a+b");
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("a%2Bb", true), "a+b");
}

TEST(Url, TargetsAndPathsSplit) {
  EXPECT_EQ(split_target("/a/b?x=1&y"),
            (std::pair<std::string_view, std::string_view>{"/a/b", "x=1&y"}));
  EXPECT_EQ(split_target("/a"), (std::pair<std::string_view, std::string_view>{"/a", ""}));
  EXPECT_EQ(split_path("/a/b/"), (std::vector<std::string_view>{"a", "b", ""}));
  EXPECT_EQ(split_path("/"), (std::vector<std::string_view>{""}));
}

TEST(Url, QueryStringsSplitLenientlyAndDecode) {
  auto q = parse_query("a=1&&b=x%20y+z&c&d=&=e&f={1}");
  ASSERT_TRUE(q.has_value());
  std::vector<std::pair<std::string, std::string>> want{{"a", "1"}, {"b", "x y z"}, {"c", ""},
                                                        {"d", ""},  {"", "e"},      {"f", "{1}"}};
  EXPECT_EQ(*q, want);
  EXPECT_FALSE(parse_query("a=%zz").has_value());
  EXPECT_FALSE(parse_query("%=1").has_value());
}

}  // namespace
}  // namespace weir::core

// weir::log: the two line formats (what a log shipper parses), the level names, and levels
// filtering what is written.
#include "log/log.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace weir::log {
namespace {

TEST(Log, JsonLinesAreOneObjectWithTheFieldsTyped) {
  auto body = render(format::json, level::info, "a", "request refused",
                     {{"status", 404u},
                      {"code", "space.not_found"},
                      {"correlation", std::string{"c-1"}},
                      {"delta", -3},
                      {"ok", false},
                      {"ms", 1.5},
                      {"quote", "say \"hi\"\n"}});
  // spdlog writes {"ts":"...", before the body.
  auto v = boost::json::parse(R"({"ts":"2026-12-02T00:00:00.000Z",)" + body);
  const auto& o = v.as_object();
  EXPECT_EQ(o.at("level"), "info");
  EXPECT_EQ(o.at("node"), "a");
  EXPECT_EQ(o.at("msg"), "request refused");
  EXPECT_EQ(o.at("status").to_number<std::uint64_t>(), 404u);
  EXPECT_EQ(o.at("code"), "space.not_found");
  EXPECT_EQ(o.at("correlation"), "c-1");
  EXPECT_EQ(o.at("delta").as_int64(), -3);
  EXPECT_EQ(o.at("ok").as_bool(), false);
  EXPECT_DOUBLE_EQ(o.at("ms").as_double(), 1.5);
  EXPECT_EQ(o.at("quote"), "say \"hi\"\n");
}

TEST(Log, TextLinesQuoteOnlyValuesThatWouldSplit) {
  EXPECT_EQ(render(format::text, level::warn, "", "lease",
                   {{"code", "cluster.x"}, {"error", "no route to host"}, {"n", 7u}}),
            R"(warn lease code=cluster.x error="no route to host" n=7)");
  EXPECT_EQ(render(format::text, level::debug, "b", "opened", {{"empty", ""}}),
            R"(debug [b] opened empty="")");
}

TEST(Log, LevelsAndFormatsParseByName) {
  EXPECT_EQ(parse_level("debug"), level::debug);
  EXPECT_EQ(parse_level("warn"), level::warn);
  EXPECT_EQ(parse_level("off"), level::off);
  EXPECT_FALSE(parse_level("warning"));
  EXPECT_EQ(parse_format("json"), format::json);
  EXPECT_FALSE(parse_format("JSON"));
}

TEST(Log, TheLevelFiltersWhatIsWritten) {
  configure(level::warn, format::text);
  EXPECT_FALSE(enabled(level::debug));
  EXPECT_FALSE(enabled(level::info));
  EXPECT_TRUE(enabled(level::warn));
  EXPECT_TRUE(enabled(level::error));
  configure(level::off, format::text);
  EXPECT_FALSE(enabled(level::error));
  configure(level::debug, format::json);
  EXPECT_TRUE(enabled(level::debug));
  configure(level::info, format::text);
}

}  // namespace
}  // namespace weir::log

// core::query_health — the §11 value's shape, grouping, nulls and time format.
#include "core/query_health.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace weir::core {
namespace {

namespace json = boost::json;

TEST(QueryHealth, Iso8601HasMillisecondsAndZ) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601_utc(1796019845123), "2026-11-30T06:24:05.123Z");
  EXPECT_EQ(iso8601_utc(951782400000), "2000-02-29T00:00:00.000Z");  // leap day
}

TEST(QueryHealth, EmptyIsAllZeros) {
  auto v = json::parse(encode_query_health({})).as_object();
  EXPECT_TRUE(v.at("connections").as_array().empty());
  EXPECT_EQ(v.at("totalConnections").as_int64(), 0);
  EXPECT_EQ(v.at("totalSubscriptions").as_int64(), 0);
  EXPECT_TRUE(v.at("querySubscriptions").as_array().empty());
}

TEST(QueryHealth, ConnectionsSubscriptionsAndGroupingByQuery) {
  connection_health a;
  a.connection_id = "c1";
  a.protocol = "WebSocket";
  a.established_at_ms = 1000;
  a.client = {"127.0.0.1", "curl/8", "", "WebSocket"};
  a.subscriptions.push_back({"q1", "B.Query", "items", 2000, 3000, std::nullopt, 4000});
  a.subscriptions.push_back(
      {"q2", "A.Query", "objects", 2500, std::nullopt, std::nullopt, std::nullopt});
  connection_health b;
  b.connection_id = "c2";
  b.protocol = "SSE";
  b.established_at_ms = 5000;
  b.client = {"", "", "", "SSE"};
  b.subscriptions.push_back(
      {"x", "B.Query", "items", 6000, std::nullopt, std::nullopt, std::nullopt});

  auto v = json::parse(encode_query_health({a, b})).as_object();
  EXPECT_EQ(v.at("totalConnections").as_int64(), 2);
  EXPECT_EQ(v.at("totalSubscriptions").as_int64(), 3);
  const auto& c0 = v.at("connections").as_array().at(0).as_object();
  EXPECT_EQ(c0.at("connectionId").as_string(), "c1");
  EXPECT_EQ(c0.at("establishedAt").as_string(), "1970-01-01T00:00:01.000Z");
  const auto& s0 = c0.at("subscriptions").as_array().at(0).as_object();
  EXPECT_EQ(s0.at("subscriptionId").as_string(), "q1");
  EXPECT_EQ(s0.at("queryIdentifier").as_string(), "B.Query");
  EXPECT_EQ(s0.at("readModelType").as_string(), "items");
  EXPECT_EQ(s0.at("lastPingSentAt").as_string(), "1970-01-01T00:00:03.000Z");
  EXPECT_TRUE(s0.at("lastPongReceivedAt").is_null());
  EXPECT_EQ(s0.at("lastDataServedAt").as_string(), "1970-01-01T00:00:04.000Z");
  const auto& ci = s0.at("clientInfo").as_object();
  EXPECT_EQ(ci.at("remoteIpAddress").as_string(), "127.0.0.1");
  EXPECT_EQ(ci.at("userAgent").as_string(), "curl/8");
  EXPECT_TRUE(ci.at("userId").is_null());
  EXPECT_EQ(ci.at("protocol").as_string(), "WebSocket");
  const auto& ci_b = v.at("connections")
                         .as_array()
                         .at(1)
                         .as_object()
                         .at("subscriptions")
                         .as_array()
                         .at(0)
                         .as_object()
                         .at("clientInfo")
                         .as_object();
  EXPECT_TRUE(ci_b.at("remoteIpAddress").is_null());
  EXPECT_TRUE(ci_b.at("userAgent").is_null());

  const auto& groups = v.at("querySubscriptions").as_array();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups.at(0).as_object().at("queryName").as_string(), "A.Query");
  const auto& bq = groups.at(1).as_object();
  EXPECT_EQ(bq.at("queryName").as_string(), "B.Query");
  EXPECT_EQ(bq.at("totalSubscriptions").as_int64(), 2);
  const auto& subs = bq.at("subscribers").as_array();
  EXPECT_EQ(subs.at(0).as_object().at("connectionId").as_string(), "c1");
  EXPECT_EQ(subs.at(1).as_object().at("connectionId").as_string(), "c2");
  EXPECT_EQ(subs.at(1).as_object().at("protocol").as_string(), "SSE");
  EXPECT_EQ(subs.at(1).as_object().at("subscriptionId").as_string(), "x");
}

TEST(QueryHealth, EqualStatesEncodeEqually) {
  connection_health a;
  a.connection_id = "c1";
  a.subscriptions.push_back({"q1", "Q", "items", 1, std::nullopt, std::nullopt, std::nullopt});
  EXPECT_EQ(encode_query_health({a}), encode_query_health({a}));
}

}  // namespace
}  // namespace weir::core

// Tests for core/hub_codec: client frames (§2.2, §8), SubscriptionRequest validation (§2.3), the
// revision wire rule (§4), query ids, and the small server frames (§2.1).
#include "core/hub_codec.hpp"

#include <gtest/gtest.h>

#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

boost::json::value j(std::string_view text) {
  return boost::json::parse(text);
}

void expect_malformed(std::string_view text) {
  const auto r = parse_client_frame(text);
  ASSERT_FALSE(r.has_value()) << text;
  EXPECT_EQ(r.error().code, "hub.malformed") << text;
  EXPECT_EQ(r.error().message, "Malformed query control") << text;
}

void expect_bad_request(std::string_view request_json) {
  const auto r = parse_subscription_request(j(request_json));
  ASSERT_FALSE(r.has_value()) << request_json;
  EXPECT_EQ(r.error().code, "hub.malformed") << request_json;
  EXPECT_EQ(r.error().message, "Malformed query control") << request_json;
}

subscription_request good_request(std::string_view request_json) {
  auto r = parse_subscription_request(j(request_json));
  EXPECT_TRUE(r.has_value()) << request_json;
  return r.has_value() ? std::move(r).value() : subscription_request{};
}

TEST(HubErrorText, IsVerbatim) {
  EXPECT_EQ(hub_error_text::malformed, "Malformed query control");
  EXPECT_EQ(hub_error_text::connection_limit, "Connection subscription limit reached");
  EXPECT_EQ(hub_error_text::subscription_limit, "Subscription limit reached");
  EXPECT_EQ(hub_error_text::unknown_query, "Unknown observable query");
  EXPECT_EQ(hub_error_text::invalid_query, "Invalid observable query");
  EXPECT_EQ(hub_error_text::query_failed, "Observable query failed");
}

TEST(ParseClientFrame, FullSubscribe) {
  const auto r = parse_client_frame(
      R"({"type":"Subscribe","queryId":"q-1_A","revision":1,"payload":{"queryName":"MyApp.Authors.Listing.AllAuthors","arguments":{"name":"Ada","skip":null,"city":"Oslo"},"page":0,"pageSize":25,"sortBy":"name","sortDirection":"desc","transferMode":"delta"}})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->type, client_frame_type::subscribe);
  EXPECT_EQ(r->query_id, "q-1_A");
  EXPECT_EQ(r->revision, 1u);
  const auto& req = r->request;
  EXPECT_EQ(req.query_name, "MyApp.Authors.Listing.AllAuthors");
  ASSERT_EQ(req.arguments.size(), 2u);
  EXPECT_EQ(req.arguments[0], (std::pair<std::string, std::string>{"name", "Ada"}));
  EXPECT_EQ(req.arguments[1], (std::pair<std::string, std::string>{"city", "Oslo"}));
  EXPECT_EQ(req.page, 0u);
  EXPECT_EQ(req.page_size, 25u);
  EXPECT_EQ(req.sort_by, "name");
  EXPECT_EQ(req.sort_direction, "desc");
  EXPECT_TRUE(req.descending());
  EXPECT_EQ(req.mode, transfer_mode::delta);
}

TEST(ParseClientFrame, LegacySubscribeHasNoRevision) {
  const auto r =
      parse_client_frame(R"({"type":"Subscribe","queryId":"q","payload":{"queryName":"A"}})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->revision, std::nullopt);
  EXPECT_EQ(r->request.mode, transfer_mode::legacy);
  EXPECT_FALSE(r->request.page.has_value());
  EXPECT_TRUE(r->request.arguments.empty());
}

TEST(ParseClientFrame, NullRevisionIsLegacy) {
  const auto r = parse_client_frame(R"({"type":"Unsubscribe","queryId":"q","revision":null})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->type, client_frame_type::unsubscribe);
  EXPECT_EQ(r->revision, std::nullopt);
}

TEST(ParseClientFrame, Unsubscribe) {
  const auto r =
      parse_client_frame(R"({"type":"Unsubscribe","queryId":"abc","revision":9007199254740991})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->type, client_frame_type::unsubscribe);
  EXPECT_EQ(r->query_id, "abc");
  EXPECT_EQ(r->revision, 9007199254740991u);
}

TEST(ParseClientFrame, PingKeepsOnlySafeIntegerTimestamps) {
  auto r = parse_client_frame(R"({"type":"Ping","timestamp":1764470000000})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->type, client_frame_type::ping);
  EXPECT_EQ(r->timestamp, 1764470000000);
  r = parse_client_frame(R"({"type":"Ping","timestamp":-5})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->timestamp, -5);
  r = parse_client_frame(R"({"type":"Ping","timestamp":1.0e3})");  // a safe integer in JS terms
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->timestamp, 1000);
  for (const char* bad :
       {R"({"type":"Ping"})", R"({"type":"Ping","timestamp":"5"})",
        R"({"type":"Ping","timestamp":1.5})", R"({"type":"Ping","timestamp":9007199254740992})",
        R"({"type":"Ping","timestamp":null})"}) {
    r = parse_client_frame(bad);
    ASSERT_TRUE(r.has_value()) << bad;
    EXPECT_EQ(r->type, client_frame_type::ping);
    EXPECT_EQ(r->timestamp, std::nullopt) << bad;
  }
}

TEST(ParseClientFrame, PongIsAccepted) {
  const auto r = parse_client_frame(R"({"type":"Pong","timestamp":"whatever"})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->type, client_frame_type::pong);
}

TEST(ParseClientFrame, MalformedInput) {
  expect_malformed("");
  expect_malformed("not json");
  expect_malformed(R"({"type":"Subscribe")");
  expect_malformed("[]");
  expect_malformed(R"("Subscribe")");
  expect_malformed("null");
  expect_malformed(R"({})");
  expect_malformed(R"({"type":5})");
  expect_malformed(R"({"type":0,"queryId":"q","payload":{"queryName":"A"}})");
  expect_malformed(R"({"type":"subscribe","queryId":"q","payload":{"queryName":"A"}})");
  expect_malformed(R"({"type":"QueryResult","queryId":"q"})");
  expect_malformed(R"({"type":"Data"})");
}

TEST(ParseClientFrame, BadQueryIdOrRevisionIsMalformed) {
  expect_malformed(R"({"type":"Unsubscribe"})");
  expect_malformed(R"({"type":"Unsubscribe","queryId":""})");
  expect_malformed(R"({"type":"Unsubscribe","queryId":"a b"})");
  expect_malformed(R"({"type":"Unsubscribe","queryId":7})");
  expect_malformed(R"({"type":"Unsubscribe","queryId":"q","revision":0})");
  expect_malformed(R"({"type":"Unsubscribe","queryId":"q","revision":"1"})");
  expect_malformed(R"({"type":"Unsubscribe","queryId":"q","revision":1.0})");
  expect_malformed(
      R"({"type":"Subscribe","queryId":"q","revision":-1,"payload":{"queryName":"A"}})");
  expect_malformed(R"({"type":"Subscribe","queryId":"q/x","payload":{"queryName":"A"}})");
}

TEST(ParseClientFrame, SubscribeNeedsAValidPayload) {
  expect_malformed(R"({"type":"Subscribe","queryId":"q"})");
  expect_malformed(R"({"type":"Subscribe","queryId":"q","payload":null})");
  expect_malformed(R"({"type":"Subscribe","queryId":"q","payload":"A"})");
  expect_malformed(R"({"type":"Subscribe","queryId":"q","payload":{"queryName":"A","extra":1}})");
}

TEST(ParseRevision, AcceptsOnlyJsonIntegersInRange) {
  EXPECT_EQ(*parse_revision(j("1")), 1u);
  EXPECT_EQ(*parse_revision(j("9007199254740991")), 9007199254740991u);
  for (const char* bad : {"0", "-1", "-0", "9007199254740992", "18446744073709551615", "1.0", "1e0",
                          "1E2", "1.5", R"("1")", "true", "null", "[1]", "{}"}) {
    const auto r = parse_revision(j(bad));
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, "hub.malformed");
    EXPECT_EQ(r.error().message, "Malformed query control");
  }
}

TEST(ValidQueryId, FollowsThePattern) {
  EXPECT_TRUE(valid_query_id("q1"));
  EXPECT_TRUE(valid_query_id("3f2504e0-4f89-11d3-9a0c-0305e82c3301_accounts"));
  EXPECT_TRUE(valid_query_id("-"));
  EXPECT_TRUE(valid_query_id(std::string(256, 'a')));
  EXPECT_FALSE(valid_query_id(std::string(257, 'a')));
  EXPECT_FALSE(valid_query_id(""));
  EXPECT_FALSE(valid_query_id("a.b"));
  EXPECT_FALSE(valid_query_id("a b"));
  EXPECT_FALSE(valid_query_id("é"));
  EXPECT_FALSE(valid_query_id(std::string_view("a\0b", 3)));
}

TEST(ParseSubscriptionRequest, QueryNameRules) {
  EXPECT_EQ(good_request(R"({"queryName":"A"})").query_name, "A");
  EXPECT_EQ(good_request(R"({"queryName":"a_1.B2_"})").query_name, "a_1.B2_");
  std::string long_ok = std::string(90, 'a') + "." + std::string(89, 'b');  // 180 chars
  good_request("{\"queryName\":\"" + long_ok + "\"}");
  expect_bad_request("{\"queryName\":\"" + long_ok + "c\"}");
  expect_bad_request(R"({})");
  expect_bad_request(R"({"queryName":null})");
  expect_bad_request(R"({"queryName":""})");
  expect_bad_request(R"({"queryName":5})");
  expect_bad_request(R"({"queryName":"1abc"})");
  expect_bad_request(R"({"queryName":"_abc"})");
  expect_bad_request(R"({"queryName":"a..b"})");
  expect_bad_request(R"({"queryName":".a"})");
  expect_bad_request(R"({"queryName":"a."})");
  expect_bad_request(R"({"queryName":"a-b"})");
  expect_bad_request(R"({"queryName":"a b"})");
}

TEST(ParseSubscriptionRequest, UnknownKeysAreRejected) {
  expect_bad_request(R"({"queryName":"A","queryname":"A"})");
  expect_bad_request(R"({"queryName":"A","waitForFirstResult":true})");
  expect_bad_request(R"({"queryName":"A","arguments":{},"filter":null})");
}

TEST(ParseSubscriptionRequest, ArgumentRules) {
  auto req = good_request(R"({"queryName":"A","arguments":{"b":"2","a":null,"c":""}})");
  ASSERT_EQ(req.arguments.size(), 2u);
  EXPECT_EQ(req.arguments[0].first, "b");
  EXPECT_EQ(req.arguments[1].first, "c");
  EXPECT_EQ(req.arguments[1].second, "");
  EXPECT_TRUE(good_request(R"({"queryName":"A","arguments":null})").arguments.empty());

  expect_bad_request(R"({"queryName":"A","arguments":[]})");
  expect_bad_request(R"({"queryName":"A","arguments":"x=1"})");
  expect_bad_request(R"({"queryName":"A","arguments":{"n":1}})");
  expect_bad_request(R"({"queryName":"A","arguments":{"n":true}})");
  expect_bad_request(R"({"queryName":"A","arguments":{"n":{"x":"1"}}})");
  expect_bad_request(R"({"queryName":"A","arguments":{"1n":"1"}})");
  expect_bad_request(R"({"queryName":"A","arguments":{"":"1"}})");
  expect_bad_request(R"({"queryName":"A","arguments":{"a.b":"1"}})");
  for (const char* reserved : {"page", "PageSize", "SORTBY", "sortDirection", "waitForFirstResult",
                               "WaitForFirstResultTimeout"}) {
    expect_bad_request(std::string(R"({"queryName":"A","arguments":{")") + reserved + R"(":"1"}})");
  }
  good_request(R"({"queryName":"A","arguments":{"pages":"1","sort":"x"}})");
}

TEST(ParseSubscriptionRequest, ArgumentLimits) {
  const std::string name128 = "a" + std::string(127, 'b');
  good_request("{\"queryName\":\"A\",\"arguments\":{\"" + name128 + "\":\"1\"}}");
  expect_bad_request("{\"queryName\":\"A\",\"arguments\":{\"" + name128 + "b\":\"1\"}}");

  good_request("{\"queryName\":\"A\",\"arguments\":{\"v\":\"" + std::string(4096, 'x') + "\"}}");
  expect_bad_request("{\"queryName\":\"A\",\"arguments\":{\"v\":\"" + std::string(4097, 'x') +
                     "\"}}");
  // Lengths are UTF-16 units: "é" is one unit (two bytes), "😀" is two units (four bytes).
  std::string e_acute;
  for (int i = 0; i < 4096; ++i) {
    e_acute += "\xC3\xA9";
  }
  good_request("{\"queryName\":\"A\",\"arguments\":{\"v\":\"" + e_acute + "\"}}");
  std::string emoji;
  for (int i = 0; i < 2048; ++i) {
    emoji += "\xF0\x9F\x98\x80";
  }
  good_request("{\"queryName\":\"A\",\"arguments\":{\"v\":\"" + emoji + "\"}}");
  expect_bad_request("{\"queryName\":\"A\",\"arguments\":{\"v\":\"" + emoji + "x\"}}");

  auto many = [](int n) {
    std::string s = R"({"queryName":"A","arguments":{)";
    for (int i = 0; i < n; ++i) {
      s += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":null";
    }
    return s + "}}";
  };
  good_request(many(128));
  expect_bad_request(many(129));
}

TEST(ParseSubscriptionRequest, PagingRules) {
  auto req = good_request(R"({"queryName":"A","page":3,"pageSize":1000})");
  EXPECT_EQ(req.page, 3u);
  EXPECT_EQ(req.page_size, 1000u);
  req = good_request(R"({"queryName":"A","page":9007199254740991,"pageSize":0})");
  EXPECT_EQ(req.page, 9007199254740991u);
  EXPECT_EQ(req.page_size, 0u);
  req = good_request(R"({"queryName":"A","page":2.0,"pageSize":null})");  // JS: a safe integer
  EXPECT_EQ(req.page, 2u);
  EXPECT_FALSE(req.page_size.has_value());

  expect_bad_request(R"({"queryName":"A","pageSize":1001})");
  expect_bad_request(R"({"queryName":"A","page":-1})");
  expect_bad_request(R"({"queryName":"A","page":1.5})");
  expect_bad_request(R"({"queryName":"A","page":"1"})");
  expect_bad_request(R"({"queryName":"A","page":9007199254740992})");
  expect_bad_request(R"({"queryName":"A","pageSize":true})");
}

TEST(ParseSubscriptionRequest, SortAndTransferModeRules) {
  auto req = good_request(R"({"queryName":"A","sortBy":"name","sortDirection":"DeSc"})");
  EXPECT_EQ(req.sort_by, "name");
  EXPECT_TRUE(req.descending());
  EXPECT_FALSE(good_request(R"({"queryName":"A","sortDirection":"descending"})").descending());
  EXPECT_FALSE(good_request(R"({"queryName":"A","sortDirection":"asc"})").descending());
  EXPECT_FALSE(good_request(R"({"queryName":"A"})").descending());

  EXPECT_EQ(good_request(R"({"queryName":"A","transferMode":"FULL"})").mode, transfer_mode::full);
  EXPECT_EQ(good_request(R"({"queryName":"A","transferMode":"Delta"})").mode, transfer_mode::delta);
  EXPECT_EQ(good_request(R"({"queryName":"A","transferMode":"bogus"})").mode,
            transfer_mode::legacy);
  EXPECT_EQ(good_request(R"({"queryName":"A","transferMode":null})").mode, transfer_mode::legacy);

  expect_bad_request(R"({"queryName":"A","transferMode":1})");
  expect_bad_request(R"({"queryName":"A","transferMode":{}})");
  expect_bad_request(R"({"queryName":"A","sortBy":5})");
  expect_bad_request(R"({"queryName":"A","sortDirection":false})");
  good_request("{\"queryName\":\"A\",\"sortBy\":\"" + std::string(256, 's') + "\"}");
  expect_bad_request("{\"queryName\":\"A\",\"sortBy\":\"" + std::string(257, 's') + "\"}");
  expect_bad_request("{\"queryName\":\"A\",\"transferMode\":\"" + std::string(257, 'f') + "\"}");
}

TEST(ParseTransferMode, IsCaseInsensitiveAndDefaultsToLegacy) {
  EXPECT_EQ(parse_transfer_mode("full"), transfer_mode::full);
  EXPECT_EQ(parse_transfer_mode("Full"), transfer_mode::full);
  EXPECT_EQ(parse_transfer_mode("DELTA"), transfer_mode::delta);
  EXPECT_EQ(parse_transfer_mode(""), transfer_mode::legacy);
  EXPECT_EQ(parse_transfer_mode("patch"), transfer_mode::patch);
  EXPECT_EQ(parse_transfer_mode("Patch"), transfer_mode::patch);
  EXPECT_EQ(parse_transfer_mode("patches"), transfer_mode::legacy);
  EXPECT_EQ(parse_transfer_mode("full "), transfer_mode::legacy);
  EXPECT_EQ(to_string(transfer_mode::delta), "delta");
  EXPECT_EQ(to_string(transfer_mode::patch), "patch");
}

TEST(EncodeServerFrames, ExactShapes) {
  EXPECT_EQ(
      encode_connected("3f2504e0-4f89-11d3-9a0c-0305e82c3301", 30000),
      R"({"type":"Connected","payload":"3f2504e0-4f89-11d3-9a0c-0305e82c3301","keepAliveIntervalMs":30000,"supportsSubscriptionRevisions":true})");
  EXPECT_EQ(
      encode_connected("c", 0),
      R"({"type":"Connected","payload":"c","keepAliveIntervalMs":0,"supportsSubscriptionRevisions":true})");
  EXPECT_EQ(encode_ping(1764470000000), R"({"type":"Ping","timestamp":1764470000000})");
  EXPECT_EQ(encode_pong(-3), R"({"type":"Pong","timestamp":-3})");
  EXPECT_EQ(encode_error("q1", 3, hub_error_text::query_failed),
            R"({"type":"Error","queryId":"q1","revision":3,"payload":"Observable query failed"})");
  EXPECT_EQ(encode_error("q1", std::nullopt, hub_error_text::unknown_query),
            R"({"type":"Error","queryId":"q1","payload":"Unknown observable query"})");
  EXPECT_EQ(encode_error(std::nullopt, std::nullopt, hub_error_text::malformed),
            R"({"type":"Error","payload":"Malformed query control"})");
  EXPECT_EQ(encode_unauthorized("q1", 3), R"({"type":"Unauthorized","queryId":"q1","revision":3})");
  EXPECT_EQ(encode_unauthorized("q1", std::nullopt), R"({"type":"Unauthorized","queryId":"q1"})");
}

TEST(EncodeServerFrames, EscapesStrings) {
  const std::string nasty = std::string("a\"b\\c\n\t\x01\x1f/\xC3\xA9") + '\0';
  const auto frame = encode_error(nasty, std::nullopt, nasty);
  const auto parsed = boost::json::parse(frame).as_object();
  EXPECT_EQ(parsed.at("queryId").as_string(), nasty);
  EXPECT_EQ(parsed.at("payload").as_string(), nasty);
  EXPECT_EQ(boost::json::parse(encode_connected(nasty, 1)).at("payload").as_string(), nasty);
}

TEST(AppendJsonString, MatchesBoostJsonForEveryByte) {
  std::string all;
  for (int c = 1; c < 0x80; ++c) {
    all += static_cast<char>(c);
  }
  all += '\0';
  all += "\xE2\x82\xAC";
  std::string out;
  append_json_string(out, all);
  EXPECT_EQ(out, boost::json::serialize(boost::json::string_view(all)));
}

}  // namespace
}  // namespace weir::core

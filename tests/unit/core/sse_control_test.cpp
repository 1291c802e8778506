// Tests for core/sse_control: the SSE control POST checks of arc-hub §8 (content type, body cap,
// early and late 400s) and the `data:` framing of §7.
#include "core/sse_control.hpp"

#include <gtest/gtest.h>

#include <string>

namespace weir::core {
namespace {

constexpr auto subscribe = sse_control_kind::subscribe;
constexpr auto unsubscribe = sse_control_kind::unsubscribe;

void expect_early_400(sse_control_kind kind, std::string_view body) {
  const auto r = parse_sse_control(kind, body);
  ASSERT_FALSE(r.has_value()) << body;
  EXPECT_EQ(r.error().code, "sse.bad_request") << body;
}

sse_control_parse parsed(sse_control_kind kind, std::string_view body) {
  auto r = parse_sse_control(kind, body);
  EXPECT_TRUE(r.has_value()) << body;
  return r.has_value() ? std::move(r).value() : sse_control_parse{};
}

void expect_late_400(sse_control_kind kind, std::string_view body) {
  const auto r = parse_sse_control(kind, body);
  ASSERT_TRUE(r.has_value()) << body;
  EXPECT_EQ(r->late_error_status, 400u) << body;
}

// --- Step 1: Content-Type -----------------------------------------------------------------

TEST(SseControlContentType, AcceptsJsonWithOptionalUtf8Charset) {
  EXPECT_TRUE(sse_control_content_type_ok("application/json"));
  EXPECT_TRUE(sse_control_content_type_ok("Application/JSON"));
  EXPECT_TRUE(sse_control_content_type_ok("application/json; charset=utf-8"));
  EXPECT_TRUE(sse_control_content_type_ok("application/json;charset=utf-8"));
  EXPECT_TRUE(sse_control_content_type_ok("application/json ;  charset=UTF-8"));
  EXPECT_TRUE(sse_control_content_type_ok("APPLICATION/JSON;\tCHARSET=UTF-8"));
}

TEST(SseControlContentType, RefusesEverythingElse) {
  EXPECT_FALSE(sse_control_content_type_ok(std::nullopt));
  for (std::string_view bad : {
           "",
           "text/plain",
           "application/jsonx",
           "application/json;",
           "application/json; charset=utf-16",
           "application/json; charset=\"utf-8\"",
           "application/json; charset=utf-8; boundary=x",
           "application/json; charset=utf-8 ",
           "application/json charset=utf-8",
           "application/problem+json",
           "application/vnd.api+json",
           " application/json",
           "application/json ",
           "application/x-www-form-urlencoded",
           "multipart/form-data",
       }) {
    EXPECT_FALSE(sse_control_content_type_ok(bad)) << '"' << bad << '"';
  }
}

// --- Step 2: body cap -----------------------------------------------------------------------

TEST(SseControlBodyLimit, IsTheSmallerOfTheTwoCaps) {
  EXPECT_EQ(sse_control_body_limit(1u << 20, 65536), 65536u);
  EXPECT_EQ(sse_control_body_limit(1000, 65536), 1000u);
  EXPECT_EQ(sse_control_body_limit(4096, 4096), 4096u);
}

// --- Step 3 and 5: body -----------------------------------------------------------------------

TEST(SseControlParse, FullSubscribe) {
  const auto p = parsed(
      subscribe,
      R"({"connectionId":"11111111-1111-1111-1111-111111111111","queryId":"accounts-list","revision":1,"request":{"queryName":"Banking.Accounts.DebitAccount.ObserveAccounts","arguments":{"minimumBalance":"0"},"transferMode":"full"}})");
  EXPECT_FALSE(p.late_error_status.has_value());
  EXPECT_EQ(p.control.kind, subscribe);
  EXPECT_EQ(p.control.connection_id, "11111111-1111-1111-1111-111111111111");
  EXPECT_EQ(p.control.query_id, "accounts-list");
  EXPECT_EQ(p.control.revision, 1u);
  EXPECT_EQ(p.control.request.query_name, "Banking.Accounts.DebitAccount.ObserveAccounts");
  ASSERT_EQ(p.control.request.arguments.size(), 1u);
  EXPECT_EQ(p.control.request.arguments[0].first, "minimumBalance");
  EXPECT_EQ(p.control.request.mode, transfer_mode::full);
}

TEST(SseControlParse, Unsubscribe) {
  const auto p = parsed(unsubscribe, R"({"connectionId":"c1","queryId":"q1","revision":7})");
  EXPECT_FALSE(p.late_error_status.has_value());
  EXPECT_EQ(p.control.kind, unsubscribe);
  EXPECT_EQ(p.control.connection_id, "c1");
  EXPECT_EQ(p.control.query_id, "q1");
  EXPECT_EQ(p.control.revision, 7u);
}

TEST(SseControlParse, AbsentOrNullRevisionIsLegacy) {
  EXPECT_EQ(parsed(unsubscribe, R"({"connectionId":"c","queryId":"q"})").control.revision,
            std::nullopt);
  const auto p = parsed(unsubscribe, R"({"connectionId":"c","queryId":"q","revision":null})");
  EXPECT_EQ(p.control.revision, std::nullopt);
  EXPECT_FALSE(p.late_error_status.has_value());
  const auto s =
      parsed(subscribe,
             R"({"connectionId":"c","queryId":"q","revision":null,"request":{"queryName":"A"}})");
  EXPECT_EQ(s.control.revision, std::nullopt);
  EXPECT_FALSE(s.late_error_status.has_value());
}

TEST(SseControlParse, LargestSafeRevision) {
  const auto p =
      parsed(unsubscribe, R"({"connectionId":"c","queryId":"q","revision":9007199254740991})");
  EXPECT_EQ(p.control.revision, 9007199254740991u);
  EXPECT_FALSE(p.late_error_status.has_value());
}

TEST(SseControlParse, EarlyBadRequestsForShape) {
  for (auto kind : {subscribe, unsubscribe}) {
    expect_early_400(kind, "");
    expect_early_400(kind, "not json");
    expect_early_400(kind, R"({"connectionId":"c","queryId":"q")");  // truncated
    expect_early_400(kind, "[]");
    expect_early_400(kind, "null");
    expect_early_400(kind, R"("c")");
    expect_early_400(kind, R"({"queryId":"q","request":{"queryName":"A"}})");
    expect_early_400(kind, R"({"connectionId":null,"queryId":"q","request":{"queryName":"A"}})");
    expect_early_400(kind, R"({"connectionId":42,"queryId":"q","request":{"queryName":"A"}})");
    expect_early_400(kind, R"({"connectionId":"","queryId":"q","request":{"queryName":"A"}})");
    expect_early_400(kind, R"({"connectionId":"c","request":{"queryName":"A"}})");
    expect_early_400(kind, R"({"connectionId":"c","queryId":null,"request":{"queryName":"A"}})");
    expect_early_400(kind, R"({"connectionId":"c","queryId":1,"request":{"queryName":"A"}})");
    expect_early_400(kind, R"({"connectionId":"c","queryId":["q"],"request":{"queryName":"A"}})");
  }
  // Invalid UTF-8 is not JSON.
  expect_early_400(unsubscribe, "{\"connectionId\":\"c\xff\",\"queryId\":\"q\"}");
}

TEST(SseControlParse, SubscribeNeedsAValidRequest) {
  expect_early_400(subscribe, R"({"connectionId":"c","queryId":"q"})");
  expect_early_400(subscribe, R"({"connectionId":"c","queryId":"q","request":null})");
  expect_early_400(subscribe, R"({"connectionId":"c","queryId":"q","request":"A"})");
  expect_early_400(subscribe, R"({"connectionId":"c","queryId":"q","request":{}})");
  expect_early_400(subscribe,
                   R"({"connectionId":"c","queryId":"q","request":{"queryName":"A","bogus":1}})");
  expect_early_400(
      subscribe,
      R"({"connectionId":"c","queryId":"q","request":{"queryName":"A","pageSize":1001}})");
  expect_early_400(
      subscribe,
      R"({"connectionId":"c","queryId":"q","request":{"queryName":"A","transferMode":1}})");
  // The request's badness is early even when queryId/revision are also bad.
  expect_early_400(subscribe, R"({"connectionId":"c","queryId":"","revision":0,"request":{}})");
}

TEST(SseControlParse, UnsubscribeIgnoresRequest) {
  const auto p =
      parsed(unsubscribe, R"({"connectionId":"c","queryId":"q","request":{"bogus":true}})");
  EXPECT_FALSE(p.late_error_status.has_value());
  EXPECT_EQ(p.control.query_id, "q");
}

TEST(SseControlParse, UnknownTopLevelMembersAreIgnored) {
  const auto p = parsed(
      subscribe,
      R"({"connectionId":"c","queryId":"q","request":{"queryName":"A"},"type":"Subscribe","extra":{"x":1}})");
  EXPECT_FALSE(p.late_error_status.has_value());
  EXPECT_EQ(p.control.request.query_name, "A");
}

TEST(SseControlParse, LateBadRequestForInvalidQueryId) {
  for (auto kind : {subscribe, unsubscribe}) {
    const std::string req = R"(,"request":{"queryName":"A"}})";
    expect_late_400(kind, R"({"connectionId":"c","queryId":"")" + req);
    expect_late_400(kind, R"({"connectionId":"c","queryId":"a b")" + req);
    expect_late_400(kind, R"({"connectionId":"c","queryId":"q.1")" + req);
    expect_late_400(kind, R"({"connectionId":"c","queryId":")" + std::string(257, 'a') + '"' + req);
  }
  // The connection id still comes through for the 404 lookup that must run first.
  const auto p = parsed(unsubscribe, R"({"connectionId":"conn-9","queryId":"bad id"})");
  EXPECT_EQ(p.control.connection_id, "conn-9");
  EXPECT_EQ(p.late_error_status, 400u);
}

TEST(SseControlParse, LongestQueryIdIsFine) {
  const auto p =
      parsed(unsubscribe, R"({"connectionId":"c","queryId":")" + std::string(256, 'a') + R"("})");
  EXPECT_FALSE(p.late_error_status.has_value());
}

TEST(SseControlParse, LateBadRequestForInvalidRevision) {
  for (std::string_view rev : {"0", "-1", "\"1\"", "1.5", "1.0", "1e0", "9007199254740992",
                               "18446744073709551616", "true", "{}", "[1]"}) {
    const std::string unsub =
        R"({"connectionId":"c","queryId":"q","revision":)" + std::string(rev) + "}";
    expect_late_400(unsubscribe, unsub);
    const std::string sub = R"({"connectionId":"c","queryId":"q","revision":)" + std::string(rev) +
                            R"(,"request":{"queryName":"A"}})";
    expect_late_400(subscribe, sub);
    const auto p = parsed(unsubscribe, unsub);
    EXPECT_EQ(p.control.revision, std::nullopt) << rev;
    EXPECT_EQ(p.control.connection_id, "c");
  }
}

// --- §7 framing -------------------------------------------------------------------------------

TEST(SseData, FramesOneMessage) {
  EXPECT_EQ(encode_sse_data(R"({"type":"Ping","timestamp":1})"),
            "data: {\"type\":\"Ping\",\"timestamp\":1}\n\n");
  EXPECT_EQ(encode_sse_data(encode_connected("c1", 30000)),
            "data: "
            "{\"type\":\"Connected\",\"payload\":\"c1\",\"keepAliveIntervalMs\":30000,"
            "\"supportsSubscriptionRevisions\":true}\n\n");
  // An escaped newline inside a JSON string is fine: it is two characters, not a line break.
  EXPECT_EQ(encode_sse_data(encode_error("q", std::nullopt, "a\nb")),
            "data: {\"type\":\"Error\",\"queryId\":\"q\",\"payload\":\"a\\nb\"}\n\n");
}

#ifndef NDEBUG
TEST(SseDataDeathTest, RawNewlineIsAProgrammerError) {
  EXPECT_DEATH((void)encode_sse_data("{\"a\":\n1}"), "single-line");
  EXPECT_DEATH((void)encode_sse_data("{\"a\":\r1}"), "single-line");
}
#endif

}  // namespace
}  // namespace weir::core

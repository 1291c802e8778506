// Tests for core/query_result: the shared body + per-subscriber prefix make a valid §2/§3 frame,
// and the §5 transfer-mode frame shapes as a hub caller builds them.
#include "core/query_result.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/change_set.hpp"
#include "core/transfer_mode.hpp"

namespace weir::core {
namespace {

boost::json::object parse_object(const std::string& text) {
  boost::json::error_code ec;
  auto v = boost::json::parse(text, ec);
  EXPECT_FALSE(ec) << text;
  EXPECT_TRUE(v.is_object()) << text;
  return v.is_object() ? v.as_object() : boost::json::object{};
}

std::string hub_frame(std::string_view query_id, std::optional<std::uint64_t> revision,
                      std::string_view correlation_id, const std::string& body) {
  return encode_query_result_prefix(query_id, revision, correlation_id) + body +
         std::string(query_result_suffix);
}

const char* const corr = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

void expect_success_members(const boost::json::object& payload) {
  EXPECT_EQ(payload.at("isReady"), true);
  EXPECT_EQ(payload.at("isAuthorized"), true);
  EXPECT_EQ(payload.at("isValid"), true);
  EXPECT_EQ(payload.at("hasExceptions"), false);
  EXPECT_EQ(payload.at("isSuccess"), true);
  EXPECT_EQ(payload.at("validationResults"), boost::json::array{});
  EXPECT_EQ(payload.at("exceptionMessages"), boost::json::array{});
  EXPECT_EQ(payload.at("exceptionStackTrace"), "");
}

TEST(QueryResultBody, ExactBytesForTheDefaultShape) {
  EXPECT_EQ(
      encode_query_result_body(nullptr, nullptr, paging_info{}),
      R"(,"isReady":true,"isAuthorized":true,"isValid":true,"hasExceptions":false,"isSuccess":true,"validationResults":[],"exceptionMessages":[],"exceptionStackTrace":"","paging":{"page":0,"size":0,"totalItems":0,"totalPages":0}})");
  const std::string data = "[1,2]";
  const change_set cs{};
  EXPECT_EQ(
      encode_query_result_body(&data, &cs, paging_info{}),
      R"(,"data":[1,2],"changeSet":{"added":[],"replaced":[],"removed":[]},"isReady":true,"isAuthorized":true,"isValid":true,"hasExceptions":false,"isSuccess":true,"validationResults":[],"exceptionMessages":[],"exceptionStackTrace":"","paging":{"page":0,"size":0,"totalItems":0,"totalPages":0}})");
}

// The hot path (records' own JSON written in place) and the general encoder are one encoder:
// the same members give the same bytes.
TEST(QueryResultBody, RecordsWrittenInPlaceGiveTheGeneralEncodersBytes) {
  const std::vector<record_ptr> rows{parse_record(R"({"id":"a","n":1})"),
                                     parse_record(R"({"id":"b","s":"x y"})")};
  const std::vector<record_ptr> none;
  std::string data;
  append_record_array(data, rows);
  EXPECT_EQ(data, R"([{"id":"a","n":1},{"id":"b","s":"x y"}])");
  std::string cs_json;
  append_change_set(cs_json, rows, none, {rows[1]});
  const paging_info paging{3, 50, 1001};

  change_set cs;
  cs.added = boost::json::parse(data).as_array();
  cs.removed.push_back(boost::json::parse(rows[1]->json));
  EXPECT_EQ(encode_result_body(data, cs_json, paging),
            encode_query_result_body(&data, &cs, paging));

  result_body_builder b(data.size());
  append_record_array(b.member("data"), rows);
  b.member("changeSet") += cs_json;
  EXPECT_EQ(b.finish(paging), encode_result_body(data, cs_json, paging));

  const auto p =
      parse_object("{\"correlationId\":\"c\"" + encode_result_body(data, cs_json, paging));
  EXPECT_EQ(p.at("paging").at("totalPages"), 21);
  EXPECT_EQ(p.at("changeSet").at("removed").as_array().size(), 1u);
}

// Paging members are unsigned 64-bit counts, written in full at the largest value.
TEST(QueryResultBody, PagingCarriesTheLargestCounts) {
  constexpr std::uint64_t big = ~std::uint64_t{0};
  const auto body = encode_result_body(std::nullopt, std::nullopt, paging_info{big, 1, big});
  EXPECT_NE(
      body.find(
          R"("page":18446744073709551615,"size":1,"totalItems":18446744073709551615,"totalPages":18446744073709551615})"),
      std::string::npos)
      << body;
}

// A patch-mode emission: `patch` and no `data`.
TEST(QueryResultBody, PatchMemberAlone) {
  const auto p = parse_object("{\"correlationId\":\"c\"" +
                              encode_result_body(std::nullopt, std::nullopt, {},
                                                 R"([{"op":"replace","path":"/a","value":2}])"));
  EXPECT_FALSE(p.contains("data"));
  EXPECT_FALSE(p.contains("changeSet"));
  EXPECT_EQ(p.at("patch").as_array().size(), 1u);
  expect_success_members(p);
}

TEST(QueryResultFrame, PrefixBodySuffixIsAValidHubFrame) {
  const std::string data = R"([{"id":1,"name":"Ada"}])";
  change_set cs;
  cs.added.push_back(boost::json::parse(R"({"id":1,"name":"Ada"})"));
  const std::string body = encode_query_result_body(&data, &cs, paging_info{2, 10, 25});
  const auto frame = parse_object(hub_frame("q1", 3, corr, body));

  ASSERT_EQ(frame.size(), 4u);
  EXPECT_EQ(frame.at("type"), "QueryResult");
  EXPECT_EQ(frame.at("queryId"), "q1");
  EXPECT_EQ(frame.at("revision"), 3);
  const auto& payload = frame.at("payload").as_object();
  EXPECT_EQ(payload.at("correlationId"), corr);
  EXPECT_EQ(boost::json::serialize(payload.at("data")), data);
  const auto& change = payload.at("changeSet").as_object();
  ASSERT_EQ(change.size(), 3u);
  EXPECT_EQ(boost::json::serialize(change.at("added")), data);
  EXPECT_EQ(change.at("replaced"), boost::json::array{});
  EXPECT_EQ(change.at("removed"), boost::json::array{});
  expect_success_members(payload);
  const auto& paging = payload.at("paging").as_object();
  EXPECT_EQ(paging.at("page"), 2);
  EXPECT_EQ(paging.at("size"), 10);
  EXPECT_EQ(paging.at("totalItems"), 25);
  EXPECT_EQ(paging.at("totalPages"), 3);
  EXPECT_EQ(payload.size(), 12u);

  // Member order is part of the shape: type, queryId, revision, payload; correlationId first.
  std::vector<std::string> keys;
  for (const auto& m : frame) {
    keys.emplace_back(m.key());
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"type", "queryId", "revision", "payload"}));
  EXPECT_EQ(payload.begin()->key(), "correlationId");
}

TEST(QueryResultFrame, OneBodyServesManySubscribers) {
  const std::string data = "[]";
  const std::string body = encode_query_result_body(&data, nullptr, paging_info{});
  const auto a = parse_object(hub_frame("first", 1, corr, body));
  const auto b = parse_object(hub_frame("second-id", std::nullopt, "other", body));
  EXPECT_EQ(a.at("queryId"), "first");
  EXPECT_EQ(b.at("queryId"), "second-id");
  EXPECT_FALSE(b.contains("revision"));  // legacy: omitted, never null
  EXPECT_EQ(b.at("payload").at("correlationId"), "other");
  EXPECT_EQ(a.at("payload").at("data"), b.at("payload").at("data"));
}

TEST(QueryResultFrame, PrefixEscapesIds) {
  const auto frame =
      parse_object(hub_frame("q\"1", 1, "c\\2", encode_query_result_body(nullptr, nullptr, {})));
  EXPECT_EQ(frame.at("queryId"), "q\"1");
  EXPECT_EQ(frame.at("payload").at("correlationId"), "c\\2");
}

TEST(QueryResultBare, IsTheDirectTransportPayload) {
  const std::string data = R"({"name":"x"})";
  const auto body = encode_query_result_body(&data, nullptr, paging_info{});
  const auto bare = encode_bare_query_result(corr, body);
  const auto payload = parse_object(bare);
  EXPECT_EQ(payload.at("correlationId"), corr);
  EXPECT_EQ(payload.at("data").at("name"), "x");
  EXPECT_FALSE(payload.contains("changeSet"));
  EXPECT_FALSE(payload.contains("type"));
  expect_success_members(payload);
}

TEST(QueryResultStatus, DerivedMembersFollowTheStatus) {
  query_result_status not_ready;
  not_ready.is_ready = false;
  auto p = parse_object(
      encode_bare_query_result(corr, encode_query_result_body(nullptr, nullptr, {}, not_ready)));
  EXPECT_EQ(p.at("isReady"), false);
  EXPECT_EQ(p.at("isSuccess"), false);
  EXPECT_EQ(p.at("isValid"), true);
  EXPECT_FALSE(p.contains("data"));

  query_result_status denied;
  denied.is_authorized = false;
  p = parse_object(
      encode_bare_query_result(corr, encode_query_result_body(nullptr, nullptr, {}, denied)));
  EXPECT_EQ(p.at("isAuthorized"), false);
  EXPECT_EQ(p.at("isSuccess"), false);

  query_result_status invalid;
  invalid.validation_results.push_back(boost::json::parse(
      R"({"severity":2,"message":"bad","members":["x"],"reason":"malformedRequest"})"));
  p = parse_object(
      encode_bare_query_result(corr, encode_query_result_body(nullptr, nullptr, {}, invalid)));
  EXPECT_EQ(p.at("isValid"), false);
  EXPECT_EQ(p.at("isSuccess"), false);
  EXPECT_EQ(p.at("validationResults").as_array().size(), 1u);
  EXPECT_EQ(p.at("validationResults").at(0).at("reason"), "malformedRequest");

  query_result_status failed;
  failed.exception_messages = {"An unexpected error occurred", "line\nbreak"};
  failed.exception_stack_trace = "at \"x\"";
  p = parse_object(
      encode_bare_query_result(corr, encode_query_result_body(nullptr, nullptr, {}, failed)));
  EXPECT_EQ(p.at("hasExceptions"), true);
  EXPECT_EQ(p.at("isSuccess"), false);
  EXPECT_EQ(p.at("isValid"), true);
  EXPECT_EQ(p.at("exceptionMessages").at(0), "An unexpected error occurred");
  EXPECT_EQ(p.at("exceptionMessages").at(1), "line\nbreak");
  EXPECT_EQ(p.at("exceptionStackTrace"), "at \"x\"");
}

TEST(Paging, TotalPagesIsCeilOrZero) {
  EXPECT_EQ(total_pages(paging_info{0, 0, 0}), 0u);
  EXPECT_EQ(total_pages(paging_info{0, 0, 50}), 0u);
  EXPECT_EQ(total_pages(paging_info{0, 10, 0}), 0u);
  EXPECT_EQ(total_pages(paging_info{0, 10, 1}), 1u);
  EXPECT_EQ(total_pages(paging_info{0, 10, 10}), 1u);
  EXPECT_EQ(total_pages(paging_info{0, 10, 11}), 2u);
  EXPECT_EQ(total_pages(paging_info{0, 1, UINT64_MAX}), UINT64_MAX);
  EXPECT_EQ(total_pages(paging_info{0, 2, UINT64_MAX}), UINT64_MAX / 2 + 1);
}

// A minimal hub caller: per-subscription baseline, advanced after each (successful) write.
class subscriber {
 public:
  explicit subscriber(transfer_mode mode) : mode_(mode) {}

  boost::json::object emit(const boost::json::value& data) {
    const bool is_array = data.is_array();
    const emission_shape shape = plan_emission(mode_, is_array, !baseline_.has_value());
    std::optional<std::string> data_json;
    std::optional<change_set> cs;
    if (shape.data) {
      data_json = boost::json::serialize(data);
    }
    if (shape.change_set) {
      cs = compute_change_set(baseline_ ? *baseline_ : boost::json::array{}, data.as_array());
    }
    const std::string body = encode_query_result_body(data_json ? &*data_json : nullptr,
                                                      cs ? &*cs : nullptr, paging_info{});
    const auto frame = parse_object(hub_frame("q", 1, corr, body));
    baseline_ = is_array ? data.as_array() : boost::json::array{};
    return frame.at("payload").as_object();
  }

 private:
  transfer_mode mode_;
  std::optional<boost::json::array> baseline_;
};

const boost::json::value snap1 = boost::json::parse(R"([{"id":1,"v":"a"},{"id":2,"v":"b"}])");
const boost::json::value snap2 = boost::json::parse(R"([{"id":2,"v":"B"},{"id":3,"v":"c"}])");

TEST(TransferModes, FullSendsDataAndNeverAChangeSet) {
  subscriber sub(transfer_mode::full);
  for (const auto* snap : {&snap1, &snap2}) {
    const auto p = sub.emit(*snap);
    EXPECT_EQ(p.at("data"), *snap);
    EXPECT_FALSE(p.contains("changeSet"));
    expect_success_members(p);
  }
}

TEST(TransferModes, DeltaSendsDataFirstThenOnlyChangeSets) {
  subscriber sub(transfer_mode::delta);
  auto p = sub.emit(snap1);
  EXPECT_EQ(p.at("data"), snap1);
  EXPECT_FALSE(p.contains("changeSet"));

  p = sub.emit(snap2);
  EXPECT_FALSE(p.contains("data"));
  const auto& cs = p.at("changeSet").as_object();
  EXPECT_EQ(cs.at("added"), boost::json::parse(R"([{"id":3,"v":"c"}])"));
  EXPECT_EQ(cs.at("replaced"), boost::json::parse(R"([{"id":2,"v":"B"}])"));
  EXPECT_EQ(cs.at("removed"), boost::json::parse(R"([{"id":1,"v":"a"}])"));
  expect_success_members(p);
  EXPECT_TRUE(p.contains("paging"));
  EXPECT_TRUE(p.contains("correlationId"));

  p = sub.emit(snap2);  // nothing changed: an empty change set, still no data
  EXPECT_FALSE(p.contains("data"));
  EXPECT_EQ(p.at("changeSet").at("added"), boost::json::array{});
  EXPECT_EQ(p.at("changeSet").at("replaced"), boost::json::array{});
  EXPECT_EQ(p.at("changeSet").at("removed"), boost::json::array{});
}

TEST(TransferModes, LegacySendsDataAndChangeSetStartingWithAllAdded) {
  subscriber sub(transfer_mode::legacy);
  auto p = sub.emit(snap1);
  EXPECT_EQ(p.at("data"), snap1);
  EXPECT_EQ(p.at("changeSet").at("added"), snap1);
  EXPECT_EQ(p.at("changeSet").at("replaced"), boost::json::array{});
  EXPECT_EQ(p.at("changeSet").at("removed"), boost::json::array{});

  p = sub.emit(snap2);
  EXPECT_EQ(p.at("data"), snap2);
  EXPECT_EQ(p.at("changeSet").at("added"), boost::json::parse(R"([{"id":3,"v":"c"}])"));
  EXPECT_EQ(p.at("changeSet").at("replaced"), boost::json::parse(R"([{"id":2,"v":"B"}])"));
  EXPECT_EQ(p.at("changeSet").at("removed"), boost::json::parse(R"([{"id":1,"v":"a"}])"));
}

TEST(TransferModes, NonArrayDataNeverGetsAChangeSet) {
  const auto obj1 = boost::json::parse(R"({"count":1})");
  const auto obj2 = boost::json::parse(R"({"count":2})");
  for (auto mode : {transfer_mode::legacy, transfer_mode::full, transfer_mode::delta}) {
    subscriber sub(mode);
    for (const auto* v : {&obj1, &obj2}) {
      const auto p = sub.emit(*v);
      EXPECT_EQ(p.at("data"), *v);
      EXPECT_FALSE(p.contains("changeSet"));
    }
    const auto p = sub.emit(boost::json::value(42));
    EXPECT_EQ(p.at("data"), 42);
    EXPECT_FALSE(p.contains("changeSet"));
  }
}

TEST(PlanEmission, Matrix) {
  using m = transfer_mode;
  auto eq = [](emission_shape s, bool data, bool cs, bool patch = false) {
    return s.data == data && s.change_set == cs && s.patch == patch;
  };
  EXPECT_TRUE(eq(plan_emission(m::full, true, true), true, false));
  EXPECT_TRUE(eq(plan_emission(m::full, true, false), true, false));
  EXPECT_TRUE(eq(plan_emission(m::delta, true, true), true, false));
  EXPECT_TRUE(eq(plan_emission(m::delta, true, false), false, true));
  EXPECT_TRUE(eq(plan_emission(m::legacy, true, true), true, true));
  EXPECT_TRUE(eq(plan_emission(m::legacy, true, false), true, true));
  // patch: a collection behaves as delta; a single document gets data, then patches.
  EXPECT_TRUE(eq(plan_emission(m::patch, true, true), true, false));
  EXPECT_TRUE(eq(plan_emission(m::patch, true, false), false, true));
  EXPECT_TRUE(eq(plan_emission(m::patch, false, true), true, false));
  EXPECT_TRUE(eq(plan_emission(m::patch, false, false), false, false, true));
  for (auto mode : {m::full, m::delta, m::legacy}) {
    for (bool first : {true, false}) {
      EXPECT_TRUE(eq(plan_emission(mode, false, first), true, false));
    }
  }
}

}  // namespace
}  // namespace weir::core

// gateway/cross_unit_batch: the route, the body → writes mapping and the answer's encoding.
#include "gateway/cross_unit_batch.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace weir::gateway {
namespace {

namespace json = boost::json;

core::result<std::vector<actors::write_command>> parse(std::string_view text,
                                                       std::string_view key = "") {
  return parse_cross_unit_batch("t", json::parse(text), key, core::document_limits{});
}

TEST(CrossUnitBatchRoute, MatchesOnlyItsPath) {
  auto m = match_cross_unit_batch("POST", "/v1/spaces/my%20space/batch");
  ASSERT_TRUE(m && *m);
  EXPECT_EQ(**m, "my space");
  m = match_cross_unit_batch("PUT", "/v1/spaces/t/batch");
  ASSERT_TRUE(m);
  ASSERT_FALSE(*m);
  EXPECT_EQ(m->error().code, "method.not_allowed");
  EXPECT_EQ(m->error().details.at("allow"), "POST");
  m = match_cross_unit_batch("POST", "/v1/spaces/%zz/batch");
  ASSERT_TRUE(m && !*m);
  EXPECT_EQ(m->error().code, "request.invalid_field");
  EXPECT_FALSE(match_cross_unit_batch("POST", "/v1/spaces/t/objects/batch"));
  EXPECT_FALSE(match_cross_unit_batch("POST", "/v1/spaces/t/batch/x"));
  EXPECT_FALSE(match_cross_unit_batch("POST", "/v2/spaces/t/batch"));
}

TEST(CrossUnitBatchBody, EachWriteIsTheBatchOfItsDataset) {
  auto w = parse(R"({"writes":[
      {"objectId":"a","dataset":"d","upsert":[{"id":"1"}]},
      {"dataset":"e","delete":["2"],"objectId":"b"}]})",
                 "key-1");
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_EQ(w->size(), 2u);
  const auto& first = (*w)[0];
  EXPECT_EQ(first.kind, actors::write_kind::batch);
  EXPECT_EQ(first.space, "t");
  EXPECT_EQ(first.object, "a");
  EXPECT_EQ(first.dataset, "d");
  EXPECT_EQ(first.body, json::parse(R"({"upsert":[{"id":"1"}]})"));
  EXPECT_EQ(first.idempotency_key, "key-1#0");
  EXPECT_EQ((*w)[1].object, "b");
  EXPECT_EQ((*w)[1].body, json::parse(R"({"delete":["2"]})"));
  EXPECT_EQ((*w)[1].idempotency_key, "key-1#1");
  auto plain = parse(R"({"writes":[{"objectId":"a","dataset":"d","delete":[]}]})");
  ASSERT_TRUE(plain);
  EXPECT_EQ((*plain)[0].idempotency_key, "");
}

TEST(CrossUnitBatchBody, ErrorsNameTheWrite) {
  auto w = parse(R"({"writes":[{"objectId":"a","dataset":"d","delete":[]},
                               {"objectId":"b","dataset":"d","upsert":[{"id":"x"},{"id":7}]}]})");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().details.at("write"), 1);
  EXPECT_EQ(w.error().details.at("index"), 1);  // the record within that write
  w = parse(R"({"writes":[{"objectId":"a","dataset":"d","delete":[]},
                          {"objectId":"a","dataset":"e","delete":[]},
                          {"objectId":"a","dataset":"d","delete":["y"]}]})");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, "batch.duplicate_target");
  EXPECT_EQ(w.error().details.at("write"), 2);
  EXPECT_EQ(w.error().details.at("firstWrite"), 0);
  std::string many = R"({"writes":[)";
  for (std::size_t i = 0; i < max_cross_unit_writes; ++i) {
    many += (i ? "," : "") + std::string{R"({"objectId":"o)"} + std::to_string(i) +
            R"(","dataset":"d","delete":[]})";
  }
  EXPECT_TRUE(parse(many + "]}"));
  EXPECT_EQ(parse(many + R"(,{"objectId":"z","dataset":"d","delete":[]}]})").error().code,
            "batch.too_many_writes");
}

TEST(CrossUnitBatchAnswer, ListsEveryOutcomeInOrder) {
  std::vector<std::optional<core::result<actors::write_outcome>>> outcomes;
  outcomes.emplace_back(actors::write_outcome{"v1", false});
  outcomes.emplace_back(core::make_error("server.overloaded", "busy"));
  outcomes.emplace_back(actors::write_outcome{"v3", true});
  auto a = json::parse(cross_unit_batch_answer(outcomes));
  EXPECT_EQ(a, json::parse(R"({"writes":[
      {"status":200,"versionId":"v1"},
      {"status":503,"error":{"code":"server.overloaded","message":"busy"}},
      {"status":200,"versionId":"v3","replayed":true}],"failed":1})"));
}

}  // namespace
}  // namespace weir::gateway

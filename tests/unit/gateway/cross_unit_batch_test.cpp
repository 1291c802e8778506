// gateway/cross_unit_batch: the route, the body → writes mapping and the answer's encoding.
#include "gateway/cross_unit_batch.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/idempotency_key.hpp"

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
  // Derived from the key and the target, not the place in the batch.
  EXPECT_EQ(first.idempotency_key, core::batch_write_key("key-1", "a", "d"));
  EXPECT_EQ(first.idempotency_key.size(), 38u);
  EXPECT_TRUE(core::check_idempotency_key(first.idempotency_key));
  EXPECT_EQ((*w)[1].object, "b");
  EXPECT_EQ((*w)[1].body, json::parse(R"({"delete":["2"]})"));
  EXPECT_EQ((*w)[1].idempotency_key, core::batch_write_key("key-1", "b", "e"));
  EXPECT_NE(core::batch_write_key("key-1", "a", "d"), core::batch_write_key("key-2", "a", "d"));
  EXPECT_NE(core::batch_write_key("k", "a\0b", "c"), core::batch_write_key("k", "a", "b\0c"));
  // A caller's longest key still gives a valid one.
  EXPECT_TRUE(core::check_idempotency_key(
      core::batch_write_key(std::string(255, 'k'), std::string(256, 'o'), "d")));
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

TEST(CrossUnitBatchBody, RecordsAreCheckedAsTheirOwnerWillStoreThem) {
  core::document_limits limits;
  limits.max_bytes = 100;
  limits.max_members = 4;
  auto with = [&](std::string_view text, bool nul_allowed = true) {
    return parse_cross_unit_batch("t", json::parse(text), "", limits, nul_allowed);
  };
  // 77 bytes as sent; with `,"_ver":{"id":"…"}` at its longest (29 bytes) it would pass 100.
  std::string pad(60, 'x');
  auto big = with(R"({"writes":[{"objectId":"a","dataset":"d","upsert":[{"id":"1","p":")" + pad +
                  R"("}]}]})");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, "record.too_large");
  EXPECT_EQ(big.error().details.at("write"), 0);
  EXPECT_EQ(big.error().details.at("index"), 0);
  // A client's _ver is dropped before it is measured, as the owner drops it.
  EXPECT_TRUE(with(R"({"writes":[{"objectId":"a","dataset":"d","upsert":[{"id":"1","p":"x",)"
                   R"("_ver":")" +
                   std::string(90, 'v') + R"("}]}]})"));
  // Four members with the stamp's: one more than maxMembers allows.
  auto wide = with(R"({"writes":[{"objectId":"a","dataset":"d","upsert":[{"id":"1","a":1,"b":2,)"
                   R"("c":3}]}]})");
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().code, "record.too_many_members");
  auto nul = R"({"writes":[{"objectId":"a","dataset":"d","upsert":[{"id":"1","a":"x\u0000"}]}]})";
  EXPECT_TRUE(with(nul));
  EXPECT_EQ(with(nul, false).error().code, "record.unsupported_character");
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

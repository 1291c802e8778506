// Tests for core/correlation_id: the UUID shape check and inbound-or-minted selection.
#include "core/correlation_id.hpp"

#include <gtest/gtest.h>

#include <string>

namespace weir::core {
namespace {

constexpr std::string_view minted = "00000000-0000-4000-8000-000000000001";

TEST(CorrelationIdIsUuid, AcceptsCanonicalForms) {
  EXPECT_TRUE(is_uuid("123e4567-e89b-12d3-a456-426614174000"));
  EXPECT_TRUE(is_uuid("123E4567-E89B-12D3-A456-426614174000"));
  EXPECT_TRUE(is_uuid("00000000-0000-0000-0000-000000000000"));
  EXPECT_TRUE(is_uuid("AbCdEf01-2345-6789-aBcD-eF0123456789"));
}

TEST(CorrelationIdIsUuid, RefusesOtherShapes) {
  EXPECT_FALSE(is_uuid(""));
  EXPECT_FALSE(is_uuid("123e4567e89b12d3a456426614174000"));        // no dashes
  EXPECT_FALSE(is_uuid("{123e4567-e89b-12d3-a456-426614174000}"));  // braces
  EXPECT_FALSE(is_uuid("urn:uuid:123e4567-e89b-12d3-a456-426614174000"));
  EXPECT_FALSE(is_uuid(" 123e4567-e89b-12d3-a456-426614174000"));  // whitespace
  EXPECT_FALSE(is_uuid("123e4567-e89b-12d3-a456-426614174000 "));
  EXPECT_FALSE(is_uuid("123e4567-e89b-12d3-a456-42661417400"));    // short
  EXPECT_FALSE(is_uuid("123e4567-e89b-12d3-a456-4266141740000"));  // long
  EXPECT_FALSE(is_uuid("123e4567-e89b-12d3-a456_426614174000"));   // wrong separator
  EXPECT_FALSE(is_uuid("123e4567-e89b-12d3a-456-426614174000"));   // dash misplaced
  EXPECT_FALSE(is_uuid("g23e4567-e89b-12d3-a456-426614174000"));   // not hex
  EXPECT_FALSE(is_uuid("123e4567-e89b-12d3-a456-42661417400\n"));
}

TEST(CorrelationIdFor, ReusesValidInboundVerbatim) {
  EXPECT_EQ(correlation_id_for("123E4567-e89b-12d3-a456-426614174000", std::string(minted)),
            "123E4567-e89b-12d3-a456-426614174000");
}

TEST(CorrelationIdFor, MintsWhenAbsentOrInvalid) {
  EXPECT_EQ(correlation_id_for(std::nullopt, std::string(minted)), minted);
  EXPECT_EQ(correlation_id_for("", std::string(minted)), minted);
  EXPECT_EQ(correlation_id_for("abc\r\nX-Injected: 1", std::string(minted)), minted);
  EXPECT_EQ(correlation_id_for("123e4567e89b12d3a456426614174000", std::string(minted)), minted);
}

}  // namespace
}  // namespace weir::core

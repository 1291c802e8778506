// core::ws framing: client header rules (RFC 6455 §5.2, §5.5), server headers, close payloads,
// UTF-8.
#include "core/ws_framing.hpp"

#include <gtest/gtest.h>

namespace weir::core::ws {
namespace {

std::string masked(std::uint8_t b0, std::string_view payload) {
  std::string f;
  f.push_back(static_cast<char>(b0));
  auto n = payload.size();
  if (n < 126) {
    f.push_back(static_cast<char>(0x80 | n));
  } else {
    f.push_back(static_cast<char>(0x80 | 126));
    f.push_back(static_cast<char>(n >> 8));
    f.push_back(static_cast<char>(n & 0xFF));
  }
  const char mask[4] = {1, 2, 3, 4};
  f.append(mask, 4);
  for (std::size_t i = 0; i < n; ++i) {
    f.push_back(static_cast<char>(payload[i] ^ mask[i & 3]));
  }
  return f;
}

TEST(WsFraming, ParsesAndUnmasksAClientTextFrame) {
  auto f = masked(0x81, "hello");
  frame_header h;
  ASSERT_EQ(parse_client_header(f, h), parse_status::ok);
  EXPECT_TRUE(h.fin);
  EXPECT_EQ(h.op, opcode::text);
  EXPECT_EQ(h.length, 5u);
  EXPECT_EQ(h.size, 6u);
  std::string payload = f.substr(h.size);
  unmask(payload.data(), payload.size(), h.mask);
  EXPECT_EQ(payload, "hello");
}

TEST(WsFraming, IncompleteUntilTheWholeHeaderArrives) {
  auto f = masked(0x81, std::string(300, 'x'));
  frame_header h;
  for (std::size_t n = 0; n < 8; ++n) {
    EXPECT_EQ(parse_client_header(std::string_view{f}.substr(0, n), h), parse_status::incomplete)
        << n;
  }
  ASSERT_EQ(parse_client_header(f, h), parse_status::ok);
  EXPECT_EQ(h.length, 300u);
  EXPECT_EQ(h.size, 8u);
}

TEST(WsFraming, RefusesWhatTheProtocolForbids) {
  frame_header h;
  std::string unmasked = "\x81\x05hello";
  EXPECT_EQ(parse_client_header(unmasked, h), parse_status::protocol_error);
  EXPECT_EQ(parse_client_header(masked(0xC1, "x"), h), parse_status::protocol_error);  // RSV1
  EXPECT_EQ(parse_client_header(masked(0x83, "x"), h), parse_status::protocol_error);  // opcode 3
  EXPECT_EQ(parse_client_header(masked(0x09, "x"), h),
            parse_status::protocol_error);  // fragmented ping
  EXPECT_EQ(parse_client_header(masked(0x89, std::string(126, 'p')), h),
            parse_status::protocol_error);  // control frame over 125 bytes
  std::string nonminimal = "\x81\xFE";
  nonminimal += std::string("\x00\x05", 2) + "abcd";
  EXPECT_EQ(parse_client_header(nonminimal, h), parse_status::protocol_error);
}

TEST(WsFraming, ServerHeadersUseTheShortestLength) {
  std::uint8_t h[10];
  EXPECT_EQ(encode_server_header(opcode::text, 125, h), 2u);
  EXPECT_EQ(h[0], 0x81);
  EXPECT_EQ(h[1], 125);
  EXPECT_EQ(encode_server_header(opcode::text, 126, h), 4u);
  EXPECT_EQ(h[1], 126);
  EXPECT_EQ(h[2], 0);
  EXPECT_EQ(h[3], 126);
  EXPECT_EQ(encode_server_header(opcode::text, 70000, h), 10u);
  EXPECT_EQ(h[1], 127);
  EXPECT_EQ(h[7], 0x01);
  EXPECT_EQ(h[8], 0x11);
  EXPECT_EQ(h[9], 0x70);
  EXPECT_EQ(encode_server_frame(opcode::pong, "ab"), std::string("\x8A\x02"
                                                                 "ab"));
}

TEST(WsFraming, ClosePayloads) {
  auto p = close_payload(1013, "Outbound queue full");
  EXPECT_EQ(static_cast<std::uint8_t>(p[0]), 1013 >> 8);
  EXPECT_EQ(static_cast<std::uint8_t>(p[1]), 1013 & 0xFF);
  EXPECT_EQ(p.substr(2), "Outbound queue full");
  EXPECT_EQ(close_payload(1000, std::string(200, 'r')).size(), 125u);
  EXPECT_EQ(close_code_of(""), 1005);
  EXPECT_EQ(close_code_of(p), 1013);
  EXPECT_EQ(close_code_of("x"), 0);
  EXPECT_EQ(close_code_of(close_payload(1005, "")), 0);  // may not be sent
  EXPECT_EQ(close_code_of(close_payload(4000, "app")), 4000);
}

TEST(WsFraming, Utf8) {
  EXPECT_TRUE(valid_utf8("plain"));
  EXPECT_TRUE(valid_utf8("h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(valid_utf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(valid_utf8("\xE2\x82"));          // truncated
  EXPECT_FALSE(valid_utf8("\xFF"));
}

}  // namespace
}  // namespace weir::core::ws

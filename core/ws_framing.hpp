// weir::core ws_framing — RFC 6455 framing for the server side of a WebSocket after the
// handshake: parsing client frame headers (masked, with the protocol's rules on RSV bits,
// opcodes and control frames), unmasking, encoding unmasked server frame headers, close
// payloads and the UTF-8 check text messages need. The sessions own the socket and batch many
// server frames into one gather write, which a one-message-per-call library cannot do.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/utf8.hpp"

namespace weir::core::ws {

enum class opcode : std::uint8_t {
  continuation = 0x0,
  text = 0x1,
  binary = 0x2,
  close = 0x8,
  ping = 0x9,
  pong = 0xA,
};

struct frame_header {
  bool fin = true;
  opcode op = opcode::text;
  std::uint64_t length = 0;  ///< payload bytes
  std::array<std::uint8_t, 4> mask{};
  std::size_t size = 0;  ///< header bytes (2–14)
};

enum class parse_status {
  incomplete,      ///< more bytes needed for the header
  ok,              ///< `out` holds the header
  protocol_error,  ///< close 1002: unmasked, RSV bits, unknown opcode, bad control frame
};

/// Parses a client frame header at the start of `data` (the payload is not needed).
parse_status parse_client_header(std::string_view data, frame_header& out);

/// XORs `n` bytes at `data` with `mask`, `offset` bytes into the payload.
void unmask(char* data, std::size_t n, const std::array<std::uint8_t, 4>& mask,
            std::size_t offset = 0);

/// Writes the header of an unmasked, final server frame with a payload of `n` bytes into `out`;
/// returns its size (2, 4 or 10).
std::size_t encode_server_header(opcode op, std::uint64_t n, std::uint8_t out[10]);

/// A whole server frame (header + payload), for small control frames.
std::string encode_server_frame(opcode op, std::string_view payload);

/// The payload of a close frame: the code (network order) and the reason, cut to fit the 125
/// bytes of a control frame.
std::string close_payload(std::uint16_t code, std::string_view reason);

/// The code of a received close payload: 1005 (none) when empty, 0 when malformed (a one-byte
/// payload, a code that may not be sent, or a reason that is not UTF-8).
std::uint16_t close_code_of(std::string_view payload);

/// True when `s` is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
using core::valid_utf8;

}  // namespace weir::core::ws

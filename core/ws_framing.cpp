// RFC 6455 framing helpers (§5.2 base framing, §5.5 control frames, §7.4 close codes).
#include "core/ws_framing.hpp"

namespace weir::core::ws {

parse_status parse_client_header(std::string_view data, frame_header& out) {
  if (data.size() < 2) {
    return parse_status::incomplete;
  }
  auto b0 = static_cast<std::uint8_t>(data[0]);
  auto b1 = static_cast<std::uint8_t>(data[1]);
  if (b0 & 0x70) {
    return parse_status::protocol_error;  // RSV1-3 without a negotiated extension
  }
  auto op = b0 & 0x0F;
  bool control = op >= 0x8;
  if (!(op <= 0x2 || (op >= 0x8 && op <= 0xA))) {
    return parse_status::protocol_error;
  }
  if (!(b1 & 0x80)) {
    return parse_status::protocol_error;  // §5.1: a client must mask every frame
  }
  std::uint64_t len = b1 & 0x7F;
  std::size_t size = 2;
  if (len == 126) {
    if (data.size() < 4) {
      return parse_status::incomplete;
    }
    len = (std::uint64_t{static_cast<std::uint8_t>(data[2])} << 8) |
          static_cast<std::uint8_t>(data[3]);
    size = 4;
    if (len < 126) {
      return parse_status::protocol_error;  // not the minimal encoding
    }
  } else if (len == 127) {
    if (data.size() < 10) {
      return parse_status::incomplete;
    }
    len = 0;
    for (int i = 0; i < 8; ++i) {
      len = (len << 8) | static_cast<std::uint8_t>(data[2 + i]);
    }
    size = 10;
    if ((len >> 63) != 0 || len < 65536) {
      return parse_status::protocol_error;
    }
  }
  if (control && (len > 125 || !(b0 & 0x80))) {
    return parse_status::protocol_error;  // §5.5: short and never fragmented
  }
  if (data.size() < size + 4) {
    return parse_status::incomplete;
  }
  for (int i = 0; i < 4; ++i) {
    out.mask[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(data[size + i]);
  }
  out.fin = (b0 & 0x80) != 0;
  out.op = static_cast<opcode>(op);
  out.length = len;
  out.size = size + 4;
  return parse_status::ok;
}

void unmask(char* data, std::size_t n, const std::array<std::uint8_t, 4>& mask,
            std::size_t offset) {
  for (std::size_t i = 0; i < n; ++i) {
    data[i] = static_cast<char>(static_cast<std::uint8_t>(data[i]) ^ mask[(offset + i) & 3]);
  }
}

std::size_t encode_server_header(opcode op, std::uint64_t n, std::uint8_t out[10]) {
  out[0] = static_cast<std::uint8_t>(0x80 | static_cast<std::uint8_t>(op));
  if (n < 126) {
    out[1] = static_cast<std::uint8_t>(n);
    return 2;
  }
  if (n < 65536) {
    out[1] = 126;
    out[2] = static_cast<std::uint8_t>(n >> 8);
    out[3] = static_cast<std::uint8_t>(n & 0xFF);
    return 4;
  }
  out[1] = 127;
  for (int i = 0; i < 8; ++i) {
    out[2 + i] = static_cast<std::uint8_t>((n >> (8 * (7 - i))) & 0xFF);
  }
  return 10;
}

std::string encode_server_frame(opcode op, std::string_view payload) {
  std::uint8_t h[10];
  auto hs = encode_server_header(op, payload.size(), h);
  std::string out(reinterpret_cast<const char*>(h), hs);
  out.append(payload);
  return out;
}

std::string close_payload(std::uint16_t code, std::string_view reason) {
  std::string out;
  out.push_back(static_cast<char>(code >> 8));
  out.push_back(static_cast<char>(code & 0xFF));
  // 123 bytes of reason at most, cut at a character boundary.
  auto r = reason.substr(0, 123);
  while (!r.empty() && !valid_utf8(r)) {
    r.remove_suffix(1);
  }
  out.append(r);
  return out;
}

std::uint16_t close_code_of(std::string_view payload) {
  if (payload.empty()) {
    return 1005;
  }
  if (payload.size() == 1 || !valid_utf8(payload.substr(2))) {
    return 0;
  }
  auto code = static_cast<std::uint16_t>((static_cast<std::uint8_t>(payload[0]) << 8) |
                                         static_cast<std::uint8_t>(payload[1]));
  // §7.4: codes a peer may send.
  bool ok = (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
            (code >= 3000 && code <= 4999);
  return ok ? code : 0;
}

}  // namespace weir::core::ws

// libFuzzer target: the WebSocket hub's inbound framing, as the session reads a byte stream —
// headers at any offset, unmasking, close payloads, UTF-8 validation.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/ws_framing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace wsf = weir::core::ws;
  std::string buf(reinterpret_cast<const char*>(data), size);
  std::size_t pos = 0;
  while (pos < buf.size()) {
    wsf::frame_header h;
    auto st = wsf::parse_client_header(std::string_view{buf}.substr(pos), h);
    if (st != wsf::parse_status::ok) {
      break;
    }
    if (h.length > buf.size() - pos - h.size) {
      break;
    }
    char* payload = buf.data() + pos + h.size;
    auto len = static_cast<std::size_t>(h.length);
    wsf::unmask(payload, len, h.mask);
    std::string_view p{payload, len};
    if (h.op == wsf::opcode::close) {
      (void)wsf::close_code_of(p);
    }
    (void)wsf::valid_utf8(p);
    (void)wsf::encode_server_frame(h.op, p);
    pos += h.size + len;
  }
  return 0;
}

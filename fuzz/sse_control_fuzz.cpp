// libFuzzer target: the body of an SSE hub control POST, subscribe and unsubscribe.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/sse_control.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body{reinterpret_cast<const char*>(data), size};
  (void)weir::core::parse_sse_control(weir::core::sse_control_kind::subscribe, body);
  (void)weir::core::parse_sse_control(weir::core::sse_control_kind::unsubscribe, body);
  return 0;
}

// libFuzzer target: a hub client's text frame (Subscribe, Unsubscribe, Ping, Pong) and the
// SubscriptionRequest inside it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#define WEIR_HOSTILE_JSON_MUTATOR
#include "hostile_json.hpp"

#include "core/hub_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)weir::core::parse_client_frame(std::string_view{reinterpret_cast<const char*>(data), size});
  return 0;
}

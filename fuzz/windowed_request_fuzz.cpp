// libFuzzer target: a windowed query body, for each scope, as snapshot and subscribe.
#include <cstddef>
#include <cstdint>
#include <string_view>

#define WEIR_HOSTILE_JSON_MUTATOR
#include "hostile_json.hpp"

#include "core/windowed_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body{reinterpret_cast<const char*>(data), size};
  for (auto scope : {weir::core::windowed_scope::object, weir::core::windowed_scope::objects,
                     weir::core::windowed_scope::datasets}) {
    for (bool subscribe : {false, true}) {
      (void)weir::core::parse_windowed_request(scope, subscribe, "s", body);
    }
  }
  return 0;
}

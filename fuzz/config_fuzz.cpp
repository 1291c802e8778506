// libFuzzer target: the configuration loader (YAML → node_config), queries, rules and all.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "apps/config/node_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)weir::config::load_config_text(std::string_view{reinterpret_cast<const char*>(data), size},
                                       "fuzz.yaml");
  return 0;
}

// libFuzzer target: the write API's bodies — a record as PUT sends it (normalized and stamped)
// and a PATCH update (parsed, then applied to a record), as the shard applies them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/json/parse.hpp>

#include "core/record_rules.hpp"
#include "core/update_ops.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  boost::json::error_code ec;
  auto v = boost::json::parse(std::string_view{reinterpret_cast<const char*>(data), size}, ec);
  if (ec) {
    return 0;
  }
  if (auto rec = weir::core::normalize_record(v, "r1"); rec) {
    weir::core::stamp_version(*rec, "0000000000000001");
  }
  if (auto spec = weir::core::parse_update(v); spec) {
    boost::json::object doc{{"id", "r1"},
                            {"n", 1},
                            {"tags", boost::json::array{"a", "b"}},
                            {"nested", boost::json::object{{"x", 1.5}}}};
    (void)weir::core::apply_update(*spec, doc);
  }
  return 0;
}

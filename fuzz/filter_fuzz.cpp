// libFuzzer target: the filter language (and projections, which share its paths), parsed and
// matched against a few documents.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/json/parse.hpp>

#include "core/filter.hpp"
#include "core/projection.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  boost::json::error_code ec;
  auto v = boost::json::parse(std::string_view{reinterpret_cast<const char*>(data), size}, ec);
  if (ec) {
    return 0;
  }
  if (auto f = weir::core::filter::parse(v); f) {
    static const boost::json::object docs[] = {
        {{"id", "a"}, {"n", 3}, {"s", "text"}, {"tags", boost::json::array{"x", 1, nullptr}}},
        {{"id", "b"}, {"nested", boost::json::object{{"deep", boost::json::array{1, 2}}}}},
        {}};
    for (const auto& d : docs) {
      (void)f->matches(d);
    }
  }
  (void)weir::core::projection::parse(v);
  return 0;
}

// Correlation-id reuse: only a well-formed UUID is echoed back, so a client cannot inject
// arbitrary text into logs and response headers through it.
#include "core/correlation_id.hpp"

#include <cstddef>
#include <utility>

namespace weir::core {

namespace {

constexpr std::size_t uuid_length = 36;

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool is_dash_position(std::size_t i) {
  return i == 8 || i == 13 || i == 18 || i == 23;
}

}  // namespace

bool is_uuid(std::string_view s) {
  if (s.size() != uuid_length) {
    return false;
  }
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (is_dash_position(i) ? s[i] != '-' : !is_hex(s[i])) {
      return false;
    }
  }
  return true;
}

std::string correlation_id_for(std::optional<std::string_view> inbound, std::string minted) {
  if (inbound && is_uuid(*inbound)) {
    return std::string(*inbound);
  }
  return minted;
}

}  // namespace weir::core

// Transfer-mode parsing and the per-emission shape rules of Arc hub §5.
#include "core/transfer_mode.hpp"

#include <cstddef>

namespace weir::core {

namespace {

bool iequals_ascii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') {
      x = static_cast<char>(x - 'A' + 'a');
    }
    if (y >= 'A' && y <= 'Z') {
      y = static_cast<char>(y - 'A' + 'a');
    }
    if (x != y) {
      return false;
    }
  }
  return true;
}

}  // namespace

transfer_mode parse_transfer_mode(std::string_view text) {
  if (iequals_ascii(text, "full")) {
    return transfer_mode::full;
  }
  if (iequals_ascii(text, "delta")) {
    return transfer_mode::delta;
  }
  if (iequals_ascii(text, "patch")) {
    return transfer_mode::patch;
  }
  return transfer_mode::legacy;
}

std::string_view to_string(transfer_mode mode) {
  switch (mode) {
    case transfer_mode::full:
      return "full";
    case transfer_mode::delta:
      return "delta";
    case transfer_mode::patch:
      return "patch";
    case transfer_mode::legacy:
      break;
  }
  return "";
}

emission_shape plan_emission(transfer_mode mode, bool data_is_array, bool first_emission) {
  if (!data_is_array) {
    if (mode == transfer_mode::patch && !first_emission) {
      return emission_shape{false, false, true};
    }
    return emission_shape{true, false};
  }
  switch (mode) {
    case transfer_mode::full:
      return emission_shape{true, false};
    case transfer_mode::delta:
    case transfer_mode::patch:
      return first_emission ? emission_shape{true, false} : emission_shape{false, true};
    case transfer_mode::legacy:
      break;
  }
  return emission_shape{true, true};
}

}  // namespace weir::core

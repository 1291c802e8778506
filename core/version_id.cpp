// Encoding and decoding of order-preserving version ids (see version_id.hpp for the format).
#include "core/version_id.hpp"

#include <array>

namespace weir::core {

namespace {

// Maps a byte to its digit value, or -1 when it is not in the alphabet.
constexpr std::array<std::int8_t, 256> make_digit_table() {
  std::array<std::int8_t, 256> table{};
  for (auto& entry : table) {
    entry = -1;
  }
  for (std::size_t i = 0; i < version_id_alphabet.size(); ++i) {
    table[static_cast<unsigned char>(version_id_alphabet[i])] = static_cast<std::int8_t>(i);
  }
  return table;
}

constexpr std::array<std::int8_t, 256> digit_table = make_digit_table();

constexpr std::size_t max_digits = max_version_id_size - 1;

}  // namespace

std::string encode_version_id(std::uint64_t seq) {
  char digits[max_digits];
  std::size_t n = 0;
  do {
    digits[max_digits - 1 - n] = version_id_alphabet[seq & 63U];
    seq >>= 6;
    ++n;
  } while (seq != 0);
  std::string out;
  out.reserve(n + 1);
  out.push_back(version_id_alphabet[n]);
  out.append(digits + (max_digits - n), n);
  return out;
}

std::optional<std::uint64_t> decode_version_id(std::string_view id) {
  if (id.size() < 2 || id.size() > max_version_id_size) {
    return std::nullopt;
  }
  const int n = digit_table[static_cast<unsigned char>(id[0])];
  if (n < 1 || static_cast<std::size_t>(n) != id.size() - 1) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (std::size_t i = 1; i < id.size(); ++i) {
    const int d = digit_table[static_cast<unsigned char>(id[i])];
    if (d < 0) {
      return std::nullopt;
    }
    // A leading zero digit would give a second spelling of a shorter number.
    if (i == 1 && d == 0 && n > 1) {
      return std::nullopt;
    }
    // The top digit of an 11-digit id carries only 4 bits (6 * 10 + 4 = 64).
    if (i == 1 && static_cast<std::size_t>(n) == max_digits && d > 15) {
      return std::nullopt;
    }
    value = (value << 6) | static_cast<std::uint64_t>(d);
  }
  return value;
}

}  // namespace weir::core

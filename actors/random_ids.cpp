// Crypto-random UUIDs from the OS: connection ids must not be guessable (arc-hub §2.1, seed 001).
#include "actors/random_ids.hpp"

#include <sys/random.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace weir::actors {

std::string random_uuid() {
  std::uint8_t b[16];
  std::size_t got = 0;
  while (got < sizeof b) {
    auto n = getrandom(b + got, sizeof b - got, 0);
    if (n < 0) {
      std::perror("weir: getrandom");
      std::abort();
    }
    got += static_cast<std::size_t>(n);
  }
  b[6] = static_cast<std::uint8_t>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<std::uint8_t>((b[8] & 0x3f) | 0x80);
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return std::string{out, 36};
}

}  // namespace weir::actors

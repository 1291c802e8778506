// Crypto-random UUIDs from the OS: connection ids must not be guessable (arc-hub §2.1, seed 001).
#include "actors/random_ids.hpp"

#include <sys/random.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace weir::actors {

namespace {

void os_random(std::uint8_t* b, std::size_t len) {
  std::size_t got = 0;
  while (got < len) {
    auto n = getrandom(b + got, len - got, 0);
    if (n < 0) {
      std::perror("weir: getrandom");
      std::abort();
    }
    got += static_cast<std::size_t>(n);
  }
}

std::string format_v4(std::uint8_t* b) {
  b[6] = static_cast<std::uint8_t>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<std::uint8_t>((b[8] & 0x3f) | 0x80);
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return std::string{out, 36};
}

}  // namespace

std::string random_uuid() {
  std::uint8_t b[16];
  os_random(b, sizeof b);
  return format_v4(b);
}

std::string fast_uuid() {
  thread_local std::mt19937_64 gen = [] {
    std::uint8_t seed[8];
    os_random(seed, sizeof seed);
    std::uint64_t s = 0;
    std::memcpy(&s, seed, sizeof s);
    return std::mt19937_64{s};
  }();
  std::uint8_t b[16];
  auto hi = gen();
  auto lo = gen();
  std::memcpy(b, &hi, 8);
  std::memcpy(b + 8, &lo, 8);
  return format_v4(b);
}

}  // namespace weir::actors

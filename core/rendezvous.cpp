// Rendezvous hashing: weight(member, unit) = mix(hash(member) ^ hash(unit)); the heaviest wins.
#include "core/rendezvous.hpp"

namespace weir::core {
namespace {

std::uint64_t mix(std::uint64_t x) {
  // splitmix64's finalizer: spreads FNV's weak low bits over the whole word.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return mix(h);
}

std::string unit_name(std::string_view space, std::string_view object) {
  std::string out{space};
  out.push_back('\0');
  out.append(object);
  return out;
}

std::size_t rendezvous_owner(const std::vector<std::string>& members, std::string_view unit) {
  auto unit_hash = stable_hash(unit);
  std::size_t best = 0;
  std::uint64_t best_weight = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    auto w = mix(stable_hash(members[i]) ^ unit_hash);
    if (i == 0 || w > best_weight || (w == best_weight && members[i] < members[best])) {
      best = i;
      best_weight = w;
    }
  }
  return best;
}

}  // namespace weir::core

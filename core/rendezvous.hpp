// weir::core::rendezvous — which cluster member owns an ownership unit: highest-random-weight
// (rendezvous) hashing over the configured member ids. Every node computes the same answer from
// the same member list with no coordination, and adding or removing one member moves only the
// units that member wins or held (about 1/N of them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weir::core {

/// A stable 64-bit hash (FNV-1a, then a 64-bit finalizer): the same on every build and
/// platform, because every node must agree on ownership.
std::uint64_t stable_hash(std::string_view text);

/// The unit's name as hashed: space and object with a separator no id can contain. `object`
/// empty names the space's cross-object `objects` unit.
std::string unit_name(std::string_view space, std::string_view object);

/// Index into `members` of the owner of `unit` (a unit_name). `members` must not be empty.
/// Ties (astronomically unlikely) go to the smaller member id, so the answer never depends on
/// the order members are listed in.
std::size_t rendezvous_owner(const std::vector<std::string>& members, std::string_view unit);

}  // namespace weir::core

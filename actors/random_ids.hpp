// weir::actors random ids — connection ids (crypto-random, from the OS) and correlation ids.
#pragma once

#include <string>

namespace weir::actors {

/// A version-4 UUID from the operating system's CSPRNG (getrandom / /dev/urandom): for ids that
/// must not be guessable (connection ids).
std::string random_uuid();

/// A version-4 UUID from a per-thread generator seeded by the OS: for correlation ids, which
/// only need to be unique, on paths where a syscall per request would show.
std::string fast_uuid();

}  // namespace weir::actors

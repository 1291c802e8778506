// weir::actors random ids — connection ids (crypto-random, from the OS) and correlation ids.
#pragma once

#include <string>

namespace weir::actors {

/// A version-4 UUID from the operating system's CSPRNG (getrandom / /dev/urandom).
std::string random_uuid();

}  // namespace weir::actors

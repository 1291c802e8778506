// connection_directory: the health feed's list of this node's hub connections.
#include "actors/connection_directory.hpp"

#include <chrono>

namespace weir::actors {

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void connection_directory::add(directory_member& m) {
  std::lock_guard lock{mu_};
  members_.push_back(m);
}

void connection_directory::remove(directory_member& m) {
  std::lock_guard lock{mu_};
  if (m.directory_hook_.is_linked()) {
    members_.erase(members_.iterator_to(m));
  }
}

std::vector<core::connection_health> connection_directory::snapshot(
    const core::health_scope& scope) const {
  std::vector<core::connection_health> out;
  std::lock_guard lock{mu_};
  for (const auto& m : members_) {
    m.describe(scope, out);
  }
  return out;
}

}  // namespace weir::actors

// weir::actors::connection_directory — what the health feed (arc-hub §11) reports: every hub
// connection of this node with its client details and subscriptions. The directory is a list of
// the connections themselves: each keeps its own details and subscriptions (under its own
// lock) and describes itself when the feed samples, so an idle connection pays for no copy
// here (a copy of its details and of each subscription's was about 500 bytes a connection,
// docs/performance.md). No CAF types here.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/intrusive/list.hpp>

#include "core/query_health.hpp"

namespace weir::actors {

/// Milliseconds since the Unix epoch, now.
std::int64_t unix_now_ms();

/// A time written by one thread and read by the health feed; 0 means "never".
using shared_time = std::shared_ptr<std::atomic<std::int64_t>>;

/// A connection the directory lists.
class directory_member {
 public:
  /// Appends this connection's health when `scope` sees it. Called with the directory's lock
  /// held: it may take the member's own lock, and nothing holding a member's lock may call
  /// into the directory.
  virtual void describe(const core::health_scope& scope,
                        std::vector<core::connection_health>& out) const = 0;

 protected:
  ~directory_member() = default;

 private:
  friend class connection_directory;
  boost::intrusive::list_member_hook<> directory_hook_;
};

class connection_directory {
 public:
  /// Lists `m` until remove(); the caller keeps it alive until then. Not under `m`'s lock.
  void add(directory_member& m);
  /// Not under `m`'s lock.
  void remove(directory_member& m);

  /// The connections `scope` may see (health_scope::sees), oldest first.
  std::vector<core::connection_health> snapshot(const core::health_scope& scope) const;

 private:
  using member_list = boost::intrusive::list<
      directory_member,
      boost::intrusive::member_hook<directory_member, boost::intrusive::list_member_hook<>,
                                    &directory_member::directory_hook_>>;
  mutable std::mutex mu_;
  member_list members_;  // in the order they were added
};

}  // namespace weir::actors

// weir::gateway::server_context — what every session of one http_server shares: the runtime,
// the options, the set of live hub sessions (so shutdown can close them), and a draining flag.
// Internal to gateway/.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "gateway/http_server.hpp"

namespace weir::gateway {

class closable {
 public:
  virtual ~closable() = default;
  /// Asks the session to close for shutdown (thread-safe).
  virtual void shut_down() = 0;
};

struct server_context {
  server_context(http_options o, actors::runtime& r) : opts(std::move(o)), rt(r) {}

  http_options opts;
  actors::runtime& rt;
  std::atomic<bool> draining{false};

  std::mutex sessions_mu;
  std::unordered_map<closable*, std::weak_ptr<closable>> sessions;

  void add(const std::shared_ptr<closable>& s) {
    std::lock_guard lock{sessions_mu};
    sessions[s.get()] = s;
  }
  void remove(closable* s) {
    std::lock_guard lock{sessions_mu};
    sessions.erase(s);
  }
  std::size_t live() {
    std::lock_guard lock{sessions_mu};
    return sessions.size();
  }
};

}  // namespace weir::gateway

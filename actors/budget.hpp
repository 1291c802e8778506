// weir::actors::budget — a global cap plus a per-caller cap on a count (hub connections, live
// subscriptions), shared by every connection of the node. Thread-safe; acquire never blocks.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/principal.hpp"

namespace weir::actors {

class budget {
 public:
  budget(std::size_t global_limit, std::size_t per_caller_limit)
      : global_limit_(global_limit), per_caller_limit_(per_caller_limit) {}

  /// Takes one unit for `caller` if both caps allow it.
  bool try_acquire(const std::string& caller) {
    std::lock_guard lock{mu_};
    if (total_ >= global_limit_) {
      return false;
    }
    auto& n = per_caller_[caller];
    if (n >= limit_for(caller)) {
      if (n == 0) {
        per_caller_.erase(caller);
      }
      return false;
    }
    ++n;
    ++total_;
    return true;
  }

  /// Returns one unit taken by `caller`.
  void release(const std::string& caller) {
    std::lock_guard lock{mu_};
    auto it = per_caller_.find(caller);
    if (it == per_caller_.end() || it->second == 0) {
      return;
    }
    if (--it->second == 0) {
      per_caller_.erase(it);
    }
    --total_;
  }

  std::size_t total() const {
    std::lock_guard lock{mu_};
    return total_;
  }

  /// In a cluster: a signed-in caller's cap on this member, its share of the cluster-wide
  /// per-caller limit (units already taken stay taken). Anonymous callers' keys (an address)
  /// keep the full per-caller cap.
  void set_principal_share(std::size_t limit) {
    std::lock_guard lock{mu_};
    principal_share_ = limit;
  }

 private:
  std::size_t limit_for(const std::string& caller) const {
    // A principal's key is ["<tenant>","principal","<subject>"]; quotes inside the tenant are
    // escaped by caller_key, so this separator cannot occur anywhere else in a key.
    if (principal_share_ && caller.find("\",\"principal\",\"") != std::string::npos) {
      return *principal_share_;
    }
    return per_caller_limit_;
  }

  mutable std::mutex mu_;
  std::size_t global_limit_;
  std::size_t per_caller_limit_;
  std::optional<std::size_t> principal_share_;
  std::size_t total_ = 0;
  std::unordered_map<std::string, std::size_t> per_caller_;
};

/// arc-hub §9.1 caller key: the JSON array [tenant, kind, value] as text. Anonymous and
/// authenticated namespaces never collide.
std::string caller_key(std::string_view tenant, std::string_view kind, std::string_view value);

/// The caller key of `who`: [tenant, "principal", subject] when signed in, else
/// [tenant, anonymous_kind, anonymous_value] ("anonymous-address" and the client address, for
/// hub connection and subscription budgets alike: seed 001).
std::string caller_key(const core::principal& who, std::string_view anonymous_kind,
                       std::string_view anonymous_value);

}  // namespace weir::actors

// weir::actors::idempotency_memory — what one unit's shard remembers of Idempotency-Keys: the
// keys of acknowledged writes until they expire (loaded with the unit, stored with each write:
// write_batch::keys), and the keys of writes still on their way to the store, whose retries
// wait for the original's outcome instead of being applied beside it. Bounded: beyond the
// configured count the keys closest to expiry are forgotten first, and what it forgets (past the
// count, or expired) goes with the unit's next write batch to be deleted from the store too
// (write_batch::forget_keys), so the stored keys stay as bounded as these. The shard's own (one
// thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/write_command.hpp"
#include "core/idempotency_key.hpp"

namespace weir::actors {

class idempotency_memory {
 public:
  static std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  /// The acknowledged write `key` names, if remembered and not expired.
  const core::idempotency_entry* find(const std::string& key) {
    auto it = keys_.find(key);
    if (it == keys_.end()) {
      return nullptr;
    }
    if (it->second.expires_at_ms <= now_ms()) {
      forgotten_.push_back(it->first);
      forget(it);
      return nullptr;
    }
    return &it->second;
  }

  /// Remembers an acknowledged write's key; forgets the expired ones and, past `max`, those
  /// closest to expiry.
  void remember(core::idempotency_entry e, std::size_t max) {
    auto now = now_ms();
    while (!by_expiry_.empty() && (by_expiry_.begin()->first <= now || keys_.size() >= max)) {
      auto it = keys_.find(by_expiry_.begin()->second);
      if (it == keys_.end()) {
        by_expiry_.erase(by_expiry_.begin());
      } else {
        forgotten_.push_back(it->first);
        forget(it);
      }
    }
    if (auto old = keys_.find(e.key); old != keys_.end()) {
      forget(old);
    }
    by_expiry_.emplace(e.expires_at_ms, e.key);
    auto key = e.key;
    keys_.emplace(std::move(key), std::move(e));
  }

  /// A write under `key` is on its way to the store.
  struct in_flight {
    std::uint64_t fingerprint = 0;
    std::vector<write_callback> waiters;  ///< retries that arrived meanwhile
  };
  in_flight* pending(const std::string& key) {
    auto it = pending_.find(key);
    return it == pending_.end() ? nullptr : &it->second;
  }
  void start(const std::string& key, std::uint64_t fingerprint) {
    pending_[key] = in_flight{fingerprint, {}};
  }
  /// The write under `key` was answered: its retries are answered the same way (a replay, or
  /// the same refusal) and the key is no longer in flight.
  void settle(const std::string& key, const core::result<write_outcome>& r) {
    auto it = pending_.find(key);
    if (it == pending_.end()) {
      return;
    }
    auto waiters = std::move(it->second.waiters);
    pending_.erase(it);
    for (auto& w : waiters) {
      if (r) {
        w(write_outcome{r->version_id, true});
      } else {
        w(r.error());
      }
    }
  }

  std::size_t size() const { return keys_.size(); }

  /// The keys forgotten since the last call that are not remembered or in flight again (a key
  /// forgotten and then used anew must not be deleted after its new entry is stored): for the
  /// next write batch to delete from the store.
  std::vector<std::string> take_forgotten() {
    std::vector<std::string> out;
    for (auto& k : forgotten_) {
      if (!keys_.count(k) && !pending_.count(k)) {
        out.push_back(std::move(k));
      }
    }
    forgotten_.clear();
    return out;
  }

 private:
  void forget(std::unordered_map<std::string, core::idempotency_entry>::iterator it) {
    auto range = by_expiry_.equal_range(it->second.expires_at_ms);
    for (auto e = range.first; e != range.second; ++e) {
      if (e->second == it->first) {
        by_expiry_.erase(e);
        break;
      }
    }
    keys_.erase(it);
  }

  std::unordered_map<std::string, core::idempotency_entry> keys_;
  std::multimap<std::int64_t, std::string> by_expiry_;
  std::unordered_map<std::string, in_flight> pending_;
  std::vector<std::string> forgotten_;
};

}  // namespace weir::actors

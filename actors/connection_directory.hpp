// weir::actors::connection_directory — what the health feed (arc-hub §11) reports: every hub
// connection of this node with its client details and subscriptions. Hub connections keep it
// current (open, subscribe, cancel, close); the times that change per frame (data served, ping,
// pong) are atomics the hot paths store into without taking the directory's lock.
// No CAF types here.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/query_health.hpp"

namespace weir::actors {

/// Milliseconds since the Unix epoch, now.
std::int64_t unix_now_ms();

/// A time written by one thread and read by the health feed; 0 means "never".
using shared_time = std::shared_ptr<std::atomic<std::int64_t>>;

class connection_directory {
 public:
  struct connection_entry {
    std::string id;
    std::string tenant;
    std::string subject;  ///< who opened it; "" anonymous
    core::client_info client;
    std::int64_t established_at_ms = 0;
    shared_time last_ping_sent = std::make_shared<std::atomic<std::int64_t>>(0);
    shared_time last_pong_received = std::make_shared<std::atomic<std::int64_t>>(0);
  };

  /// Registers a connection; returns its directory id.
  std::uint64_t add_connection(connection_entry entry);
  void remove_connection(std::uint64_t id);

  /// The connection's ping and pong clocks (for the session and the actor to stamp).
  shared_time ping_clock(std::uint64_t id) const;
  shared_time pong_clock(std::uint64_t id) const;

  /// Records subscription `query_id` of connection `id` (replacing one of the same id).
  /// `served` is stamped by whoever delivers its data.
  void add_subscription(std::uint64_t id, const std::string& query_id, std::string query_name,
                        std::string read_model, shared_time served);
  void remove_subscription(std::uint64_t id, const std::string& query_id);

  /// The connections `scope` may see (health_scope::sees), oldest first.
  std::vector<core::connection_health> snapshot(const core::health_scope& scope) const;

 private:
  struct subscription_entry {
    std::string query_name;
    std::string read_model;
    std::int64_t connected_at_ms = 0;
    shared_time served;
  };
  struct entry {
    connection_entry conn;
    std::map<std::string, subscription_entry> subs;  // by queryId, ordered for stable output
  };

  mutable std::mutex mu_;
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, entry> conns_;  // by registration order
};

}  // namespace weir::actors

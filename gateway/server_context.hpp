// weir::gateway::server_context — what every session of one http_server shares: the runtime,
// the options, the set of live hub sessions (so shutdown can close them), a draining flag, and
// the connection budget (http.maxConnections, per client).
// Internal to gateway/.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "actors/direct_query.hpp"
#include "core/query_definition.hpp"
#include "gateway/http_server.hpp"
#include "gateway/state_routes.hpp"
#include "gateway/traffic_stats.hpp"

namespace weir::gateway {

class sse_hub_session;

/// An AG-UI state stream: one object's property document.
struct state_target {
  std::string space;
  std::string object;
  /// When the credential the space's read rule needed expires (the stream ends then).
  std::optional<std::int64_t> expires_at;
  /// An AG-UI agent run (`POST …/agent`): RUN_STARTED first, RUN_FINISHED after
  /// query.agentRunMaxMs.
  std::optional<agent_run> run;
};

/// A direct per-query stream (arc-hub §10): which query, with which arguments, and the
/// correlation id its QueryResults carry; or an AG-UI state stream (`state` set).
struct direct_target {
  const core::query_definition* def = nullptr;  ///< null for the health feed
  actors::direct_request request;
  /// The health feed (arc-hub §11) instead of a named query: whose connections it shows.
  std::optional<core::health_scope> health;
  std::string correlation_id;
  /// The caller's credential was refused: the transport answers unauthorized (arc-hub §10).
  std::optional<core::error> refused;
  /// Set for an AG-UI state stream instead of a query (`def` null).
  std::optional<state_target> state;
};

class closable {
 public:
  virtual ~closable() = default;
  /// Asks the session to close for shutdown (thread-safe).
  virtual void shut_down() = 0;
  /// Bytes queued for the socket and not yet written (thread-safe): how far the client lags.
  virtual std::size_t queued_bytes() const { return 0; }
  /// The connection's place in the node's connection budget (http.maxConnections…): held by
  /// whichever session owns the socket, released with it.
  std::shared_ptr<const void> connection_slot;
  /// What the admin page's slowest consumers show of it (any thread: the session sets these
  /// before it registers with server_context::add and never changes them).
  virtual std::string_view client() const { return {}; }  ///< the client address (or caller)
  /// The request's correlation id (its log lines and errors carry it).
  virtual std::string_view correlation() const { return {}; }
  transport kind = transport::websocket;  ///< set by the session's constructor
  std::atomic<std::uint64_t> frames_sent{0};
};

/// A connection as the admin page lists it among the slowest consumers.
struct consumer_view {
  transport kind = transport::websocket;
  std::string remote;
  std::string correlation_id;
  std::size_t queued_bytes = 0;
  std::uint64_t frames_sent = 0;
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

  /// Every session still alive. Their last references may be dropped here, after the lock is
  /// released: a session's destructor takes it (remove()).
  std::vector<std::shared_ptr<closable>> live_sessions() {
    std::vector<std::shared_ptr<closable>> live;
    std::lock_guard lock{sessions_mu};
    live.reserve(sessions.size());
    for (auto& [raw, weak] : sessions) {
      if (auto s = weak.lock()) {
        live.push_back(std::move(s));
      }
    }
    return live;
  }

  /// Bytes queued for client sockets over every connection (/metrics).
  std::size_t queued_total() {
    std::size_t total = 0;
    for (auto& s : live_sessions()) {
      total += s->queued_bytes();
    }
    return total;
  }

  /// The `n` connections with the most bytes queued (the slowest consumers), most first; those
  /// with nothing queued are left out.
  std::vector<consumer_view> slowest(std::size_t n) {
    std::vector<consumer_view> out;
    for (auto& s : live_sessions()) {
      if (auto q = s->queued_bytes(); q > 0) {
        out.push_back({s->kind, std::string{s->client()}, std::string{s->correlation()}, q,
                       s->frames_sent.load(std::memory_order_relaxed)});
      }
    }
    auto mid = out.begin() + static_cast<std::ptrdiff_t>(std::min(n, out.size()));
    std::partial_sort(out.begin(), mid, out.end(),
                      [](const auto& a, const auto& b) { return a.queued_bytes > b.queued_bytes; });
    out.erase(mid, out.end());
    return out;
  }

  /// Connections, frames, bytes and closes at the bounds (/metrics, the admin page).
  traffic_stats traffic;

  /// Admits one TCP connection from `peer` under http.maxConnections and, unless the peer is a
  /// trusted proxy (its clients share its address), http.maxConnectionsPerClient. Null when
  /// over either: the caller answers 503 and closes. The slot returns the unit when destroyed.
  std::shared_ptr<const void> admit_connection(const std::string& peer, bool trusted_proxy) {
    std::lock_guard lock{conn_mu};
    if (open_connections >= opts.max_connections) {
      return nullptr;
    }
    std::string key = trusted_proxy ? std::string{} : peer;
    if (!key.empty()) {
      auto& n = per_client[key];
      if (n >= opts.max_connections_per_client) {
        if (n == 0) {
          per_client.erase(key);
        }
        return nullptr;
      }
      ++n;
    }
    ++open_connections;
    // Owns nothing: the deleter is what matters (it returns the unit).
    return std::shared_ptr<const void>(this, [this, key = std::move(key)](const void*) {
      std::lock_guard lock{conn_mu};
      --open_connections;
      if (!key.empty()) {
        if (auto it = per_client.find(key); it != per_client.end() && --it->second == 0) {
          per_client.erase(it);
        }
      }
    });
  }

  // SSE hub connections by connection id, for the control POSTs (arc-hub §8 step 4).
  void add_sse(const std::string& id, const std::shared_ptr<sse_hub_session>& s) {
    std::lock_guard lock{sse_mu};
    sse[id] = s;
  }
  void remove_sse(const std::string& id, sse_hub_session* s) {
    std::lock_guard lock{sse_mu};
    auto it = sse.find(id);
    if (it != sse.end() && (it->second.expired() || it->second.lock().get() == s)) {
      sse.erase(it);
    }
  }
  std::shared_ptr<sse_hub_session> find_sse(const std::string& id) {
    std::lock_guard lock{sse_mu};
    auto it = sse.find(id);
    return it == sse.end() ? nullptr : it->second.lock();
  }

 private:
  std::mutex sse_mu;
  std::unordered_map<std::string, std::weak_ptr<sse_hub_session>> sse;
  std::mutex conn_mu;
  std::size_t open_connections = 0;
  std::unordered_map<std::string, std::size_t> per_client;
};

}  // namespace weir::gateway

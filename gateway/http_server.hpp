// weir::gateway::http_server — the node's HTTP/WebSocket front door: the write API, the Arc
// WebSocket hub, and probes. Runs its own Asio threads. No Beast headers here.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/access_rule.hpp"
#include "core/authenticator.hpp"
#include "core/ip_network.hpp"
#include "core/result.hpp"
#include "core/space_rules.hpp"

namespace weir::actors {
class runtime;
}

namespace weir::gateway {

struct http_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8080;  ///< 0 picks a free port (see port())
  int io_threads = 1;
  std::size_t max_body_bytes = 1 << 20;
  /// Open TCP connections the node accepts (every kind: plain requests, hubs, streams); beyond
  /// it a new one is answered 503 and closed.
  std::size_t max_connections = 10000;
  /// …of them from one client address (trusted proxies excepted).
  std::size_t max_connections_per_client = 1000;
  /// A streaming connection (hubs, direct streams, windowed and state streams, admin events)
  /// whose pending output the kernel has not taken a byte of for this long is dropped and its
  /// slots released (`http.sendStallTimeoutMs`); also its TCP_USER_TIMEOUT.
  std::chrono::milliseconds send_stall{10000};
  /// Browser origins trusted besides the request's own (arc-hub §8; `query.allowedOrigins`).
  std::vector<std::string> allowed_origins;
  bool allow_null_origin = false;  ///< `Origin: null` (sandboxed pages, file://) trusted
  /// Windowed streams: a `: keepalive` comment after this much silence (0: none).
  std::int64_t windowed_keep_alive_ms = 25000;
  /// Windowed streams: unwritten event bytes before `closed{overflow}`.
  std::size_t windowed_max_queue_bytes = 16 << 20;
  /// Windowed streams: how long a decided `closed` frame has to reach the client
  /// (`windowed.closeDeadlineMs`).
  std::chrono::milliseconds windowed_close_deadline{10000};
  /// Who callers are (null: authentication off, everyone anonymous).
  std::shared_ptr<const core::authenticator> auth;
  /// Who may open a hub connection (`auth.hubs`).
  core::access_rule hubs;
  /// The role the admin page's data stream (/ui/events) needs when authentication is on
  /// (`auth.adminRole`).
  std::string admin_role = "admin";
  /// Space read/write rules for the windowed and write APIs (`spaces`).
  std::vector<core::space_rule> spaces;
  /// Peers whose X-Forwarded-For and tenant header are believed (`http.trustedProxies`).
  std::vector<core::ip_network> trusted_proxies;
  /// This build's version (/metrics' weir_build_info).
  std::string version;
};

class http_server {
 public:
  http_server(http_options opts, actors::runtime& rt);
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// Binds and listens (connections wait in the backlog until start()), so that a node that
  /// cannot have its port fails before it joins a cluster. An error (server.bind_failed) names
  /// the address and the system's reason.
  core::result<void> listen();
  /// Listens (unless listen() did) and starts serving.
  core::result<void> start();

  /// The bound port (useful with port 0).
  std::uint16_t port() const;

  /// Stops accepting, answers new write requests with 503, closes hub connections (WebSocket
  /// 1001 "Server shutting down") and waits up to `timeout_ms` for them to finish. The I/O
  /// threads keep running so in-flight writes can still be answered.
  void drain(std::int64_t timeout_ms);

  /// Stops the I/O threads. Call after drain() and after in-flight writes were answered.
  void stop();

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::gateway

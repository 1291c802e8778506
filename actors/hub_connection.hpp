// weir::actors::hub_connection — one Arc hub client connection (WebSocket now, SSE later): the
// facade the gateway holds. Behind it a connection actor runs the protocol (revisions,
// tombstones, transfer modes, budgets) and writes frames to the session's frame_sink.
// No CAF types here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/frame_sink.hpp"
#include "core/hub_codec.hpp"
#include "core/principal.hpp"

namespace weir::actors {

class runtime;

struct connection_info {
  /// The client's address (the peer's, or X-Forwarded-For's behind a trusted proxy): what an
  /// anonymous connection belongs to, for caller budgets and ownership checks.
  std::string remote_address;
  /// Who opened it. WebSocket subscriptions are authorized as this caller; an SSE connection's
  /// are authorized as the caller of each control POST, which must be this one (arc-hub §8).
  std::shared_ptr<const core::principal> who = core::anonymous_principal();
  std::string protocol = "WebSocket";
  std::string user_agent;  ///< for the health feed; "" when none
};

class hub_connection {
 public:
  /// Admits a connection: takes a hub-connection budget unit (arc-hub §9) and starts its actor.
  /// Returns nullptr when over budget; the caller refuses it (WS close 1013 "Hub capacity
  /// reached", SSE 503).
  static std::unique_ptr<hub_connection> open(runtime& rt, std::weak_ptr<frame_sink> sink,
                                              connection_info info);
  /// Stops the actor: every subscription is closed and its budget returned.
  ~hub_connection();

  /// Hands one inbound text frame to the actor. False when the inbound queue is at its bound
  /// (the caller closes with 1013 "Inbound queue full").
  bool deliver(std::string text);

  /// Applies an SSE control POST's Subscribe or Unsubscribe through the same state machine as
  /// WebSocket frames, authorized as `who`. `done` receives the HTTP status of arc-hub §8 (200,
  /// 401 with an Unauthorized frame, 503; 404 when the connection ended meanwhile), on an actor
  /// thread.
  void control(core::client_frame frame, std::shared_ptr<const core::principal> who,
               std::function<void(unsigned)> done);

  /// Address and principal the connection was opened with (for the SSE ownership check).
  const connection_info& info() const { return info_; }

  /// The crypto-random connection id (the Connected payload).
  const std::string& id() const { return id_; }

  /// Stamps the connection's last keep-alive Ping for the health feed (the session sends it).
  void note_ping_sent();

  /// The Connected frame to write first.
  std::string connected_frame() const;

  /// State shared between the socket side and the actor (the inbound queue depth).
  struct shared_state;

 private:
  hub_connection() = default;
  runtime* rt_ = nullptr;
  std::string id_;
  std::string caller_;
  std::shared_ptr<shared_state> shared_;
  std::uint64_t registry_id_ = 0;
  std::uint64_t directory_id_ = 0;
  std::shared_ptr<std::atomic<std::int64_t>> ping_clock_;
  connection_info info_;
  struct actor_handle;
  std::unique_ptr<actor_handle> actor_;
};

}  // namespace weir::actors

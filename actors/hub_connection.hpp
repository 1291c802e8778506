// weir::actors::hub_connection — one Arc hub client connection (WebSocket or SSE), held by its
// session: the protocol's state machine (revisions, tombstones, transfer modes, budgets) runs on
// the caller's thread under the connection's own lock, with no actor or mailbox per connection,
// and writes frames to the session's frame_sink. No CAF types here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

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

/// A handle on one hub connection's state, held by its session; moving it moves the
/// connection, and the handle that holds it last ends it.
class hub_connection {
 public:
  /// Admits a connection: takes a hub-connection budget unit (arc-hub §9).
  /// Returns an empty handle when over budget; the caller refuses it (503 with Retry-After: 1,
  /// instead of the WebSocket upgrade or the SSE stream).
  static hub_connection open(runtime& rt, std::weak_ptr<frame_sink> sink, connection_info info);

  hub_connection() = default;
  hub_connection(hub_connection&&) noexcept = default;
  hub_connection& operator=(hub_connection&& o) noexcept;
  /// Every subscription is closed and its budget returned; nothing more is written.
  ~hub_connection();

  /// Whether it holds a connection (open() admitted it).
  explicit operator bool() const { return state_ != nullptr; }

  /// Applies one inbound text frame (a WebSocket message) at once, on the caller's thread. The
  /// session bounds how many it takes per wake-up (1013 "Inbound queue full").
  void deliver(std::string_view text);

  /// Applies an SSE control POST's Subscribe or Unsubscribe through the same state machine as
  /// WebSocket frames, authorized as `who`. `done` receives the HTTP status of arc-hub §8 (200,
  /// 401 with an Unauthorized frame, 503 while the node stops), on the caller's thread, before
  /// this returns.
  void control(core::client_frame frame, std::shared_ptr<const core::principal> who,
               std::function<void(unsigned)> done);

  /// Address and principal the connection was opened with (for the SSE ownership check).
  const connection_info& info() const;

  /// The crypto-random connection id (the Connected payload).
  const std::string& id() const;

  /// Stamps the connection's last keep-alive Ping for the health feed (the session sends it).
  void note_ping_sent();

  /// The Connected frame to write first.
  std::string connected_frame() const;

  /// The protocol state and everything the connection keeps (its id, caller, health-feed
  /// details), shared with what may reach it from other threads (a query ending a subscription,
  /// the credential-expiry timer, the health feed's directory) for as long as they hold it.
  struct state;

 private:
  void close();
  std::shared_ptr<state> state_;
};

}  // namespace weir::actors

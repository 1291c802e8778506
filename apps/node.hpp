// weir::app::node — one running Weir node: store, actors, HTTP/WebSocket gateway and gRPC, in
// the order they must start and stop. Used by `weir serve` and by in-process tests.
#pragma once

#include <cstdint>
#include <memory>

#include "apps/config/node_config.hpp"
#include "core/result.hpp"

namespace weir::actors {
class runtime;
}

namespace weir::app {

/// The version `weir version` prints and cluster members report to each other.
extern const char* const weir_version;

class node {
 public:
  /// Opens the store, starts actors and listeners. Errors name what failed (bind, data dir).
  static core::result<std::unique_ptr<node>> start(config::node_config cfg);
  ~node();

  std::uint16_t http_port() const;
  std::uint16_t grpc_port() const;
  /// The bound peer port (0 when not clustered).
  std::uint16_t peer_port() const;
  actors::runtime& runtime();
  const config::node_config& config() const;

  /// Drains and stops, bounded by the configured shutdown timeout. Call it on the thread that
  /// called start() (see actors::runtime::shutdown): stop accepting, close hub
  /// connections (1001), answer in-flight writes, make everything durable, stop. Idempotent.
  void stop();

 private:
  struct impl;
  explicit node(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::app

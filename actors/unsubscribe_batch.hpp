// weir::actors::unsubscribe_batch — the unsubscribes that one I/O thread's wake-up produces,
// sent together. When many connections end at once (a load balancer restarting, a network
// partition, every browser of a page reloading) each ended subscription was one message from
// the I/O thread to its unit's shard and one more to the query actor, and each message from the
// I/O thread woke an actor thread: a futex wake and, where the two share a core, a context
// switch per subscription. Held here, they go as one message per unit and, from the shard, one
// per query (from a gateway's remote shard, one per subscription, as before): the node's CPU while
// 10,000 WebSocket clients of one key leave at once fell by about a fifth (docs/performance.md,
// "Unsubscribes sent together"). No CAF types here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "store/durable_store.hpp"

namespace weir::actors {

/// One thread's held unsubscribes for one runtime's units. Used only on the thread that made it
/// current.
class unsubscribe_batch {
 public:
  /// `schedule(*this)` is called on this thread when the first unsubscribe after a flush is
  /// held: it must make flush() run on this thread soon, after the handlers that are ready now
  /// (the gateway posts it to the I/O thread's context), so that what those handlers end goes
  /// too.
  unsubscribe_batch(runtime& rt, std::function<void(unsubscribe_batch&)> schedule);
  /// Sends what is still held.
  ~unsubscribe_batch();
  unsubscribe_batch(const unsubscribe_batch&) = delete;
  unsubscribe_batch& operator=(const unsubscribe_batch&) = delete;

  /// Makes `b` the calling thread's batch (null: none). Each I/O thread sets its own before it
  /// runs its context.
  static void set_current(unsubscribe_batch* b);

  /// Holds the unsubscribe of subscription `token` on query `key` of `unit` when the calling
  /// thread has a batch for `rt`, and returns true; returns false, holding nothing, otherwise
  /// (the caller sends it itself).
  static bool defer(runtime::impl& rt, const store::unit_key& unit, std::string key,
                    std::uint64_t token);

  /// Sends what is held: one unsubscribe_batch_msg to each unit's registry entry, unless the
  /// runtime is stopping (its actors are gone, and their subscriptions with them).
  void flush();

 private:
  struct held {
    store::unit_key unit;
    std::string key;
    std::uint64_t token = 0;
  };

  runtime::impl* rt_;
  std::function<void(unsubscribe_batch&)> schedule_;
  std::vector<held> held_;
  bool scheduled_ = false;
};

}  // namespace weir::actors

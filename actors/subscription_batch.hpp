// weir::actors::subscription_batch — the subscribes and unsubscribes that one I/O thread's
// wake-up produces, sent together. When many connections come or go at once (a load balancer
// restarting, a network partition, every browser of a page reloading) each hub subscription
// opened or ended was one message from the I/O thread to its unit's shard (and an unsubscribe
// one more to the query actor), and each message from the I/O thread woke an actor thread: a
// futex wake and, where the two share a core, a context switch per subscription. Held here,
// they go as one message per unit (subscribes first, so a subscription's subscribe always goes
// before its unsubscribe) and, from the shard, unsubscribes as one per query (from a gateway's
// remote shard, one per subscription, as before): the node's CPU while 10,000 WebSocket clients
// of one key left at once fell by about a fifth (docs/performance.md, "Unsubscribes sent
// together"). No CAF types here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "store/durable_store.hpp"

namespace weir::actors {

struct subscribe_msg;  // messages.hpp

/// One thread's held subscribes and unsubscribes for one runtime's units. Used only on the
/// thread that made it current.
class subscription_batch {
 public:
  /// `schedule(*this)` is called on this thread when the first message after a flush is held:
  /// it must make flush() run on this thread soon, after the handlers that are ready now (the
  /// gateway posts it to the I/O thread's context), so that what those handlers do goes too.
  subscription_batch(runtime& rt, std::function<void(subscription_batch&)> schedule);
  /// Sends what is still held.
  ~subscription_batch();
  subscription_batch(const subscription_batch&) = delete;
  subscription_batch& operator=(const subscription_batch&) = delete;

  /// Makes `b` the calling thread's batch (null: none). Each I/O thread sets its own before it
  /// runs its context.
  static void set_current(subscription_batch* b);

  /// Holds the unsubscribe of subscription `token` on query `key` of `unit` when the calling
  /// thread has a batch for `rt`, and returns true; returns false, holding nothing, otherwise
  /// (the caller sends it itself).
  static bool defer_unsubscribe(runtime::impl& rt, const store::unit_key& unit, std::string key,
                                std::uint64_t token);

  /// Holds `m` (moved from) for `unit`'s shard, spawned if need be, like defer_unsubscribe. For
  /// a subscribe whose caller needs no answer from the send (a hub's: a subscribe the node
  /// cannot take while it stops is dropped either way).
  static bool defer_subscribe(runtime::impl& rt, const store::unit_key& unit, subscribe_msg& m);

  /// Sends what is held: to each unit's registry entry one message of its subscribes (spawning
  /// the shard) and one of its unsubscribes (only to a live one), unless the runtime is stopping
  /// (its actors are gone, and their subscriptions with them).
  void flush();

 private:
  struct held_unsubscribe {
    store::unit_key unit;
    std::string key;
    std::uint64_t token = 0;
  };
  struct held_subscribe {
    store::unit_key unit;
    std::unique_ptr<subscribe_msg> msg;
  };
  static subscription_batch* current_for(const runtime::impl& rt);
  void held();

  runtime::impl* rt_;
  std::function<void(subscription_batch&)> schedule_;
  std::vector<held_subscribe> subscribes_;
  std::vector<held_unsubscribe> unsubscribes_;
  bool scheduled_ = false;
};

}  // namespace weir::actors

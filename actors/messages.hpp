// weir::actors messages — what shard, query, connection and remote shard actors say to each
// other: subscriptions open on the unit's shard (or its remote stand-in), results flow to the
// connections as shared, pre-encoded bodies, and a remote owner's watch events arrive as
// record changes (proto/weir/v1/query_owner.proto carries those between nodes). Local only
// (never serialized).
// Internal to actors/: includes CAF.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>
#include <caf/typed_actor.hpp>

#include "actors/cluster_link.hpp"
#include "actors/connection_directory.hpp"
#include "actors/frame_sink.hpp"
#include "actors/view_update.hpp"
#include "actors/windowed_sink.hpp"
#include "actors/write_command.hpp"
#include "core/hub_codec.hpp"
#include "core/principal.hpp"
#include "core/query_definition.hpp"
#include "core/record.hpp"
#include "core/transfer_mode.hpp"

namespace weir::actors {

using stop_atom = caf::atom_constant<caf::atom("stop")>;
using close_atom = caf::atom_constant<caf::atom("close")>;
using idle_atom = caf::atom_constant<caf::atom("idle")>;

/// A write for the shard that owns the unit. Its answer is a callback, not a response promise:
/// every writer is outside the actor system (an I/O thread's HTTP session, a gRPC call, a
/// member's forwarded write, the demo writer), and a CAF request needs a requesting actor, so
/// an answer through CAF would cost an actor or a blocking wait per write. The shard calls
/// `done` once, from an actor thread; the caller posts it to its own executor.
struct write_msg {
  write_command cmd;
  write_callback done;
};

/// The store made write `seq` durable (or failed).
struct commit_msg {
  std::uint64_t seq = 0;
  bool ok = true;
  std::string error;
  std::string code;  ///< the store's error code when !ok
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, commit_msg& x) {
  return f(caf::meta::type_name("commit_msg"), x.seq, x.ok, x.error, x.code);
}

/// How a subscriber's results are encoded: Arc QueryResult bodies (shaped by its transfer
/// mode), or AG-UI state events (a state stream on one object's property document).
enum class result_format : std::uint8_t { query_result, ag_ui_state };

/// One subscription of one connection on one query key. Results go straight from the query
/// actor to the connection's sink: the shared body behind this subscription's envelope head,
/// with no per-subscriber actor message. The hub connection keeps the protocol decisions
/// (it opens, replaces and cancels subscriptions and clears `live`).
struct subscriber {
  /// The hub connection that opened it (told if the query's side ends it); unset for direct,
  /// windowed and replica subscriptions. A connection that ends unsubscribes each explicitly.
  std::weak_ptr<subscription_owner> owner;
  std::uint64_t token = 0;  ///< unique in the node; names the subscription in every message
  core::transfer_mode mode = core::transfer_mode::legacy;
  std::weak_ptr<frame_sink> sink;
  std::shared_ptr<const std::string> head;
  std::shared_ptr<const std::atomic<bool>> live;
  std::string_view tail = "}";  ///< closes the envelope: the hub's "}", or the direct one's
  shared_time served;           ///< stamped on each delivery (health feed); may be null
  /// Set for a remote gateway's watch (owner side) or a local merge: it gets the query's rows
  /// and updates instead of encoded results; sink, head and mode are unused.
  std::shared_ptr<replica_sink> replica;
  /// Set for a windowed subscription: it gets the windowed frames; sink, head and mode unused.
  std::weak_ptr<windowed_sink> windowed;
  bool windowed_stream = false;  ///< opened as a windowed subscription (`windowed` may expire)
  result_format format = result_format::query_result;
};

/// Connection → shard (→ query actor): open a subscription on a bound query.
struct subscribe_msg {
  std::shared_ptr<const core::bound_query> query;
  subscriber sub;
};

/// Connection → shard → query actor `key`: close subscription `token`.
struct unsubscribe_msg {
  std::string key;
  std::uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unsubscribe_msg& x) {
  return f(caf::meta::type_name("unsubscribe_msg"), x.key, x.token);
}

/// Several unsubscribes at once (actors/unsubscribe_batch.hpp): to a unit, those of its
/// subscriptions that one I/O thread's wake-up ended; from the shard to a query actor, those of
/// that query. One message where a mass disconnect would send one per subscription.
struct unsubscribe_batch_msg {
  std::vector<unsubscribe_msg> items;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unsubscribe_batch_msg& x) {
  return f(caf::meta::type_name("unsubscribe_batch_msg"), x.items);
}

/// Query actor → shard: no subscribers left after `seen` subscribes.
struct query_idle_msg {
  std::string key;
  std::uint64_t seen = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_idle_msg& x) {
  return f(caf::meta::type_name("query_idle_msg"), x.key, x.seen);
}

/// What runs a query actor and hears from it (its parent): a unit's shard, the remote shard
/// standing in for a unit another member owns, or a space view. Typed, so a query actor can
/// tell its parent nothing else.
using query_parent_actor = caf::typed_actor<caf::reacts_to<query_idle_msg>>;

/// Shard (or remote shard) → query actor: what the durable write `seq` did to its rows.
struct update_msg {
  view_update update;
  /// On a gateway, the Watch event's hold (watch_event::hold): the stream it came from reads on
  /// only while such messages waiting for their query actor stay under the bound. Null here.
  std::shared_ptr<const void> hold = nullptr;
};

/// Store loader → shard: the unit as read from the store, its records built off the actor
/// threads.
struct loaded_msg {
  std::shared_ptr<struct unit_load> unit;
};

/// Store loader → shard: records change capture asked it to read again, as the store now holds
/// them (defined in shard_actor.cpp).
struct refreshed_msg {
  std::shared_ptr<struct refreshed_rows> rows;
};

/// Owner side, cluster → shard → query actor `key`: send watch `token` a fresh snapshot (its
/// gateway fell behind and its queued changes were dropped).
struct resync_msg {
  std::string key;
  std::uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, resync_msg& x) {
  return f(caf::meta::type_name("resync_msg"), x.key, x.token);
}

/// Subscriber → shard (or remote shard) → query actor `key`: send subscription `token` a fresh
/// baseline (it dropped frames while it lagged; an AG-UI state stream resynchronises so).
struct rebaseline_msg {
  std::string key;
  std::uint64_t token = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rebaseline_msg& x) {
  return f(caf::meta::type_name("rebaseline_msg"), x.key, x.token);
}

/// Gateway side, remote shard → its replica query actor: start over from `snapshot` (the owner
/// is back, or resynced us) and send every hub subscriber a fresh baseline. Windowed streams
/// cannot be re-baselined: they close (`overflow` after a resync, `server_shutdown` after the
/// owner was lost).
struct reset_msg {
  view_snapshot snapshot;
  std::shared_ptr<const void> hold = nullptr;  ///< as update_msg's
};

/// Gateway side, remote shard → its replica query actor: the owner became unreachable. Windowed
/// streams close with `server_shutdown` at once (Decision 5); hub subscriptions wait for it.
struct owner_lost_msg {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, owner_lost_msg&) {
  return f(caf::meta::type_name("owner_lost_msg"));
}

/// Predecessor → query actor: `shard` runs you now. Windowed streams close with
/// `server_shutdown` (their client subscribes again, Decision 5); the successor sends a fresh
/// snapshot (reset_msg) that every hub and direct subscriber gets as a baseline.
struct reparent_msg {
  query_parent_actor shard;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, reparent_msg& x) {
  return f(caf::meta::type_name("reparent_msg"), x.shard);
}

/// Gateway side, remote shard → replica query actor: the owner stayed unreachable (or refused
/// the query); end every subscription with an Error and stop. (Also runtime → space view: the
/// cluster's members changed, its merge is no longer exact.) `code` is the owner's error code
/// when it refused (an `object.deleted` ends windowed streams with `closed{object_deleted}`).
struct fail_msg {
  std::string reason;
  std::string code;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fail_msg& x) {
  return f(caf::meta::type_name("fail_msg"), x.reason, x.code);
}

/// A query actor (query_actor.cpp): one per query key. Typed, so that a message it has no
/// handler for does not compile at the sender (untyped, it would be refused only at run time).
using query_actor = caf::typed_actor<
    caf::reacts_to<subscribe_msg>, caf::reacts_to<unsubscribe_msg>,
    caf::reacts_to<unsubscribe_batch_msg>, caf::reacts_to<update_msg>, caf::reacts_to<resync_msg>,
    caf::reacts_to<rebaseline_msg>, caf::reacts_to<reset_msg>, caf::reacts_to<reparent_msg>,
    caf::reacts_to<owner_lost_msg>, caf::reacts_to<fail_msg>, caf::reacts_to<stop_atom>>;

struct hand_over_msg;
struct adopt_msg;
struct handover_done_msg;
struct epoch_msg;

/// A unit's registry entry, what the runtime hands out for it: the unit's shard on its owner
/// (shard_actor.cpp), or on a gateway the remote shard standing in for it (remote_shard.cpp).
/// What the connections, the runtime and query actors may tell either; each adds what only it
/// hears (the store's and the loader's answers; the owner's watch events). Typed, so a message
/// neither has a handler for does not compile at the sender.
using unit_actor =
    caf::typed_actor<caf::reacts_to<write_msg>, caf::reacts_to<subscribe_msg>,
                     caf::reacts_to<unsubscribe_msg>, caf::reacts_to<unsubscribe_batch_msg>,
                     caf::reacts_to<resync_msg>, caf::reacts_to<rebaseline_msg>,
                     caf::reacts_to<query_idle_msg>, caf::reacts_to<hand_over_msg>,
                     caf::reacts_to<adopt_msg>, caf::reacts_to<handover_done_msg>,
                     caf::reacts_to<epoch_msg>, caf::reacts_to<idle_atom>>;

/// Runtime → space view: a unit of its space got its first record of the view's dataset.
struct unit_appeared_msg {
  std::string object;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unit_appeared_msg& x) {
  return f(caf::meta::type_name("unit_appeared_msg"), x.object);
}

/// A space view (space_view.cpp), as the runtime's registry holds it: what connections, the
/// runtime and its query actor may tell it (a fail_msg: the cluster's members changed, and the
/// view ends). Typed, so a message it has no handler for does not compile at the sender.
using space_view_actor =
    caf::typed_actor<caf::reacts_to<subscribe_msg>, caf::reacts_to<unsubscribe_msg>,
                     caf::reacts_to<resync_msg>, caf::reacts_to<query_idle_msg>,
                     caf::reacts_to<unit_appeared_msg>, caf::reacts_to<fail_msg>>;

/// Runtime → a unit's registry entry (a shard or a remote shard) that stopped being the right
/// one: the unit's owner changed (elastic membership). It hands each query actor it runs to
/// `successor` (adopt_msg, then handover_done_msg), passes on what reaches it later, and stops
/// once its own writes are answered.
struct hand_over_msg {
  unit_actor successor;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, hand_over_msg& x) {
  return f(caf::meta::type_name("hand_over_msg"), x.successor);
}

/// Predecessor → successor: run `actor`, the query actor of `query`, from now on. `forwarded`
/// counts the subscribes the predecessor handed it (the idle handshake continues from there).
struct adopt_msg {
  std::shared_ptr<const core::bound_query> query;
  query_actor actor;
  std::uint64_t forwarded = 0;
};

/// Predecessor → successor: every query actor was handed over; serve.
struct handover_done_msg {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, handover_done_msg&) {
  return f(caf::meta::type_name("handover_done_msg"));
}

/// Runtime → a shard whose unit stays with this node across a change of owners: its state is
/// valid under `epoch` too (write_batch::epoch).
struct epoch_msg {
  std::uint64_t epoch = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, epoch_msg& x) {
  return f(caf::meta::type_name("epoch_msg"), x.epoch);
}

/// Ends `sub` from the query's side (its owner stayed unreachable): a hub connection answers
/// with an Error frame and terminates the query id (§4); a direct stream, which has no
/// hub connection, is closed with 1011 and `reason`.
inline void end_subscription(const subscriber& sub, const std::string& reason) {
  if (auto w = sub.windowed.lock()) {
    w->closed("server_shutdown");
  } else if (auto owner = sub.owner.lock()) {
    owner->subscription_failed(sub.token);
  } else if (auto sink = sub.sink.lock()) {
    // A hub subscription whose connection is gone has no sink left either: only a direct
    // stream gets here.
    sink->close(1011, reason);
  }
}

/// Link → remote shard: an event of one of its watches.
struct watch_msg {
  watch_event event;
};

/// Something that wants to be called at a time it chose (a hub connection's credential
/// expiry): the node's timer actor calls it then, if it still exists.
class timed_target {
 public:
  virtual ~timed_target() = default;
  virtual void on_timer() = 0;
};

/// runtime::impl::call_after → the timer actor, delayed.
struct timer_msg {
  std::weak_ptr<timed_target> target;
};

/// The node's timer actor (runtime::impl::call_after).
using timer_actor = caf::typed_actor<caf::reacts_to<timer_msg>>;

}  // namespace weir::actors

// CAF 0.17.6's make_message requires every message type to be inspectable or whitelisted, with
// or without a type ID (the type-ID block below does not lift that). The messages of plain
// values and actor handles are inspectable (the `inspect` beside each). These are whitelisted
// instead: each carries what has no serialized form: shared pointers to queries, records,
// sinks, snapshots and updates (shared, never copied, between actors of one process), a
// completion callback (write_msg's), a weak pointer (timer_msg's). None leaves the process:
// members talk over gRPC (cluster/), never through CAF's network layer.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::write_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::subscribe_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::update_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::loaded_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::refreshed_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::reset_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::watch_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::timer_msg)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::adopt_msg)

// The actors' own messages, declared in their files (shard_state.hpp, remote_shard.cpp,
// space_view.cpp, health_watch.cpp), named here for their type IDs.
namespace weir::actors {
struct index_built_msg;
struct scan_done_msg;
namespace remote_impl {
struct owner_timeout_msg;
struct rewatch_msg;
}  // namespace remote_impl
namespace space_impl {
struct source_msg;
struct member_msg;
struct listed_msg;
struct source_failed_msg;
struct retire_msg;
}  // namespace space_impl
namespace watch_impl {
struct sample_msg;
}  // namespace watch_impl
}  // namespace weir::actors

// A type ID and name for every message an actor of this node sends: CAF 0.17.6 uses them for
// the check the actors are built with (CAF_ENABLE_TYPE_ID_CHECKS: a message type without one
// does not compile) and to name types; 0.18 requires them. The atoms have theirs as atoms.
// clang-format off
CAF_BEGIN_TYPE_ID_BLOCK(weir_actors, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::write_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::commit_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::subscribe_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::unsubscribe_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::unsubscribe_batch_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::query_idle_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::update_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::loaded_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::refreshed_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::resync_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::rebaseline_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::reset_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::owner_lost_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::reparent_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::fail_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::unit_appeared_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::hand_over_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::adopt_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::handover_done_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::epoch_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::watch_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::timer_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::index_built_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::scan_done_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::remote_impl::owner_timeout_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::remote_impl::rewatch_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::space_impl::source_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::space_impl::member_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::space_impl::listed_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::space_impl::source_failed_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::space_impl::retire_msg))
  CAF_ADD_TYPE_ID(weir_actors, (weir::actors::watch_impl::sample_msg))
CAF_END_TYPE_ID_BLOCK(weir_actors)
// clang-format on

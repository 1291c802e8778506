// The connection actor: arc-hub §2–§5 for one client. It parses inbound frames (core), runs the
// revision/tombstone state machine (core::revision_table), enforces subscription budgets,
// binds named queries and opens subscriptions on the owning unit's shard. Results do not pass
// through it: the query actor writes this subscription's envelope head around the shared body
// straight to the connection's sink, and the `live` flag this actor clears on replacement,
// cancellation or termination keeps anything stale from being written.
#include "actors/hub_connection.hpp"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/health_watch.hpp"
#include "actors/messages.hpp"
#include "actors/random_ids.hpp"
#include "actors/runtime_impl.hpp"
#include "core/access_rule.hpp"
#include "core/hub_codec.hpp"
#include "core/query_definition.hpp"
#include "core/query_health.hpp"
#include "core/query_result.hpp"
#include "core/revision_table.hpp"

namespace weir::actors {

struct hub_connection::shared_state {
  std::atomic<std::size_t> inbound_pending{0};
};

// A weak handle: the strong one lives in the runtime's connection registry, which shutdown
// clears before the actor system goes, so no session ever holds an actor past its system.
struct hub_connection::actor_handle {
  caf::actor_addr addr;
};

namespace {

struct active_sub {
  std::uint64_t token = 0;
  store::unit_key unit;  // where the subscription lives: unsubscribes go the same way
  std::string key;       // the query key on that unit
  std::shared_ptr<std::atomic<bool>> live;
  std::unique_ptr<health_watch> health;   ///< set for a health-feed subscription (no shard)
  std::optional<std::uint64_t> revision;  ///< as subscribed, for a later Error frame
  /// When the credential it was authorized with expires (seconds since the Unix epoch): it ends
  /// then with an Unauthorized frame (the emission guard). Unset when it needs no credential.
  std::optional<std::int64_t> expires_at;
};

std::int64_t unix_now_s() {
  return unix_now_ms() / 1000;
}

/// The read model a query yields, for the health feed: its dataset, or the property documents.
std::string read_model_of(const core::query_definition& def) {
  return def.dataset.value_or("objects");
}

struct conn_state {
  runtime::impl* rt = nullptr;
  std::weak_ptr<frame_sink> sink;
  std::shared_ptr<hub_connection::shared_state> shared;
  std::string sub_caller;
  std::uint64_t directory_id = 0;
  core::health_scope scope;  // who this connection belongs to: what its health feed shows
  std::shared_ptr<const core::principal> who;  // who opened it: WebSocket subscribes run as it
  shared_time pong_clock;
  std::optional<core::revision_table> revs;
  std::unordered_map<std::string, active_sub> subs;  // by queryId
  /// The earliest expiry a pending expiry_msg was sent for; 0 when none is pending.
  std::int64_t expiry_armed_for = 0;
  static inline const char* name = "weir.hub_connection";

  void write(outbound_frame f) {
    if (auto s = sink.lock()) {
      s->send(std::move(f));
    }
  }

  void write_text(std::string text) { write(outbound_frame::text(std::move(text))); }

  /// Disposes the live operation of `query_id`, if any, returning its budget unit.
  void drop(const std::string& query_id) {
    auto it = subs.find(query_id);
    if (it == subs.end()) {
      return;
    }
    release(it->second);
    subs.erase(it);
    rt->directory.remove_subscription(directory_id, query_id);
  }

  void release(active_sub& s) {
    // Cleared first: from here on nothing of this subscription reaches the wire, even a frame
    // already queued in the session.
    s.live->store(false, std::memory_order_release);
    if (s.health) {
      s.health.reset();
    } else {
      rt->send_to_live_shard(s.unit, unsubscribe_msg{s.key, s.token});
    }
    rt->subscriptions.release(sub_caller);
  }

  ~conn_state() {
    for (auto& [qid, s] : subs) {
      release(s);
    }
  }
};

using conn_ptr = caf::stateful_actor<conn_state>*;

void fail(conn_ptr self, const std::string& query_id, std::optional<std::uint64_t> revision,
          std::string_view text) {
  auto& st = self->state;
  st.write_text(core::encode_error(std::string_view{query_id}, revision, text));
  st.revs->on_terminated(query_id, std::chrono::steady_clock::now());
}

/// The terminal Unauthorized frame (arc-hub §2.1): subscribe-time denial or an expired credential.
void deny(conn_ptr self, const std::string& query_id, std::optional<std::uint64_t> revision) {
  auto& st = self->state;
  st.write_text(core::encode_unauthorized(query_id, revision));
  st.revs->on_terminated(query_id, std::chrono::steady_clock::now());
}

/// A credential is only as good as its expiry: past it the caller is anonymous.
const core::principal& effective(const std::shared_ptr<const core::principal>& who) {
  if (who->expires_at && unix_now_s() >= *who->expires_at) {
    return *core::anonymous_principal();
  }
  return *who;
}

/// Makes sure an expiry_msg arrives when the earliest credential of a subscription expires.
void arm_expiry(conn_ptr self) {
  auto& st = self->state;
  std::int64_t earliest = 0;
  for (const auto& [qid, s] : st.subs) {
    if (s.expires_at && (earliest == 0 || *s.expires_at < earliest)) {
      earliest = *s.expires_at;
    }
  }
  if (earliest == 0 || (st.expiry_armed_for != 0 && st.expiry_armed_for <= earliest)) {
    return;
  }
  st.expiry_armed_for = earliest;
  // At most a day at a time (on_expiry re-arms): a far-off expiry must not overflow the
  // scheduler's clock arithmetic.
  constexpr std::int64_t day_ms = 24 * 3600 * 1000;
  auto wait = std::clamp<std::int64_t>(earliest * 1000 - unix_now_ms(), 0, day_ms);
  self->delayed_send(self, std::chrono::milliseconds{wait}, expiry_msg{});
}

/// Ends every subscription whose credential has expired (the emission guard): nothing more of it
/// is written, and the client gets Unauthorized for it. Siblings are unaffected (§2.1).
void on_expiry(conn_ptr self) {
  auto& st = self->state;
  st.expiry_armed_for = 0;
  auto now = unix_now_s();
  std::vector<std::pair<std::string, std::optional<std::uint64_t>>> expired;
  for (const auto& [qid, s] : st.subs) {
    if (s.expires_at && now >= *s.expires_at) {
      expired.emplace_back(qid, s.revision);
    }
  }
  for (auto& [qid, revision] : expired) {
    st.drop(qid);
    deny(self, qid, revision);
  }
  arm_expiry(self);
}

/// Opens a subscription on the health feed (arc-hub §11): the connections of this one's own
/// caller, sampled by a health_watch instead of a shard. The budget unit is already taken.
unsigned subscribe_health(conn_ptr self, core::client_frame& f, const core::principal& who) {
  auto& st = self->state;
  // Decision 7: with authentication on, the feed needs a signed-in caller.
  if (st.rt->opts.hub.authentication && !who.authenticated()) {
    st.rt->subscriptions.release(st.sub_caller);
    deny(self, f.query_id, f.revision);
    return 401;
  }
  auto head = std::make_shared<const std::string>(
      core::encode_query_result_prefix(f.query_id, f.revision, random_uuid()));
  auto live = std::make_shared<std::atomic<bool>>(true);
  auto served = std::make_shared<std::atomic<std::int64_t>>(0);
  st.rt->directory.add_subscription(st.directory_id, f.query_id,
                                    std::string{core::query_health_name}, "QueryHealth", served);
  auto& rt = *st.rt;
  auto watch =
      health_watch::open(rt, st.scope, st.sink, std::move(head), "}", live, std::move(served));
  st.subs[f.query_id] = active_sub{
      rt.next_token(), {}, {}, std::move(live), std::move(watch), f.revision, who.expires_at};
  arm_expiry(self);
  return 200;
}

/// Applies a Subscribe (a WS frame or an SSE control POST: one state machine for both), authorized
/// as `who`, and returns the status an SSE control POST answers with (arc-hub §8): 200 accepted,
/// duplicate, stale, or unknown/invalid query (with an Error frame); 401 unauthorized (with an
/// Unauthorized frame); 503 over a subscription limit (with an Error frame). The WebSocket hub
/// ignores the status.
unsigned on_subscribe(conn_ptr self, core::client_frame& f, const core::principal& who) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  if (st.revs->on_subscribe(f.query_id, f.revision, now) == core::subscribe_outcome::ignore) {
    return 200;  // duplicate or stale: no frame (§4)
  }
  st.drop(f.query_id);  // a replacement starts from a fresh baseline
  const auto& hub = st.rt->opts.hub;
  if (st.subs.size() >= hub.max_subscriptions_per_connection) {
    fail(self, f.query_id, f.revision, core::hub_error_text::connection_limit);
    return 503;
  }
  if (!st.rt->subscriptions.try_acquire(st.sub_caller)) {
    fail(self, f.query_id, f.revision, core::hub_error_text::subscription_limit);
    return 503;
  }
  if (f.request.query_name == core::query_health_name) {
    return subscribe_health(self, f, who);
  }
  const auto* def = st.rt->catalog.by_name(f.request.query_name);
  if (!def) {
    st.rt->subscriptions.release(st.sub_caller);
    fail(self, f.query_id, f.revision, core::hub_error_text::unknown_query);
    return 200;
  }
  if (!core::check_access(def->authorize, who)) {
    st.rt->subscriptions.release(st.sub_caller);
    deny(self, f.query_id, f.revision);
    return 401;
  }
  auto bound = core::bind_query(*def, f.request.arguments, f.request.page.value_or(0),
                                f.request.page_size.value_or(0), f.request.sort_by,
                                f.request.descending(), who.claims);
  if (!bound) {
    st.rt->subscriptions.release(st.sub_caller);
    if (bound.error().code.starts_with("auth.")) {
      deny(self, f.query_id, f.revision);  // the caller lacks a claim the query binds
      return 401;
    }
    fail(self, f.query_id, f.revision, core::hub_error_text::invalid_query);
    return 200;
  }
  auto token = st.rt->next_token();
  auto head = std::make_shared<const std::string>(
      core::encode_query_result_prefix(f.query_id, f.revision, random_uuid()));
  auto live = std::make_shared<std::atomic<bool>>(true);
  store::unit_key unit{bound->space, bound->single_id ? std::string{} : bound->object};
  auto served = std::make_shared<std::atomic<std::int64_t>>(0);
  st.rt->directory.add_subscription(st.directory_id, f.query_id, def->name, read_model_of(*def),
                                    served);
  std::optional<std::int64_t> expires_at;
  if (!def->authorize.anonymous()) {
    expires_at = who.expires_at;
  }
  st.subs[f.query_id] = active_sub{token, unit, bound->key, live, nullptr, f.revision, expires_at};
  auto query = std::make_shared<const core::bound_query>(std::move(bound.value()));
  st.rt->send_to_shard(unit,
                       subscribe_msg{std::move(query), subscriber{caf::actor_cast<caf::actor>(self),
                                                                  token,
                                                                  f.request.mode,
                                                                  st.sink,
                                                                  std::move(head),
                                                                  std::move(live),
                                                                  "}",
                                                                  std::move(served),
                                                                  nullptr,
                                                                  {},
                                                                  false}});
  arm_expiry(self);
  return 200;
}

/// Applies an Unsubscribe (§4); an SSE control POST answers 200 whatever happened (§8).
unsigned on_unsubscribe(conn_ptr self, const core::client_frame& f) {
  auto& st = self->state;
  if (st.revs->on_unsubscribe(f.query_id, f.revision, std::chrono::steady_clock::now()) ==
      core::unsubscribe_outcome::cancel) {
    st.drop(f.query_id);
  }
  return 200;
}

void on_inbound(conn_ptr self, inbound_msg& m) {
  auto& st = self->state;
  st.shared->inbound_pending.fetch_sub(1, std::memory_order_relaxed);
  auto parsed = core::parse_client_frame(m.text);
  if (!parsed) {
    // §8: answer and keep the connection open; no queryId is attached.
    st.write_text(core::encode_error(std::nullopt, std::nullopt, core::hub_error_text::malformed));
    return;
  }
  auto& f = parsed.value();
  switch (f.type) {
    case core::client_frame_type::subscribe:
      on_subscribe(self, f, effective(st.who));
      break;
    case core::client_frame_type::unsubscribe:
      on_unsubscribe(self, f);
      break;
    case core::client_frame_type::ping:
      if (f.timestamp) {
        st.write_text(core::encode_pong(*f.timestamp));
      }
      break;
    case core::client_frame_type::pong:
      if (st.pong_clock) {
        st.pong_clock->store(unix_now_ms(), std::memory_order_relaxed);
      }
      break;
  }
}

caf::behavior conn_behavior(conn_ptr self, runtime::impl* rt, std::weak_ptr<frame_sink> sink,
                            std::shared_ptr<hub_connection::shared_state> shared,
                            std::string sub_caller, std::uint64_t directory_id,
                            core::health_scope scope, std::shared_ptr<const core::principal> who) {
  auto& st = self->state;
  st.rt = rt;
  st.who = std::move(who);
  st.directory_id = directory_id;
  st.scope = std::move(scope);
  st.pong_clock = rt->directory.pong_clock(directory_id);
  st.sink = std::move(sink);
  st.shared = std::move(shared);
  st.sub_caller = std::move(sub_caller);
  core::revision_options ro;
  ro.tombstone_ttl = std::chrono::milliseconds{rt->opts.hub.tombstone_retention_ms};
  ro.max_tombstones = rt->opts.hub.max_tombstones;
  st.revs.emplace(ro);
  return {
      [self](inbound_msg& m) { on_inbound(self, m); },
      [self](const sub_failed_msg& m) {
        // The query's side ended this subscription (its owner node stayed unreachable): an
        // Error frame, and the query id is terminated like any failed subscription (§4).
        auto& st = self->state;
        for (auto& [qid, s] : st.subs) {
          if (s.token == m.token) {
            auto query_id = qid;
            auto revision = s.revision;
            st.drop(query_id);
            fail(self, query_id, revision, core::hub_error_text::query_failed);
            break;
          }
        }
      },
      [self](control_msg& m) {
        auto status = m.frame.type == core::client_frame_type::subscribe
                          ? on_subscribe(self, m.frame, effective(m.who))
                          : on_unsubscribe(self, m.frame);
        m.done(status);
      },
      [self](expiry_msg) { on_expiry(self); },
  };
}

}  // namespace

std::unique_ptr<hub_connection> hub_connection::open(runtime& rt, std::weak_ptr<frame_sink> sink,
                                                     connection_info info) {
  auto& impl = rt.internals();
  // Hub connections are budgeted per principal, or per client address for anonymous callers
  // (§9.1, preferConnection=false); their subscriptions per principal or per connection id.
  const auto& who = *info.who;
  auto caller = caller_key(who, "anonymous-address", info.remote_address);
  if (!impl.addresses.try_acquire(info.remote_address)) {
    return nullptr;
  }
  if (!impl.connections.try_acquire(caller)) {
    impl.addresses.release(info.remote_address);
    return nullptr;
  }
  std::unique_ptr<hub_connection> c{new hub_connection};
  c->rt_ = &rt;
  c->id_ = random_uuid();
  if (impl.link) {
    // In a cluster the id names the node holding the connection, so a control POST landing on
    // any node can be forwarded to it. The random part is what makes it unguessable; the
    // holder still applies the ownership rules to whoever presents it.
    c->id_ += "@" + impl.link->self_id();
  }
  c->caller_ = std::move(caller);
  c->info_ = info;
  c->shared_ = std::make_shared<shared_state>();
  auto sub_caller = caller_key(who, "anonymous-connection", c->id_);
  connection_directory::connection_entry entry;
  entry.id = c->id_;
  entry.tenant = who.tenant;
  entry.subject = who.subject;
  entry.client =
      core::client_info{info.remote_address, info.user_agent, who.subject, info.protocol};
  entry.established_at_ms = unix_now_ms();
  c->ping_clock_ = entry.last_ping_sent;
  c->directory_id_ = impl.directory.add_connection(std::move(entry));
  auto a = spawn_anywhere([&] {
    return impl.sys->spawn(
        conn_behavior, &impl, std::move(sink), c->shared_, std::move(sub_caller), c->directory_id_,
        core::health_scope{who.tenant, info.remote_address, who.subject}, info.who);
  });
  c->registry_id_ = impl.add_connection(a);
  c->actor_ = std::make_unique<actor_handle>(actor_handle{a.address()});
  impl.hub_connections.fetch_add(1);
  return c;
}

hub_connection::~hub_connection() {
  auto& impl = rt_->internals();
  if (!impl.stopped.load()) {
    if (auto a = caf::actor_cast<caf::actor>(actor_->addr)) {
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    }
  }
  impl.remove_connection(registry_id_);
  impl.directory.remove_connection(directory_id_);
  impl.connections.release(caller_);
  impl.addresses.release(info_.remote_address);
  impl.hub_connections.fetch_sub(1);
}

bool hub_connection::deliver(std::string text) {
  auto limit = rt_->hub().max_inbound_frames;
  if (shared_->inbound_pending.fetch_add(1, std::memory_order_relaxed) >= limit) {
    shared_->inbound_pending.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  if (rt_->internals().stopped.load()) {
    return true;  // shutting down: the session is closing and the frame has no one to go to
  }
  if (auto a = caf::actor_cast<caf::actor>(actor_->addr)) {
    caf::anon_send(a, inbound_msg{std::move(text)});
  }
  return true;
}

void hub_connection::control(core::client_frame frame, std::shared_ptr<const core::principal> who,
                             std::function<void(unsigned)> done) {
  if (rt_->internals().stopped.load()) {
    done(503);
    return;
  }
  if (auto a = caf::actor_cast<caf::actor>(actor_->addr)) {
    caf::anon_send(a, control_msg{std::move(frame), std::move(who), std::move(done)});
  } else {
    done(404);  // the connection ended between lookup and now: as if unknown (§8)
  }
}

void hub_connection::note_ping_sent() {
  ping_clock_->store(unix_now_ms(), std::memory_order_relaxed);
}

std::string hub_connection::connected_frame() const {
  return core::encode_connected(id_, rt_->hub().keep_alive_interval_ms);
}

}  // namespace weir::actors

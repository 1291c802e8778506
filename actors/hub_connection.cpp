// A hub connection: arc-hub §2–§5 for one client. It parses inbound frames (core), runs the
// revision/tombstone state machine (core::revision_table), enforces subscription budgets, binds
// named queries and opens subscriptions on the owning unit's shard. Results do not pass through
// it: the query actor writes this subscription's envelope head around the shared body straight
// to the connection's sink, and the `live` flag cleared on replacement, cancellation or
// termination keeps anything stale from being written.
//
// There is no actor per connection (an actor and its mailbox were about 1.8 KB of every idle
// connection, docs/performance.md): the state machine runs on the thread that brings it work
// — the session's I/O thread for a WebSocket frame, the POST's for an SSE control, a query's
// when it ends a subscription, the node's timer actor at a credential's expiry — under the
// connection's own mutex, which also orders its frames on the wire.
#include "actors/hub_connection.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <unordered_map>

#include "actors/health_watch.hpp"
#include "actors/messages.hpp"
#include "actors/random_ids.hpp"
#include "actors/runtime_impl.hpp"
#include "actors/unsubscribe_batch.hpp"
#include "core/access_rule.hpp"
#include "core/hub_codec.hpp"
#include "core/query_definition.hpp"
#include "core/query_health.hpp"
#include "core/query_result.hpp"
#include "core/revision_table.hpp"

namespace weir::actors {
namespace {

struct active_sub {
  std::uint64_t token = 0;
  /// Where unsubscribes go: the unit's space and object and the query key on that unit, in one
  /// string (one allocation; the bound query itself is the query actor's). Empty for a
  /// health-feed subscription (no shard).
  std::string route;
  std::uint32_t space_len = 0;
  std::uint32_t object_len = 0;
  /// The named query, for the health feed (the catalog is immutable); null for the feed itself.
  const core::query_definition* def = nullptr;
  std::shared_ptr<std::atomic<bool>> live;
  std::unique_ptr<health_watch> health;   ///< set for a health-feed subscription
  std::optional<std::uint64_t> revision;  ///< as subscribed, for a later Error frame
  /// When the credential it was authorized with expires (seconds since the Unix epoch): it ends
  /// then with an Unauthorized frame (the emission guard). Unset when it needs no credential.
  std::optional<std::int64_t> expires_at;
  std::int64_t connected_at_ms = 0;  ///< for the health feed
  shared_time served;                ///< stamped by whoever delivers its data (health feed)
};

void set_route(active_sub& s, const store::unit_key& unit, std::string_view key) {
  s.route.reserve(unit.space.size() + unit.object.size() + key.size());
  s.route.append(unit.space).append(unit.object).append(key);
  s.space_len = static_cast<std::uint32_t>(unit.space.size());
  s.object_len = static_cast<std::uint32_t>(unit.object.size());
}

store::unit_key route_unit(const active_sub& s) {
  return store::unit_key{s.route.substr(0, s.space_len), s.route.substr(s.space_len, s.object_len)};
}

std::string route_key(const active_sub& s) {
  return s.route.substr(s.space_len + s.object_len);
}

std::int64_t unix_now_s() {
  return unix_now_ms() / 1000;
}

/// The read model a query yields, for the health feed: its dataset, or the property documents.
std::string read_model_of(const core::query_definition& def) {
  return def.dataset.value_or("objects");
}

/// A credential is only as good as its expiry: past it the caller is anonymous.
const core::principal& effective(const std::shared_ptr<const core::principal>& who) {
  if (who->expires_at && unix_now_s() >= *who->expires_at) {
    return *core::anonymous_principal();
  }
  return *who;
}

}  // namespace

struct hub_connection::state final : subscription_owner,
                                     timed_target,
                                     directory_member,
                                     std::enable_shared_from_this<hub_connection::state> {
  // Set at open, then read-only. `info.who` opened it: WebSocket subscribes run as it.
  runtime::impl* rt = nullptr;
  std::weak_ptr<frame_sink> sink;
  connection_info info;
  std::string id;
  std::int64_t established_at_ms = 0;
  // Stamped without the lock; read by the health feed.
  std::atomic<std::int64_t> last_ping_sent{0};
  std::atomic<std::int64_t> last_pong_received{0};

  mutable std::mutex mu;  // guards everything below
  bool ended = false;
  frame_sink* out = nullptr;  // the session, while an entry point holds it
  std::optional<core::revision_table> revs;
  std::unordered_map<std::string, active_sub> subs;  // by queryId
  /// The earliest expiry a timer was asked for; 0 when none is pending.
  std::int64_t expiry_armed_for = 0;

  /// What every entry point holds: the session, so that it cannot end (and end this
  /// connection) while the lock is held, and the lock. The session is let go after the lock.
  class entry {
   public:
    explicit entry(state& s) : session_(s.sink.lock()), lock_(s.mu), s_(s) {
      s.out = session_.get();
    }
    ~entry() { s_.out = nullptr; }
    entry(const entry&) = delete;
    entry& operator=(const entry&) = delete;

   private:
    std::shared_ptr<frame_sink> session_;  // declared first: released after the lock
    std::unique_lock<std::mutex> lock_;
    state& s_;
  };

  // subscription_owner: the query's side ended subscription `token` (its owner node stayed
  // unreachable): an Error frame, and the query id is terminated like any failed one (§4).
  void subscription_failed(std::uint64_t token) override {
    entry e{*this};
    if (ended) {
      return;
    }
    for (auto& [qid, s] : subs) {
      if (s.token == token) {
        auto query_id = qid;
        auto revision = s.revision;
        drop(query_id);
        fail(query_id, revision, core::hub_error_text::query_failed);
        break;
      }
    }
  }

  // timed_target: a credential some subscriptions were authorized with may have expired.
  void on_timer() override {
    entry e{*this};
    if (!ended) {
      on_expiry();
    }
  }

  // --- The rest runs with `mu` held (inside an entry). ---

  void write_text(std::string text) {
    if (out) {
      out->send(outbound_frame::text(std::move(text)));
    }
  }

  /// Disposes the live operation of `query_id`, if any, returning its budget unit.
  void drop(const std::string& query_id) {
    auto it = subs.find(query_id);
    if (it == subs.end()) {
      return;
    }
    release(it->second);
    subs.erase(it);
  }

  /// The subscriptions' budget key, the same as the connection's: per principal when signed
  /// in, per client address otherwise (seed 001: anonymous requests from the same address in
  /// the same tenant share a budget), so a caller's hub subscriptions on every connection and
  /// its direct and windowed ones count against one limit. Built when used, not kept: a
  /// subscribe is rare next to the frames an idle connection's memory is measured against.
  std::string budget_key() const {
    return caller_key(*info.who, "anonymous-address", info.remote_address);
  }

  bool acquire_unit() { return rt->subscriptions.try_acquire(budget_key()); }

  void release_unit() { rt->subscriptions.release(budget_key()); }

  void release(active_sub& s) {
    // Cleared first: from here on nothing of this subscription reaches the wire, even a frame
    // already queued in the session.
    s.live->store(false, std::memory_order_release);
    if (s.health) {
      s.health.reset();
    } else if (!s.route.empty() && !rt->stopped.load()) {
      auto unit = route_unit(s);
      if (!unsubscribe_batch::defer(*rt, unit, route_key(s), s.token)) {
        rt->send_to_live_shard(unit, unsubscribe_msg{route_key(s), s.token});
      }
    }
    release_unit();
  }

  /// The connection ends: every subscription is released; nothing more is written.
  void end() {
    ended = true;
    for (auto& [qid, s] : subs) {
      release(s);
    }
    subs.clear();
  }

  void fail(const std::string& query_id, std::optional<std::uint64_t> revision,
            std::string_view text) {
    write_text(core::encode_error(std::string_view{query_id}, revision, text));
    revs->on_terminated(query_id, std::chrono::steady_clock::now());
  }

  /// The terminal Unauthorized frame (arc-hub §2.1): subscribe-time denial or an expired
  /// credential.
  void deny(const std::string& query_id, std::optional<std::uint64_t> revision) {
    write_text(core::encode_unauthorized(query_id, revision));
    revs->on_terminated(query_id, std::chrono::steady_clock::now());
  }

  /// Makes sure on_timer runs when the earliest credential of a subscription expires.
  void arm_expiry() {
    std::int64_t earliest = 0;
    for (const auto& [qid, s] : subs) {
      if (s.expires_at && (earliest == 0 || *s.expires_at < earliest)) {
        earliest = *s.expires_at;
      }
    }
    if (earliest == 0 || (expiry_armed_for != 0 && expiry_armed_for <= earliest)) {
      return;
    }
    expiry_armed_for = earliest;
    // At most a day at a time (on_expiry re-arms): a far-off expiry must not overflow the
    // scheduler's clock arithmetic.
    constexpr std::int64_t day_ms = 24 * 3600 * 1000;
    auto wait = std::clamp<std::int64_t>(earliest * 1000 - unix_now_ms(), 0, day_ms);
    rt->call_after(std::chrono::milliseconds{wait}, weak_from_this());
  }

  /// Ends every subscription whose credential has expired (the emission guard): nothing more
  /// of it is written, and the client gets Unauthorized for it. Siblings are unaffected (§2.1).
  void on_expiry() {
    expiry_armed_for = 0;
    auto now = unix_now_s();
    std::vector<std::pair<std::string, std::optional<std::uint64_t>>> expired;
    for (const auto& [qid, s] : subs) {
      if (s.expires_at && now >= *s.expires_at) {
        expired.emplace_back(qid, s.revision);
      }
    }
    for (auto& [qid, revision] : expired) {
      drop(qid);
      deny(qid, revision);
    }
    arm_expiry();
  }

  /// Opens a subscription on the health feed (arc-hub §11): the connections of this one's own
  /// caller, sampled by a health_watch instead of a shard. The budget unit is already taken.
  unsigned subscribe_health(core::client_frame& f, const core::principal& caller) {
    // Decision 7: with authentication on, the feed needs a signed-in caller.
    if (rt->opts.hub.authentication && !caller.authenticated()) {
      release_unit();
      deny(f.query_id, f.revision);
      return 401;
    }
    auto head = std::make_shared<const std::string>(
        core::encode_query_result_prefix(f.query_id, f.revision, random_uuid()));
    auto live = std::make_shared<std::atomic<bool>>(true);
    auto served = std::make_shared<std::atomic<std::int64_t>>(0);
    auto watch = health_watch::open(*rt, scope(), sink, std::move(head), "}", live, served);
    auto& s = subs[f.query_id];
    s = active_sub{};
    s.token = rt->next_token();
    s.live = std::move(live);
    s.health = std::move(watch);
    s.revision = f.revision;
    s.expires_at = caller.expires_at;
    s.connected_at_ms = unix_now_ms();
    s.served = std::move(served);
    arm_expiry();
    return 200;
  }

  /// Applies a Subscribe (a WS frame or an SSE control POST: one state machine for both),
  /// authorized as `caller`, and returns the status an SSE control POST answers with (arc-hub
  /// §8): 200 accepted, duplicate, stale, or unknown/invalid query (with an Error frame); 401
  /// unauthorized (with an Unauthorized frame); 503 over a subscription limit (with an Error
  /// frame). The WebSocket hub ignores the status.
  unsigned subscribe(core::client_frame& f, const core::principal& caller) {
    auto now = std::chrono::steady_clock::now();
    if (revs->on_subscribe(f.query_id, f.revision, now) == core::subscribe_outcome::ignore) {
      return 200;  // duplicate or stale: no frame (§4)
    }
    drop(f.query_id);  // a replacement starts from a fresh baseline
    const auto& hub = rt->opts.hub;
    if (subs.size() >= hub.max_subscriptions_per_connection) {
      fail(f.query_id, f.revision, core::hub_error_text::connection_limit);
      return 503;
    }
    if (!acquire_unit()) {
      fail(f.query_id, f.revision, core::hub_error_text::subscription_limit);
      return 503;
    }
    if (f.request.query_name == core::query_health_name) {
      return subscribe_health(f, caller);
    }
    const auto* def = rt->catalog.by_name(f.request.query_name);
    if (!def) {
      release_unit();
      fail(f.query_id, f.revision, core::hub_error_text::unknown_query);
      return 200;
    }
    if (!core::check_access(def->authorize, caller)) {
      release_unit();
      deny(f.query_id, f.revision);
      return 401;
    }
    auto bound = core::bind_query(*def, f.request.arguments, f.request.page.value_or(0),
                                  f.request.page_size.value_or(0), f.request.sort_by,
                                  f.request.descending(), caller.claims);
    if (!bound) {
      release_unit();
      if (bound.error().code.starts_with("auth.")) {
        deny(f.query_id, f.revision);  // the caller lacks a claim the query binds
        return 401;
      }
      fail(f.query_id, f.revision, core::hub_error_text::invalid_query);
      return 200;
    }
    auto token = rt->next_token();
    auto head = std::make_shared<const std::string>(
        core::encode_query_result_prefix(f.query_id, f.revision, random_uuid()));
    auto live = std::make_shared<std::atomic<bool>>(true);
    auto served = std::make_shared<std::atomic<std::int64_t>>(0);
    std::optional<std::int64_t> expires_at;
    if (!def->authorize.anonymous()) {
      expires_at = caller.expires_at;
    }
    auto query = std::make_shared<const core::bound_query>(std::move(bound.value()));
    auto unit = unit_of(*query);
    auto& s = subs[f.query_id];
    s = active_sub{};
    s.token = token;
    set_route(s, unit, query->key);
    s.def = def;
    s.live = live;
    s.revision = f.revision;
    s.expires_at = expires_at;
    s.connected_at_ms = unix_now_ms();
    s.served = served;
    subscriber sub;
    sub.owner = weak_from_this();
    sub.token = token;
    sub.mode = f.request.mode;
    sub.sink = sink;
    sub.head = std::move(head);
    sub.live = std::move(live);
    sub.tail = "}";
    sub.served = std::move(served);
    rt->send_to_shard(std::move(unit), subscribe_msg{std::move(query), std::move(sub)});
    arm_expiry();
    return 200;
  }

  /// Applies an Unsubscribe (§4); an SSE control POST answers 200 whatever happened (§8).
  unsigned unsubscribe(const core::client_frame& f) {
    if (revs->on_unsubscribe(f.query_id, f.revision, std::chrono::steady_clock::now()) ==
        core::unsubscribe_outcome::cancel) {
      drop(f.query_id);
    }
    return 200;
  }

  /// Whose this connection is: what its health feed shows.
  core::health_scope scope() const {
    return core::health_scope{info.who->tenant, info.remote_address, info.who->subject};
  }

  // directory_member: the health feed samples this node's connections.
  void describe(const core::health_scope& viewer,
                std::vector<core::connection_health>& out) const override {
    const auto& who = *info.who;
    if (!viewer.sees(who.tenant, who.subject, info.remote_address)) {
      return;
    }
    auto stamp = [](std::int64_t v) {
      return v == 0 ? std::nullopt : std::optional<std::int64_t>{v};
    };
    core::connection_health h;
    h.connection_id = id;
    h.protocol = info.protocol;
    h.established_at_ms = established_at_ms;
    h.client = core::client_info{info.remote_address, info.user_agent, who.subject, info.protocol};
    auto ping = stamp(last_ping_sent.load(std::memory_order_relaxed));
    auto pong = stamp(last_pong_received.load(std::memory_order_relaxed));
    std::lock_guard lock{mu};
    for (const auto& [qid, s] : subs) {
      core::subscription_health sh;
      sh.subscription_id = qid;
      sh.query_identifier = s.def ? s.def->name : std::string{core::query_health_name};
      sh.read_model_type = s.def ? read_model_of(*s.def) : "QueryHealth";
      sh.connected_at_ms = s.connected_at_ms;
      sh.last_ping_sent_at_ms = ping;
      sh.last_pong_received_at_ms = pong;
      sh.last_data_served_at_ms =
          s.served ? stamp(s.served->load(std::memory_order_relaxed)) : std::nullopt;
      h.subscriptions.push_back(std::move(sh));
    }
    // By queryId, for a stable output.
    std::sort(h.subscriptions.begin(), h.subscriptions.end(),
              [](const auto& a, const auto& b) { return a.subscription_id < b.subscription_id; });
    out.push_back(std::move(h));
  }

  void inbound(std::string_view text) {
    auto parsed = core::parse_client_frame(text);
    if (!parsed) {
      // §8: answer and keep the connection open; no queryId is attached.
      write_text(core::encode_error(std::nullopt, std::nullopt, core::hub_error_text::malformed));
      return;
    }
    auto& f = parsed.value();
    switch (f.type) {
      case core::client_frame_type::subscribe:
        subscribe(f, effective(info.who));
        break;
      case core::client_frame_type::unsubscribe:
        unsubscribe(f);
        break;
      case core::client_frame_type::ping:
        if (f.timestamp) {
          write_text(core::encode_pong(*f.timestamp));
        }
        break;
      case core::client_frame_type::pong:
        last_pong_received.store(unix_now_ms(), std::memory_order_relaxed);
        break;
    }
  }
};

hub_connection hub_connection::open(runtime& rt, std::weak_ptr<frame_sink> sink,
                                    connection_info info) {
  auto& impl = rt.internals();
  // Hub connections, like their subscriptions, are budgeted per principal, or per client
  // address for anonymous callers (seed 001's table; §9.1 with preferConnection=false).
  auto caller = caller_key(*info.who, "anonymous-address", info.remote_address);
  if (!impl.addresses.try_acquire(info.remote_address)) {
    return {};
  }
  if (!impl.connections.try_acquire(caller)) {
    impl.addresses.release(info.remote_address);
    return {};
  }
  auto st = std::make_shared<state>();
  st->rt = &impl;
  st->sink = std::move(sink);
  st->id = random_uuid();
  if (impl.link) {
    // In a cluster the id names the node holding the connection, so a control POST landing on
    // any node can be forwarded to it. The random part is what makes it unguessable; the
    // holder still applies the ownership rules to whoever presents it.
    st->id += "@" + impl.link->self_id();
  }
  st->info = std::move(info);  // the user agent is kept once, here (a browser's is 100+ bytes)
  st->established_at_ms = unix_now_ms();
  core::revision_options ro;
  ro.tombstone_ttl = std::chrono::milliseconds{impl.opts.hub.tombstone_retention_ms};
  ro.max_tombstones = impl.opts.hub.max_tombstones;
  st->revs.emplace(ro);
  impl.directory.add(*st);
  impl.hub_connections.fetch_add(1);
  hub_connection c;
  c.state_ = std::move(st);
  return c;
}

hub_connection& hub_connection::operator=(hub_connection&& o) noexcept {
  if (this != &o) {
    close();
    state_ = std::move(o.state_);
  }
  return *this;
}

hub_connection::~hub_connection() {
  close();
}

void hub_connection::close() {
  if (!state_) {
    return;
  }
  auto& impl = *state_->rt;
  {
    // Not an entry: the session is what is ending (it holds this), so nothing is written.
    std::lock_guard lock{state_->mu};
    state_->end();
  }
  impl.directory.remove(*state_);  // after the lock: the directory's lock comes first
  const auto& info = state_->info;
  impl.connections.release(caller_key(*info.who, "anonymous-address", info.remote_address));
  impl.addresses.release(info.remote_address);
  impl.hub_connections.fetch_sub(1);
  state_.reset();
}

const connection_info& hub_connection::info() const {
  return state_->info;
}

const std::string& hub_connection::id() const {
  return state_->id;
}

void hub_connection::deliver(std::string_view text) {
  if (state_->rt->stopping.load()) {
    return;  // shutting down: the session is closing and the frame has nowhere to go
  }
  state::entry e{*state_};
  if (!state_->ended) {
    state_->inbound(text);
  }
}

void hub_connection::control(core::client_frame frame, std::shared_ptr<const core::principal> who,
                             std::function<void(unsigned)> done) {
  if (state_->rt->stopping.load()) {
    done(503);
    return;
  }
  unsigned status = 404;  // the connection ended meanwhile: as if unknown (§8)
  {
    state::entry e{*state_};
    if (!state_->ended) {
      status = frame.type == core::client_frame_type::subscribe
                   ? state_->subscribe(frame, effective(who))
                   : state_->unsubscribe(frame);
    }
  }
  done(status);
}

void hub_connection::note_ping_sent() {
  state_->last_ping_sent.store(unix_now_ms(), std::memory_order_relaxed);
}

std::string hub_connection::connected_frame() const {
  return core::encode_connected(state_->id, state_->rt->opts.hub.keep_alive_interval_ms);
}

}  // namespace weir::actors

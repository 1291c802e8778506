// runtime: owns the CAF actor system and the unit → shard registry.
#include "actors/runtime_impl.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/messages.hpp"
#include "actors/whole_refresh.hpp"
#include "actors/write_check.hpp"
#include "log/log.hpp"

namespace weir::actors {

std::string caller_key(std::string_view tenant, std::string_view kind, std::string_view value) {
  // JSON array text, as arc-hub §9.1 keys callers: the three parts can never run together.
  auto quote = [](std::string& out, std::string_view s) {
    out.push_back('"');
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out.push_back('\\');
      }
      out.push_back(c);
    }
    out.push_back('"');
  };
  std::string out = "[";
  quote(out, tenant);
  out.push_back(',');
  quote(out, kind);
  out.push_back(',');
  quote(out, value);
  out.push_back(']');
  return out;
}

std::string caller_key(const core::principal& who, std::string_view anonymous_kind,
                       std::string_view anonymous_value) {
  if (who.authenticated()) {
    return caller_key(who.tenant, "principal", who.subject);
  }
  return caller_key(who.tenant, anonymous_kind, anonymous_value);
}

runtime::impl::impl(runtime_options o, std::vector<core::query_definition> queries,
                    store::durable_store& s)
    : opts(std::move(o)),
      store(s),
      catalog(std::move(queries)),
      connections(opts.hub.max_hub_connections, opts.hub.max_hub_connections_per_caller),
      addresses(std::size_t(-1), opts.hub.max_hub_connections_per_address),
      subscriptions(opts.hub.max_subscriptions, opts.hub.max_subscriptions_per_caller),
      loader(s, opts.records, skipped) {
  whole_refreshes = make_whole_refresh_lane(*this);
  // A query whose dataset is bound per subscription could read any dataset: no index is kept
  // for it (every dataset of every unit would pay for one).
  for (const auto& def : catalog.all()) {
    if (!def.object || !def.dataset || core::is_placeholder(*def.dataset)) {
      continue;
    }
    std::string space = core::is_placeholder(def.space) ? std::string{} : def.space;
    std::string object = core::is_placeholder(*def.object) ? std::string{} : *def.object;
    for (const auto& keys : def.filter_index_sorts) {
      filter_index fi{space, object, *def.dataset, keys};
      if (std::none_of(filter_indexes.begin(), filter_indexes.end(), [&](const filter_index& f) {
            return f.space == fi.space && f.object == fi.object && f.dataset == fi.dataset &&
                   f.keys == fi.keys;
          })) {
        filter_indexes.push_back(std::move(fi));
      }
    }
  }
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(std::max(1, opts.actor_threads)));
  // Work sharing wakes an idle worker through a condition variable the moment an actor has
  // mail. CAF's default work stealing makes idle workers poll, sleeping up to 10 ms between
  // polls once relaxed, which showed up as a 20 ms p99 write-to-receipt latency at low load.
  cfg.set("scheduler.policy", caf::atom("sharing"));
  sys = std::make_unique<caf::actor_system>(cfg);
  // The timer actor takes an argument it does not need: CAF 0.17 spawning a function with no
  // arguments dereferences a null std::tuple<> pointer (UBSan: reference binding to null).
  timers = spawn_anywhere([&] {
    return sys->spawn(
        [](timer_actor::pointer, std::uint64_t /*unused*/) -> timer_actor::behavior_type {
          return {[](timer_msg& m) {
            if (auto t = m.target.lock()) {
              t->on_timer();
            }
          }};
        },
        std::uint64_t{0});
  });
}

void runtime::impl::call_after(std::chrono::milliseconds wait, std::weak_ptr<timed_target> target) {
  std::lock_guard lock{timers_mu};
  if (timers) {
    caf::delayed_anon_send(timers, wait, timer_msg{std::move(target)});
  }
}

namespace {
/// The unit's owner when another member owns it.
std::optional<std::string> rt_owner(const runtime::impl& rt, const store::unit_key& unit) {
  return rt.link ? rt.link->remote_owner(unit) : std::nullopt;
}
}  // namespace

unit_actor runtime::impl::shard_locked(shard_stripe& s, std::string key,
                                       const store::unit_key& unit) {
  auto it = s.shards.find(key);
  if (it != s.shards.end()) {
    return it->second.actor;
  }
  // Any thread may be the first to use a unit (HTTP, gRPC, an actor).
  auto owner = link ? link->remote_owner(unit) : std::nullopt;
  unit_actor a = spawn_anywhere([&] {
    if (owner) {
      return spawn_remote_shard(*this, unit, *owner);
    }
    return spawn_shard(*this, unit);
  });
  s.shards.emplace(std::move(key), shard_entry{a, owner.value_or("")});
  return a;
}

space_view_actor runtime::impl::space_view_locked(
    const std::shared_ptr<const core::windowed_request>& req, bool member_part) {
  auto key = space_view_key(req, member_part);
  auto it = space_views.find(key);
  if (it != space_views.end()) {
    return it->second;
  }
  auto a = spawn_anywhere([&] { return spawn_space_view(*this, req, member_part); });
  space_views.emplace(std::move(key), a);
  return a;
}

void runtime::impl::forget_space_view(const std::string& key, const caf::actor_addr& addr) {
  std::lock_guard lock{space_views_mu};
  auto it = space_views.find(key);
  if (it != space_views.end() && it->second.address() == addr) {
    space_views.erase(it);
  }
}

bool runtime::impl::retire_space_view(const std::string& key, const space_view_actor& self,
                                      const std::function<bool()>& may_retire) {
  std::lock_guard lock{space_views_mu};
  auto it = space_views.find(key);
  if (it == space_views.end() || it->second != self || !may_retire()) {
    return false;
  }
  space_views.erase(it);
  return true;
}

void runtime::impl::watch_space(const std::string& space, const std::string& dataset,
                                space_view_actor view) {
  std::lock_guard lock{space_watch_mu};
  space_watchers[space + '\0' + dataset].push_back(std::move(view));
}

void runtime::impl::unwatch_space(const std::string& space, const std::string& dataset,
                                  const space_view_actor& view) {
  std::lock_guard lock{space_watch_mu};
  auto key = space + '\0' + dataset;
  auto it = space_watchers.find(key);
  if (it == space_watchers.end()) {
    return;
  }
  std::erase(it->second, view);
  if (it->second.empty()) {
    space_watchers.erase(it);
  }
}

void runtime::impl::unit_has_dataset(const std::string& space, const std::string& object,
                                     const std::string& dataset) {
  std::lock_guard lock{space_watch_mu};
  auto it = space_watchers.find(space + '\0' + dataset);
  if (it == space_watchers.end()) {
    return;
  }
  for (const auto& v : it->second) {
    notify_unit_appeared(v, object);
  }
}

void runtime::impl::forget_shard(const store::unit_key& unit, const caf::actor_addr& addr) {
  auto key = unit_registry_key(unit);
  auto& s = stripe_of(key);
  std::lock_guard lock{s.mu};
  auto it = s.shards.find(key);
  if (it != s.shards.end() && it->second.actor.address() == addr) {
    s.shards.erase(it);
  }
}

std::uint64_t runtime::impl::add_connection(caf::actor_addr a) {
  std::lock_guard lock{conns_mu};
  conns.emplace(++next_conn, std::move(a));
  return next_conn;
}

void runtime::impl::remove_connection(std::uint64_t id) {
  std::lock_guard lock{conns_mu};
  conns.erase(id);
}

bool runtime::impl::retire_shard(const store::unit_key& unit, const unit_actor& self,
                                 const std::function<bool()>& may_retire) {
  auto key = unit_registry_key(unit);
  auto& s = stripe_of(key);
  std::lock_guard lock{s.mu};
  auto it = s.shards.find(key);
  if (it == s.shards.end() || it->second.actor != self || !may_retire()) {
    return false;
  }
  s.shards.erase(it);
  return true;
}

runtime::runtime(runtime_options opts, std::vector<core::query_definition> queries,
                 store::durable_store& store)
    : impl_(std::make_unique<impl>(std::move(opts), std::move(queries), store)) {}

runtime::~runtime() {
  shutdown();
}

namespace {

/// Answers a write exactly once: if every copy of its callback is destroyed unanswered (the
/// runtime was stopping and dropped it, or its unit's actor died with it in the mailbox), the
/// last one answers server.unavailable, so no caller waits forever and the in-flight count
/// returns to zero.
struct answer_once {
  answer_once(write_callback f, std::atomic<std::size_t>* c, core::latency_histogram* h)
      : fn(std::move(f)), counter(c), latency(h) {}
  answer_once(const answer_once&) = delete;
  answer_once& operator=(const answer_once&) = delete;

  write_callback fn;
  std::atomic<std::size_t>* counter = nullptr;
  core::latency_histogram* latency = nullptr;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  bool answered = false;

  void answer(core::result<write_outcome> r) {
    answered = true;
    latency->observe(std::chrono::steady_clock::now() - started);
    fn(std::move(r));
    counter->fetch_sub(1);
  }

  ~answer_once() {
    if (!answered) {
      answer(core::make_error("server.unavailable",
                              "the write did not complete: the node is stopping, or its unit "
                              "could not be loaded; read it back before retrying"));
    }
  }
};

}  // namespace

void runtime::submit(write_command cmd, write_callback done) {
  submit_write(std::move(cmd), std::move(done), true);
}

void runtime::submit_checked(write_command cmd, write_callback done) {
  submit_write(std::move(cmd), std::move(done), false);
}

void runtime::submit_write(write_command cmd, write_callback user_done, bool check) {
  auto* counter = &impl_->in_flight_writes;
  counter->fetch_add(1);
  auto once = std::make_shared<answer_once>(std::move(user_done), counter, &impl_->write_latency);
  write_callback done = [once](core::result<write_outcome> r) { once->answer(std::move(r)); };
  // Checked here, before it is applied or forwarded: a bad write never reaches an owner, and an
  // owner checks again what a member forwarded (it arrives here through Peer.Apply).
  if (auto ok = check ? check_write(cmd, impl_->opts.records) : core::result<void>{}; !ok) {
    done(std::move(ok).error());
    return;
  }
  if (cmd.kind == write_kind::delete_object) {
    // Two units: the object's datasets, then its property document in the space's `objects`
    // unit. 404 only when neither held anything.
    auto space = cmd.space;
    auto object = cmd.object;
    auto key = cmd.idempotency_key;
    auto* rt = impl_.get();
    cmd.dataset.clear();
    if (auto owner = rt_owner(*rt, {space, object})) {
      // The object's owner runs both steps (it forwards the second where that belongs).
      rt->link->forward_write(*owner, std::move(cmd), std::move(done));
      return;
    }
    impl_->send_to_shard(
        {space, object},
        write_msg{std::move(cmd), [rt, space, object, key, done = std::move(done)](
                                      core::result<write_outcome> first) mutable {
                    if (!first) {
                      done(std::move(first).error());
                      return;
                    }
                    bool had_data = !first->version_id.empty();
                    write_command doc;
                    doc.kind = write_kind::delete_object_document;
                    doc.space = space;
                    doc.dataset = std::string{objects_dataset};
                    doc.id = object;
                    // The same key in the `objects` unit: a retry answers the property document's
                    // delete as it was answered, even once there is nothing left to delete.
                    doc.idempotency_key = key;
                    rt->submit_unit(
                        {space, ""}, std::move(doc),
                        [had_data, object, first = std::move(first.value()),
                         done = std::move(done)](core::result<write_outcome> second) mutable {
                          if (second) {
                            done(std::move(second));
                          } else if (second.error().code == "record.not_found" && had_data) {
                            done(std::move(first));
                          } else if (second.error().code == "record.not_found") {
                            done(core::make_error("object.not_found",
                                                  "object '" + object + "' does not exist"));
                          } else {
                            done(std::move(second).error());
                          }
                        });
                  }});
    return;
  }
  store::unit_key unit{cmd.space, cmd.object};
  if (targets_objects_unit(cmd.kind)) {
    unit.object.clear();
  }
  impl_->submit_unit(std::move(unit), std::move(cmd), std::move(done));
}

std::optional<std::string> runtime::ordered_unit(const write_command& cmd) const {
  if (cmd.kind == write_kind::delete_object || cmd.kind == write_kind::refresh_records) {
    return std::nullopt;
  }
  store::unit_key unit{cmd.space, targets_objects_unit(cmd.kind) ? std::string{} : cmd.object};
  if (rt_owner(*impl_, unit)) {
    return std::nullopt;
  }
  return unit_registry_key(unit);
}

void runtime::impl::submit_unit(store::unit_key unit, write_command cmd, write_callback done) {
  if (auto owner = rt_owner(*this, unit)) {
    link->forward_write(*owner, std::move(cmd), std::move(done));
    return;
  }
  if (cmd.kind == write_kind::refresh_records) {
    refresh_local(unit, std::move(cmd), std::move(done));
    return;
  }
  send_to_shard(unit, write_msg{std::move(cmd), std::move(done)});
}

void runtime::impl::reload_unit(const store::unit_key& unit, const unit_actor& self) {
  auto key = unit_registry_key(unit);
  auto& s = stripe_of(key);
  std::lock_guard lock{s.mu};
  auto it = s.shards.find(key);
  if (stopping || it == s.shards.end() || it->second.actor != self) {
    return;
  }
  it->second.actor = spawn_anywhere([&] { return spawn_shard(*this, unit, self); });
  caf::anon_send(self, hand_over_msg{it->second.actor});
}

void runtime::set_cluster(cluster_link* link) {
  impl_->link = link;
  impl_->update_principal_shares();
}

void runtime::impl::update_principal_shares() {
  if (link) {
    // A signed-in caller's budget is the cluster's, not each member's: every member grants it
    // its share, so a caller spreading its connections and subscriptions over the members gets
    // no more than the configured per-caller limit in all (arc-hub §9.1). Anonymous keys (a
    // client address) are not one identity across members and keep their caps.
    // The shares add up to the limit exactly: the first `limit % n` members (in id order) get
    // one more. A limit below the member count still leaves each member one.
    auto ids = link->members();
    std::sort(ids.begin(), ids.end());
    auto n = std::max<std::size_t>(1, ids.size());
    auto rank =
        static_cast<std::size_t>(std::find(ids.begin(), ids.end(), link->self_id()) - ids.begin());
    auto share = [n, rank](std::size_t limit) {
      return std::max<std::size_t>(1, limit / n + (rank < limit % n ? 1 : 0));
    };
    connections.set_principal_share(share(opts.hub.max_hub_connections_per_caller));
    subscriptions.set_principal_share(share(opts.hub.max_subscriptions_per_caller));
  }
}

void runtime::ownership_changed(bool reload_held) {
  auto& rt = *impl_;
  if (!rt.link) {
    return;
  }
  rt.update_principal_shares();
  auto epoch = rt.link->owners_epoch();
  std::vector<space_view_actor> views;
  std::size_t moved = 0;
  {
    // Every stripe at once: the owners change for all units together, as one step for senders.
    auto locks = rt.lock_all_stripes();
    std::lock_guard views_lock{rt.space_views_mu};
    if (rt.stopping) {
      return;
    }
    for (auto& stripe : rt.stripes) {
      for (auto& [key, e] : stripe.shards) {
        auto nul = key.find('\0');
        store::unit_key unit{key.substr(0, nul), key.substr(nul + 1)};
        auto owner = rt.link->remote_owner(unit).value_or("");
        if (owner == e.owner && !(reload_held && owner.empty())) {
          if (owner.empty()) {
            caf::anon_send(e.actor, epoch_msg{epoch});  // its state holds under these owners too
          }
          continue;
        }
        // The new entry waits for the old one's queries; whatever is sent to the unit from now
        // on reaches the new one, and what reached the old one it passes on.
        auto old = e.actor;
        e.actor = spawn_anywhere([&] {
          return owner.empty() ? spawn_shard(rt, unit, old)
                               : spawn_remote_shard(rt, unit, owner, old);
        });
        e.owner = owner;
        caf::anon_send(old, hand_over_msg{e.actor});
        ++moved;
      }
    }
    for (auto& [k, v] : rt.space_views) {
      views.push_back(v);
    }
  }
  // A space-wide window merges every member's units: its streams close with server_shutdown
  // and their clients subscribe again over the new members (Decision 5).
  for (auto& v : views) {
    notify_membership_changed(v);
  }
  if (moved > 0) {
    log::info("the cluster's owners changed: units held here moved", {{"units", moved}});
  }
}

cluster_link* runtime::cluster() const {
  return impl_->link;
}

core::result<replica_handle> runtime::open_replica(core::bound_query query,
                                                   std::shared_ptr<replica_sink> sink) {
  if (query.windowed && query.windowed->scope == core::windowed_scope::datasets) {
    // This node's part of a space-wide dataset: its space view over the units it holds.
    replica_handle h{query.space, {}, query.key, impl_->next_token(), query.windowed};
    subscriber sub;
    sub.token = h.token;
    sub.replica = std::move(sink);
    sub.live = std::make_shared<const std::atomic<bool>>(true);
    auto q = std::make_shared<const core::bound_query>(std::move(query));
    if (!impl_->send_to_space_view(h.merged, true, subscribe_msg{std::move(q), std::move(sub)})) {
      return core::make_error("server.draining", "the node is shutting down");
    }
    impl_->replicas.fetch_add(1);
    return h;
  }
  auto unit = unit_of(query);
  if (auto owner = rt_owner(*impl_, unit)) {
    return core::make_error("cluster.not_owner",
                            "this node does not own the query's data (member '" + *owner +
                                "' does): the nodes' member lists differ");
  }
  replica_handle h{unit.space, unit.object, query.key, impl_->next_token(), nullptr};
  auto q = std::make_shared<const core::bound_query>(std::move(query));
  subscriber sub;
  sub.token = h.token;
  sub.replica = std::move(sink);
  sub.live = std::make_shared<const std::atomic<bool>>(true);
  if (!impl_->send_to_shard(unit, subscribe_msg{std::move(q), std::move(sub)})) {
    return core::make_error("server.draining", "the node is shutting down");
  }
  impl_->replicas.fetch_add(1);
  return h;
}

void runtime::close_replica(const replica_handle& h) {
  impl_->replicas.fetch_sub(1);
  if (h.merged) {
    impl_->send_to_live_space_view(h.merged, true, unsubscribe_msg{h.key, h.token});
    return;
  }
  impl_->send_to_live_shard({h.space, h.object}, unsubscribe_msg{h.key, h.token});
}

std::vector<core::connection_health> runtime::local_connections(
    const core::health_scope& scope) const {
  return impl_->directory.snapshot(scope);
}

void runtime::resync_replica(const replica_handle& h) {
  if (h.merged) {
    impl_->send_to_live_space_view(h.merged, true, resync_msg{h.key, h.token});
    return;
  }
  impl_->send_to_live_shard({h.space, h.object}, resync_msg{h.key, h.token});
}

bool runtime::store_holds_nul_characters() const {
  return impl_->store.holds_nul_characters();
}

const char* runtime::store_backend() const {
  return impl_->store.backend();
}

store::capture_status runtime::store_capture() const {
  return impl_->store.capture();
}

store::connection_health runtime::store_connections() const {
  return impl_->store.connections();
}

std::vector<skipped_rows::entry> runtime::recent_skipped_rows() const {
  return impl_->skipped.recent();
}

bool runtime::has_local_space(const std::string& space) const {
  return impl_->store.has_space(space);
}

void runtime::space_exists(const std::string& space, std::function<void(bool)> done) {
  auto* rt = impl_.get();
  bool known = false;
  {
    std::lock_guard lock{rt->known_spaces_mu};
    known = rt->known_spaces.count(space) > 0;
  }
  if (known) {
    done(true);  // outside the lock: `done` may ask again
    return;
  }
  auto remember = [rt, space] {
    std::lock_guard lock{rt->known_spaces_mu};
    if (rt->known_spaces.size() >= 100000) {
      rt->known_spaces.clear();  // a cache: forgetting costs one store read per space
    }
    rt->known_spaces.insert(space);
  };
  if (rt->store.has_space(space)) {
    remember();
    done(true);
    return;
  }
  if (!rt->link) {
    done(false);
    return;
  }
  rt->link->space_exists(space, [remember, done = std::move(done)](bool yes) {
    if (yes) {
      remember();
    }
    done(yes);
  });
}

const core::count_histogram* runtime::commit_group_sizes() const {
  return impl_->store.group_sizes();
}

const core::latency_histogram& runtime::write_latency() const {
  return impl_->write_latency;
}

std::size_t runtime::in_flight_writes() const {
  return impl_->in_flight_writes.load();
}

const query_catalog& runtime::catalog() const {
  return impl_->catalog;
}
const hub_options& runtime::hub() const {
  return impl_->opts.hub;
}
const core::document_limits& runtime::record_limits() const {
  return impl_->opts.records;
}
budget& runtime::connection_budget() {
  return impl_->connections;
}
budget& runtime::subscription_budget() {
  return impl_->subscriptions;
}

runtime_stats runtime::stats() const {
  runtime_stats s;
  {
    for (auto& stripe : impl_->stripes) {
      std::lock_guard lock{stripe.mu};
      s.units += stripe.shards.size();
    }
  }
  s.query_keys = impl_->query_actors.load();
  s.hub_connections = impl_->hub_connections.load();
  s.subscriptions = impl_->subscriptions.total();
  s.remote_units = impl_->remote_units.load();
  s.upstreams = impl_->upstreams.load();
  s.replicas = impl_->replicas.load();
  s.held_row_bytes = impl_->held_row_bytes.load();
  for (std::size_t i = 0; i < s.subscriptions_by_encoding.size(); ++i) {
    auto n = impl_->subscriptions_by_encoding[i].load(std::memory_order_relaxed);
    s.subscriptions_by_encoding[i] = n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  s.store_queued = impl_->store.queued();
  s.skipped_records = impl_->skipped.total();
  auto running = impl_->filter_passes_running.load(std::memory_order_relaxed);
  s.filter_passes_running = running > 0 ? static_cast<std::size_t>(running) : 0;
  s.filter_passes_peak =
      static_cast<std::size_t>(impl_->filter_passes_peak.load(std::memory_order_relaxed));
  auto builds = impl_->index_builds_running.load(std::memory_order_relaxed);
  s.index_builds_running = builds > 0 ? static_cast<std::size_t>(builds) : 0;
  for (std::size_t i = 0; i < s.dataset_passes.size(); ++i) {
    s.dataset_passes[i] = impl_->dataset_passes[i].load(std::memory_order_relaxed);
  }
  return s;
}

void runtime::stop_captured_refreshes() {
  impl_->refreshes->stop();
}

void runtime::shutdown() {
  if (!impl_ || !impl_->sys) {
    return;
  }
  impl_->refreshes->stop();  // the refreshes still waiting: their transactions are read again
  {
    auto locks = impl_->lock_all_stripes();
    std::lock_guard views_lock{impl_->space_views_mu};
    if (impl_->stopping) {
      return;
    }
    impl_->stopping = true;  // from here no send spawns a shard
    for (auto& stripe : impl_->stripes) {
      for (auto& [k, e] : stripe.shards) {
        caf::anon_send_exit(e.actor, caf::exit_reason::user_shutdown);
      }
      stripe.shards.clear();
    }
    for (auto& [k, a] : impl_->space_views) {
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    }
    impl_->space_views.clear();
  }
  {
    // Health watches belong to sessions that outlive this call (the gateway is torn down
    // after the actors); stop them here so awaiting all actors cannot hang.
    std::lock_guard lock{impl_->conns_mu};
    for (auto& [id, a] : impl_->conns) {
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    }
    impl_->conns.clear();
  }
  {
    std::lock_guard lock{impl_->timers_mu};
    caf::anon_send_exit(impl_->timers, caf::exit_reason::user_shutdown);
    impl_->timers = nullptr;
  }
  impl_->loader.stop();
  impl_->sys->await_all_actors_done();
  // From here sessions that still hold a hub_connection make no actor calls (see its
  // destructor); the system can go now.
  impl_->stopped.store(true);
  impl_->sys.reset();
}

}  // namespace weir::actors

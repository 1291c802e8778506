// health_watch: the sampling actor behind a health-feed subscription.
#include "actors/health_watch.hpp"

#include <chrono>

#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "core/query_result.hpp"

namespace weir::actors {

namespace {

using tick_atom = caf::atom_constant<caf::atom("tick")>;

struct watch_state {
  runtime::impl* rt = nullptr;
  core::health_scope scope;
  std::weak_ptr<frame_sink> sink;
  std::shared_ptr<const std::string> head;
  std::string_view tail;
  std::shared_ptr<const std::atomic<bool>> live;
  shared_time served;
  std::string last;  // the comparison form of the last emission
  static inline const char* name = "weir.health_watch";
};

/// The caller's connections here and, in a cluster, on every other member: `done` gets them
/// oldest first, once.
void gather(runtime::impl& rt, const core::health_scope& scope,
            std::function<void(std::vector<core::connection_health>)> done) {
  auto local = rt.directory.snapshot(scope);
  if (!rt.link) {
    done(std::move(local));
    return;
  }
  rt.link->remote_connections(scope, [local = std::move(local), done = std::move(done)](
                                         std::vector<core::connection_health> remote) mutable {
    local.insert(local.end(), std::make_move_iterator(remote.begin()),
                 std::make_move_iterator(remote.end()));
    std::stable_sort(local.begin(), local.end(), [](const auto& a, const auto& b) {
      return a.established_at_ms < b.established_at_ms;
    });
    done(std::move(local));
  });
}

}  // namespace

namespace watch_impl {

/// A sample gathered from the cluster, back on the watch's actor. Named here (not in an
/// anonymous namespace) for its type ID (messages.hpp).
struct sample_msg {
  std::vector<core::connection_health> connections;
};

}  // namespace watch_impl
}  // namespace weir::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(weir::actors::watch_impl::sample_msg)

namespace weir::actors {
namespace {

using watch_impl::sample_msg;

/// What a watch accepts, checked by the compiler: its own tick, and the samples gathered for
/// it (from gRPC threads, in a cluster).
using watch_actor = caf::typed_actor<caf::reacts_to<tick_atom>, caf::reacts_to<sample_msg>>;
using watch_ptr = watch_actor::stateful_pointer<watch_state>;

void evaluate(watch_ptr self, std::vector<core::connection_health> conns) {
  auto& st = self->state;
  if (!st.live->load(std::memory_order_acquire)) {
    self->quit();
    return;
  }
  // Compared without the feeds' own data-served times, so a feed is not woken by its own
  // emissions (arc-hub §11).
  auto comparable = conns;
  for (auto& c : comparable) {
    for (auto& s : c.subscriptions) {
      if (s.query_identifier == core::query_health_name) {
        s.last_data_served_at_ms.reset();
      }
    }
  }
  auto cmp = core::encode_query_health(comparable);
  if (cmp != st.last) {
    st.last = std::move(cmp);
    auto sink = st.sink.lock();
    if (!sink) {
      self->quit();
      return;
    }
    if (st.served) {
      st.served->store(unix_now_ms(), std::memory_order_relaxed);
    }
    auto data = core::encode_query_health(conns);
    auto body = std::make_shared<const std::string>(
        core::encode_query_result_body(&data, nullptr, core::paging_info{}));
    sink->send(outbound_frame{st.head, std::move(body), st.tail, st.live});
  }
  self->delayed_send(self, std::chrono::milliseconds{st.rt->opts.hub.health_interval_ms},
                     tick_atom::value);
}

void sample(watch_ptr self) {
  auto& st = self->state;
  if (!st.live->load(std::memory_order_acquire)) {
    self->quit();
    return;
  }
  auto me = watch_actor{self};
  gather(*st.rt, st.scope, [me](std::vector<core::connection_health> conns) {
    caf::anon_send(me, sample_msg{std::move(conns)});
  });
}

watch_actor::behavior_type watch_behavior(watch_ptr self, runtime::impl* rt,
                                          core::health_scope scope, std::weak_ptr<frame_sink> sink,
                                          std::shared_ptr<const std::string> head,
                                          std::string_view tail,
                                          std::shared_ptr<const std::atomic<bool>> live,
                                          shared_time served) {
  auto& st = self->state;
  st.rt = rt;
  st.scope = std::move(scope);
  st.sink = std::move(sink);
  st.head = std::move(head);
  st.tail = tail;
  st.live = std::move(live);
  st.served = std::move(served);
  self->send(self, tick_atom::value);
  return {
      [self](tick_atom) { sample(self); },
      [self](sample_msg& m) { evaluate(self, std::move(m.connections)); },
  };
}

}  // namespace

struct health_watch::actor_handle {
  caf::actor_addr addr;
  std::uint64_t registry_id = 0;
};

std::unique_ptr<health_watch> health_watch::open(runtime::impl& impl, core::health_scope scope,
                                                 std::weak_ptr<frame_sink> sink,
                                                 std::shared_ptr<const std::string> head,
                                                 std::string_view tail,
                                                 std::shared_ptr<const std::atomic<bool>> live,
                                                 shared_time served) {
  std::unique_ptr<health_watch> w{new health_watch};
  w->rt_ = &impl;
  auto a = spawn_anywhere([&] {
    return impl.sys->spawn(watch_behavior, &impl, std::move(scope), std::move(sink),
                           std::move(head), tail, std::move(live), std::move(served));
  });
  // Registered, so shutdown stops it before the system goes (its session may outlive that).
  auto id = impl.add_connection(a.address());
  w->actor_ = std::make_unique<actor_handle>(actor_handle{a.address(), id});
  return w;
}

health_watch::~health_watch() {
  auto& impl = *rt_;
  if (!impl.stopped.load()) {
    caf::anon_send_exit(actor_->addr, caf::exit_reason::user_shutdown);
  }
  impl.remove_connection(actor_->registry_id);
}

void health_watch::current(runtime& rt, const core::health_scope& scope,
                           std::function<void(std::string)> done) {
  gather(rt.internals(), scope, [done = std::move(done)](std::vector<core::connection_health> c) {
    done(core::encode_query_health(c));
  });
}

}  // namespace weir::actors

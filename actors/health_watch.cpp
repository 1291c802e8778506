// health_watch: the sampling actor behind a health-feed subscription.
#include "actors/health_watch.hpp"

#include <chrono>

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

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

using watch_ptr = caf::stateful_actor<watch_state>*;

void sample(watch_ptr self) {
  auto& st = self->state;
  if (!st.live->load(std::memory_order_acquire)) {
    self->quit();
    return;
  }
  auto& dir = st.rt->directory;
  auto cmp = core::encode_query_health(dir.snapshot(st.scope, true));
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
    auto data = core::encode_query_health(dir.snapshot(st.scope));
    auto body = std::make_shared<const std::string>(
        core::encode_query_result_body(&data, nullptr, core::paging_info{}));
    sink->send(outbound_frame{st.head, std::move(body), st.tail, st.live});
  }
  self->delayed_send(self, std::chrono::milliseconds{st.rt->opts.hub.health_interval_ms},
                     tick_atom::value);
}

caf::behavior watch_behavior(watch_ptr self, runtime::impl* rt, core::health_scope scope,
                             std::weak_ptr<frame_sink> sink,
                             std::shared_ptr<const std::string> head, std::string_view tail,
                             std::shared_ptr<const std::atomic<bool>> live, shared_time served) {
  auto& st = self->state;
  st.rt = rt;
  st.scope = std::move(scope);
  st.sink = std::move(sink);
  st.head = std::move(head);
  st.tail = tail;
  st.live = std::move(live);
  st.served = std::move(served);
  self->send(self, tick_atom::value);
  return {[self](tick_atom) { sample(self); }};
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
  auto a = impl.sys->spawn(watch_behavior, &impl, std::move(scope), std::move(sink),
                           std::move(head), tail, std::move(live), std::move(served));
  // Registered like a connection actor, so shutdown stops it before the system goes.
  auto id = impl.add_connection(a);
  w->actor_ = std::make_unique<actor_handle>(actor_handle{a.address(), id});
  return w;
}

health_watch::~health_watch() {
  auto& impl = *rt_;
  if (!impl.stopped.load()) {
    if (auto a = caf::actor_cast<caf::actor>(actor_->addr)) {
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    }
  }
  impl.remove_connection(actor_->registry_id);
}

std::string health_watch::current(runtime& rt, const core::health_scope& scope) {
  return core::encode_query_health(rt.internals().directory.snapshot(scope));
}

}  // namespace weir::actors

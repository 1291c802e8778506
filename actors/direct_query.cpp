// direct_query: a hub-less subscription, opened on the unit's shard like a hub subscription.
#include "actors/direct_query.hpp"

#include "actors/health_watch.hpp"
#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "core/access_rule.hpp"
#include "core/query_definition.hpp"

namespace weir::actors {

core::result<std::unique_ptr<direct_query>> direct_query::open(
    runtime& rt, const core::query_definition& def, direct_request req,
    std::weak_ptr<frame_sink> sink, std::string head, std::string_view tail) {
  auto& impl = rt.internals();
  const auto& who = *req.who;
  if (auto allowed = core::check_access(def.authorize, who); !allowed) {
    return std::move(allowed).error();
  }
  auto bound = core::bind_query(def, req.arguments, req.page, req.page_size, req.sort_by,
                                req.descending, who.claims);
  if (!bound) {
    return std::move(bound).error();
  }
  if (!impl.subscriptions.try_acquire(req.caller)) {
    return core::make_error("subscription.limit", "Subscription limit reached");
  }
  std::unique_ptr<direct_query> q{new direct_query};
  q->rt_ = &rt;
  q->caller_ = std::move(req.caller);
  if (!def.authorize.anonymous()) {
    q->expires_at_ = who.expires_at;
  }
  q->token_ = impl.next_token();
  q->live_ = std::make_shared<std::atomic<bool>>(true);
  q->space_ = bound->space;
  q->object_ = bound->single_id ? std::string{} : bound->object;
  q->key_ = bound->key;
  auto query = std::make_shared<const core::bound_query>(std::move(bound.value()));
  subscriber sub{caf::actor{},
                 q->token_,
                 core::transfer_mode::full,
                 std::move(sink),
                 std::make_shared<const std::string>(std::move(head)),
                 q->live_,
                 "}",
                 nullptr,
                 nullptr,
                 {},
                 false};
  sub.tail = tail;
  if (!impl.send_to_shard({q->space_, q->object_},
                          subscribe_msg{std::move(query), std::move(sub)})) {
    return core::make_error("server.draining", "this node is shutting down");
  }
  return q;
}

core::result<std::unique_ptr<direct_query>> direct_query::open_health(
    runtime& rt, core::health_scope scope, const direct_request& req,
    std::weak_ptr<frame_sink> sink, std::string head, std::string_view tail) {
  const auto& caller = req.caller;
  auto& impl = rt.internals();
  if (impl.stopped.load()) {
    return core::make_error("server.draining", "this node is shutting down");
  }
  if (impl.opts.hub.authentication && scope.subject.empty()) {
    return core::make_error("auth.required",
                            "the health feed shows a caller its own connections: sign in first");
  }
  if (!impl.subscriptions.try_acquire(caller)) {
    return core::make_error("subscription.limit", "Subscription limit reached");
  }
  std::unique_ptr<direct_query> q{new direct_query};
  q->rt_ = &rt;
  q->caller_ = caller;
  if (impl.opts.hub.authentication) {
    q->expires_at_ = req.who->expires_at;
  }
  q->live_ = std::make_shared<std::atomic<bool>>(true);
  q->health_ = health_watch::open(impl, std::move(scope), std::move(sink),
                                  std::make_shared<const std::string>(std::move(head)), tail,
                                  q->live_, nullptr);
  return q;
}

direct_query::~direct_query() {
  live_->store(false, std::memory_order_release);
  auto& impl = rt_->internals();
  if (health_) {
    health_.reset();
  } else if (!impl.stopped.load()) {
    impl.send_to_live_shard({space_, object_}, unsubscribe_msg{key_, token_});
  }
  impl.subscriptions.release(caller_);
}

}  // namespace weir::actors

// direct_query: a hub-less subscription, opened on the unit's shard like a hub subscription.
#include "actors/direct_query.hpp"

#include "actors/health_watch.hpp"
#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "actors/unsubscribe_batch.hpp"
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
  subscriber sub{{},
                 q->token_,
                 req.mode,
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

core::result<std::unique_ptr<direct_query>> direct_query::open_state(
    runtime& rt, std::string space, std::string object, const direct_request& req,
    std::weak_ptr<frame_sink> sink) {
  auto& impl = rt.internals();
  if (!impl.subscriptions.try_acquire(req.caller)) {
    return core::make_error("access.rate_limited",
                            "Subscription limit reached: close a subscription or retry later");
  }
  std::unique_ptr<direct_query> q{new direct_query};
  q->rt_ = &rt;
  q->caller_ = req.caller;
  q->token_ = impl.next_token();
  q->live_ = std::make_shared<std::atomic<bool>>(true);
  auto bound = core::bind_object_document(std::move(space), std::move(object));
  q->space_ = bound.space;
  q->key_ = bound.key;
  subscriber sub;
  sub.token = q->token_;
  sub.sink = std::move(sink);
  sub.live = q->live_;
  sub.tail = "";
  sub.format = result_format::ag_ui_state;
  if (!impl.send_to_shard({q->space_, q->object_},
                          subscribe_msg{std::make_shared<const core::bound_query>(std::move(bound)),
                                        std::move(sub)})) {
    return core::make_error("server.draining", "this node is shutting down");
  }
  return q;
}

void direct_query::request_baseline() {
  if (!health_ && !key_.empty()) {
    rt_->internals().send_to_live_shard({space_, object_}, rebaseline_msg{key_, token_});
  }
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
  } else if (!impl.stopped.load() &&
             !unsubscribe_batch::defer(impl, {space_, object_}, key_, token_)) {
    impl.send_to_live_shard({space_, object_}, unsubscribe_msg{key_, token_});
  }
  impl.subscriptions.release(caller_);
}

}  // namespace weir::actors

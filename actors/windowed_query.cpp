// windowed_query: a windowed subscription opened on its unit's shard or on the space's merge.
#include "actors/windowed_query.hpp"

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"
#include "actors/unsubscribe_batch.hpp"
#include "core/query_definition.hpp"

namespace weir::actors {

core::result<std::unique_ptr<windowed_query>> windowed_query::open(
    runtime& rt, std::shared_ptr<const core::windowed_request> req,
    std::weak_ptr<windowed_sink> sink, std::string caller) {
  auto& impl = rt.internals();
  if (!impl.subscriptions.try_acquire(caller)) {
    return core::make_error("access.rate_limited",
                            "Subscription limit reached: close a subscription or retry later");
  }
  std::unique_ptr<windowed_query> q{new windowed_query};
  q->rt_ = &rt;
  q->caller_ = std::move(caller);
  q->token_ = impl.next_token();
  q->space_ = req->space;
  q->live_ = std::make_shared<std::atomic<bool>>(true);
  subscriber sub;
  sub.token = q->token_;
  sub.live = q->live_;
  sub.windowed = std::move(sink);
  sub.windowed_stream = true;
  bool sent = false;
  if (req->scope == core::windowed_scope::datasets) {
    q->merged_ = true;
    q->key_ = req->key;
    auto bound = std::make_shared<const core::bound_query>(core::bind_windowed(req));
    sent = impl.send_to_space_view(req, false, subscribe_msg{std::move(bound), std::move(sub)});
  } else {
    auto bound = std::make_shared<const core::bound_query>(core::bind_windowed(req));
    q->object_ = bound->object;
    q->key_ = bound->key;
    sent = impl.send_to_shard({q->space_, q->object_},
                              subscribe_msg{std::move(bound), std::move(sub)});
  }
  q->req_ = std::move(req);
  if (!sent) {
    return core::make_error("server.draining", "this node is shutting down; retry on another");
  }
  return q;
}

windowed_query::~windowed_query() {
  live_->store(false, std::memory_order_release);
  auto& impl = rt_->internals();
  if (!impl.stopped.load()) {
    if (merged_) {
      impl.send_to_live_space_view(req_, false, unsubscribe_msg{key_, token_});
    } else if (!unsubscribe_batch::defer(impl, {space_, object_}, key_, token_)) {
      impl.send_to_live_shard({space_, object_}, unsubscribe_msg{key_, token_});
    }
  }
  impl.subscriptions.release(caller_);
}

}  // namespace weir::actors

// subscription_batch: holding a thread's subscribes and unsubscribes and sending them per unit.
#include "actors/subscription_batch.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"

namespace weir::actors {
namespace {

thread_local subscription_batch* current_batch = nullptr;

bool unit_less(const store::unit_key& a, const store::unit_key& b) {
  return std::tie(a.space, a.object) < std::tie(b.space, b.object);
}

/// Calls `send(unit, first, last)` for each unit's run of `held`, sorted by unit in place
/// (stably: a unit's messages keep their order).
template <class Held, class Send>
void per_unit(std::vector<Held>& held, Send send) {
  std::stable_sort(held.begin(), held.end(),
                   [](const Held& a, const Held& b) { return unit_less(a.unit, b.unit); });
  for (auto first = held.begin(); first != held.end();) {
    auto last =
        std::find_if(first, held.end(), [&](const Held& h) { return !(h.unit == first->unit); });
    send(first->unit, first, last);
    first = last;
  }
}

}  // namespace

subscription_batch::subscription_batch(runtime& rt,
                                       std::function<void(subscription_batch&)> schedule)
    : rt_(&rt.internals()), schedule_(std::move(schedule)) {}

subscription_batch::~subscription_batch() {
  flush();
}

void subscription_batch::set_current(subscription_batch* b) {
  current_batch = b;
}

subscription_batch* subscription_batch::current_for(const runtime::impl& rt) {
  auto* b = current_batch;
  return b != nullptr && b->rt_ == &rt ? b : nullptr;
}

void subscription_batch::held() {
  if (!scheduled_) {
    scheduled_ = true;
    schedule_(*this);
  }
}

bool subscription_batch::defer_unsubscribe(runtime::impl& rt, const store::unit_key& unit,
                                           std::string key, std::uint64_t token) {
  auto* b = current_for(rt);
  if (b == nullptr) {
    return false;
  }
  b->unsubscribes_.push_back(held_unsubscribe{unit, std::move(key), token});
  b->held();
  return true;
}

bool subscription_batch::defer_subscribe(runtime::impl& rt, const store::unit_key& unit,
                                         subscribe_msg& m) {
  auto* b = current_for(rt);
  if (b == nullptr) {
    return false;
  }
  b->subscribes_.push_back(held_subscribe{unit, std::make_unique<subscribe_msg>(std::move(m))});
  b->held();
  return true;
}

void subscription_batch::flush() {
  scheduled_ = false;
  auto subscribes = std::move(subscribes_);
  subscribes_.clear();
  auto unsubscribes = std::move(unsubscribes_);
  unsubscribes_.clear();
  if (rt_->stopped.load()) {
    return;
  }
  // Subscribes first: a subscription held with its own unsubscribe must reach the unit before it.
  per_unit(subscribes, [&](const store::unit_key& unit, auto first, auto last) {
    if (last - first == 1) {
      rt_->send_to_shard(unit, std::move(*first->msg));
      return;
    }
    subscribe_batch_msg m;
    m.items.reserve(static_cast<std::size_t>(last - first));
    for (auto it = first; it != last; ++it) {
      m.items.push_back(std::move(*it->msg));
    }
    rt_->send_to_shard(unit, std::move(m));
  });
  per_unit(unsubscribes, [&](const store::unit_key& unit, auto first, auto last) {
    if (last - first == 1) {
      rt_->send_to_live_shard(unit, unsubscribe_msg{std::move(first->key), first->token});
      return;
    }
    unsubscribe_batch_msg m;
    m.items.reserve(static_cast<std::size_t>(last - first));
    for (auto it = first; it != last; ++it) {
      m.items.push_back(unsubscribe_msg{std::move(it->key), it->token});
    }
    rt_->send_to_live_shard(unit, std::move(m));
  });
}

}  // namespace weir::actors

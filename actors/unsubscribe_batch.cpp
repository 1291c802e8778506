// unsubscribe_batch: holding a thread's unsubscribes and sending them per unit.
#include "actors/unsubscribe_batch.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"

namespace weir::actors {
namespace {

thread_local unsubscribe_batch* current_batch = nullptr;

}  // namespace

unsubscribe_batch::unsubscribe_batch(runtime& rt, std::function<void(unsubscribe_batch&)> schedule)
    : rt_(&rt.internals()), schedule_(std::move(schedule)) {}

unsubscribe_batch::~unsubscribe_batch() {
  flush();
}

void unsubscribe_batch::set_current(unsubscribe_batch* b) {
  current_batch = b;
}

bool unsubscribe_batch::defer(runtime::impl& rt, const store::unit_key& unit, std::string key,
                              std::uint64_t token) {
  auto* b = current_batch;
  if (b == nullptr || b->rt_ != &rt) {
    return false;
  }
  b->held_.push_back(held{unit, std::move(key), token});
  if (!b->scheduled_) {
    b->scheduled_ = true;
    b->schedule_(*b);
  }
  return true;
}

void unsubscribe_batch::flush() {
  scheduled_ = false;
  if (held_.empty()) {
    return;
  }
  auto held = std::move(held_);
  held_.clear();
  if (rt_->stopped.load()) {
    return;
  }
  // Sorted by unit, so each unit's share is one run (a mass disconnect may span many units).
  std::sort(held.begin(), held.end(), [](const auto& a, const auto& b) {
    return std::tie(a.unit.space, a.unit.object) < std::tie(b.unit.space, b.unit.object);
  });
  for (auto first = held.begin(); first != held.end();) {
    auto last =
        std::find_if(first, held.end(), [&](const auto& h) { return !(h.unit == first->unit); });
    unsubscribe_batch_msg m;
    m.items.reserve(static_cast<std::size_t>(last - first));
    for (auto it = first; it != last; ++it) {
      m.items.push_back(unsubscribe_msg{std::move(it->key), it->token});
    }
    if (m.items.size() == 1) {
      rt_->send_to_live_shard(first->unit, std::move(m.items.front()));
    } else {
      rt_->send_to_live_shard(first->unit, std::move(m));
    }
    first = last;
  }
}

}  // namespace weir::actors

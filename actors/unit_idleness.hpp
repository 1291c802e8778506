// weir::actors::unit_idleness — idle retirement shared by the two actors that stand for a unit
// (the shard on its owner, the remote shard on a gateway): a unit nobody uses releases its
// memory after unit_idle_ms, and the next write or subscription brings it back. Internal to
// actors/ (includes CAF).
#pragma once

#include <chrono>

#include "actors/messages.hpp"
#include "actors/runtime_impl.hpp"

namespace weir::actors {

class unit_idleness {
 public:
  /// Notes activity and makes sure an idle check is pending.
  template <class Self>
  void touch(Self* self, const runtime::impl& rt) {
    last_used_ = std::chrono::steady_clock::now();
    if (!scheduled_) {
      scheduled_ = true;
      self->delayed_send(self, std::chrono::milliseconds{rt.opts.unit_idle_ms}, idle_atom::value);
    }
  }

  /// The idle check (on idle_atom): retires `self` from the registry and quits once `unused()`
  /// has held for unit_idle_ms with an empty mailbox; otherwise checks again when that can
  /// next be true. Returns true when the actor quit.
  template <class Self, class Unused>
  bool check(Self* self, runtime::impl& rt, const store::unit_key& unit, Unused unused) {
    scheduled_ = false;
    auto idle_for = std::chrono::milliseconds{rt.opts.unit_idle_ms};
    auto now = std::chrono::steady_clock::now();
    auto wait = idle_for;
    if (unused()) {
      if (now - last_used_ >= idle_for) {
        auto me = unit_actor{self};
        if (rt.retire_shard(unit, me, [self] { return self->mailbox().empty(); })) {
          self->quit();
          return true;
        }
      } else {
        wait = std::chrono::duration_cast<std::chrono::milliseconds>(last_used_ + idle_for - now) +
               std::chrono::milliseconds{1};
      }
    }
    scheduled_ = true;
    self->delayed_send(self, wait, idle_atom::value);
    return false;
  }

 private:
  std::chrono::steady_clock::time_point last_used_ = std::chrono::steady_clock::now();
  bool scheduled_ = false;
};

}  // namespace weir::actors

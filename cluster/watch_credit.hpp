// weir::cluster::watch_credit — the gateway side's bound on one owner's Watch events: the bytes
// of events taken from the stream whose query actor (or space view) has not yet taken them.
// Each event carries a hold; dropping it (once its message is handled, or destroyed unhandled)
// gives its bytes back. At the bound the stream stops reading until the holds fall to half of
// it, so gRPC flow control, and then the owner's bounded queue with its resync, absorb a gateway
// that applies events more slowly than the owner sends them: its mailboxes stay bounded. No gRPC
// here, so the rule is testable without a channel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace weir::cluster {

class watch_credit : public std::enable_shared_from_this<watch_credit> {
 public:
  /// Create with std::make_shared (holds keep the credit alive). `max_bytes` is the bound.
  explicit watch_credit(std::size_t max_bytes) : max_(max_bytes) {}

  /// A stream starts reading under this credit: `resume` starts its next read (any thread).
  void attach(std::function<void()> resume);

  /// An event of `bytes` was taken from the stream: the hold it travels with.
  std::shared_ptr<const void> take(std::size_t bytes);

  /// After an event was handed on: true when the stream may read the next one now. False at the
  /// bound: the stream is paused and `resume` runs once the holds fall to half of it.
  bool may_read();

  /// The stream is ending (cancelled, or its last read failed): `resume` is not called again.
  /// True when it was paused: the caller starts a read itself, so that the stream sees its end
  /// instead of waiting for holds that may be slow to go.
  bool detach();

  /// Bytes held now (/metrics).
  std::size_t held_bytes() const;
  /// Times a stream paused at the bound (/metrics).
  std::uint64_t pauses() const;

 private:
  void release(std::size_t bytes);

  const std::size_t max_;
  mutable std::mutex mu_;
  std::size_t held_ = 0;
  std::uint64_t pauses_ = 0;
  bool paused_ = false;
  std::function<void()> resume_;
};

}  // namespace weir::cluster

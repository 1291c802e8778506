// weir::gateway::hub_outbound — the path the WebSocket and SSE hub sessions share from the
// actors to the socket: the cross-thread inbox and its hand-off to the session's I/O thread (the
// delivery lane, else a post), the outbound queue, the batch in flight with what the socket did
// not take at once (watched_write, bounded by http.sendStallTimeoutMs), the end of each batch,
// and the keep-alive Ping. Each session supplies its framing (write_batch, with gather_batch)
// and what a lost peer, a lagging state stream, a close and the end of a batch mean in its
// protocol.
//
// A class template over the session (CRTP) rather than virtual hooks: it sits on the path of
// every frame, and the two sessions otherwise held the same twenty-odd lines each, already
// drifting. Internal to gateway/ (Beast, and the sessions' private parts, which they open to
// it as a friend).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "actors/frame_sink.hpp"
#include "core/hub_codec.hpp"
#include "gateway/beast.hpp"
#include "gateway/bounded_inbox.hpp"
#include "gateway/delivery_lane.hpp"
#include "gateway/frame_batch.hpp"
#include "gateway/outbound_queue.hpp"
#include "gateway/watched_write.hpp"
#include "gateway/write_now.hpp"

namespace weir::gateway {

/// `Session` has: ctx_ (server_context&), executor(), socket(), shared_from_this(),
/// close_at(bound_close, code, reason), enqueue(frame), write_batch(), wrote(ec), lost(),
/// lagged() (a state stream's resync; never called where the inbox does not resync),
/// admit(frame) (whether a drained frame is queued), conn_ (its hub_connection).
template <class Session>
class hub_outbound : public lane_member {
 public:
  // lane_member (the I/O thread's delivery_lane)
  void take_frames() override {
    taking_ = true;
    drain_inbox();
    taking_ = false;
  }

 protected:
  /// An actor's frame (any thread): into the inbox, the session's I/O thread woken for the
  /// first of a burst.
  void push_frame(actors::outbound_frame frame) {
    switch (inbox_.push(std::move(frame), session().ctx_.rt.hub())) {
      case bounded_inbox::push_result::schedule:
        if (lane_) {
          lane_->ready(session().shared_from_this());
        } else {
          asio::post(session().executor(),
                     [self = session().shared_from_this()] { self->drain_inbox(); });
        }
        break;
      case bounded_inbox::push_result::overflow:
        session().close_at(bound_close::outbound_queue_full, 1013, "Outbound queue full");
        break;
      case bounded_inbox::push_result::lagged:
        asio::post(session().executor(), [self = session().shared_from_this()] { self->lagged(); });
        break;
      case bounded_inbox::push_result::queued:
      case bounded_inbox::push_result::closed:
      case bounded_inbox::push_result::dropped:
        break;
    }
  }

  /// On the I/O thread: what the inbox holds, into the outbound queue (enqueue writes unless
  /// the lane is taking frames, which writes once every ready session took its own).
  void drain_inbox() {
    auto batch = inbox_.drain();
    for (auto& f : batch) {
      if (closing_ || closed_) {
        return;
      }
      if (session().admit(f)) {
        session().enqueue(std::move(f));
      }
    }
  }

  void do_write() {
    while (session().write_batch()) {
    }
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (session().wrote(ec)) {
      do_write();
    }
  }

  /// Writes the batch in `pieces` (its frames at the queue's front): now when the socket takes
  /// it all, then true when the session's wrote() says more waits; otherwise the rest (with
  /// what lay in the caller's `scratch`) as the socket drains, ending in on_write, and false.
  bool send_batch(std::vector<asio::const_buffer>& pieces, const void* scratch,
                  std::size_t scratch_size) {
    writing_ = true;
    beast::error_code ec;
    if (!send_or_keep(session().socket(), pieces, unsent_, scratch, scratch_size, ec)) {
      // The socket's send buffer is full (a client that reads slowly, or a frame larger than a
      // new socket's buffer): the rest goes out as it drains.
      watch(unsent_.pieces, [this](beast::error_code e) { on_write(e, 0); });
      return false;
    }
    return session().wrote(ec);
  }

  /// Writes `pieces` as the socket drains (watched_write); `done` on the session's thread.
  void watch(std::vector<asio::const_buffer>& pieces, std::function<void(beast::error_code)> done) {
    if (!watched_) {
      watched_ = std::make_unique<watched_write>(session().executor());
    }
    watched_->start(session().socket(), pieces, session().ctx_.opts.send_stall,
                    session().shared_from_this(), std::move(done));
  }

  /// The batch in flight is over: its frames leave the queue. False when writing stops here:
  /// the write failed (the session's lost()), or the session closed meanwhile (what is queued
  /// is dropped).
  bool end_batch(beast::error_code ec) {
    writing_ = false;
    unsent_.release();
    if (ec) {
      session().lost();
      return false;
    }
    queue_.finish_batch();
    if (closed_) {
      queue_.clear();
      return false;
    }
    return true;
  }

  /// keep_alive_timer's action (arc-hub §6): a Ping frame, counted as sent by the connection.
  void keep_alive_ping() {
    session().enqueue(actors::outbound_frame::text(
        core::encode_ping(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count())));
    if (session().conn_) {
      session().conn_.note_ping_sent();
    }
  }

  bounded_inbox inbox_;                             // actors → the session's I/O thread
  delivery_lane* lane_ = delivery_lane::current();  // this I/O thread's (null: post instead)
  outbound_queue queue_;
  unsent_batch unsent_;  // the rest of a batch the socket did not take at once
  /// Writes what the socket did not take at once, dropping a peer that takes nothing for
  /// http.sendStallTimeoutMs. Made on the first such write: most connections never need it.
  std::unique_ptr<watched_write> watched_;
  bool taking_ = false;  // take_frames() is queueing: the lane writes afterwards
  bool writing_ = false;
  bool closing_ = false;
  bool closed_ = false;

 private:
  Session& session() { return static_cast<Session&>(*this); }
};

}  // namespace weir::gateway

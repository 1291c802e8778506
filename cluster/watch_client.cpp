// cluster_node's watch client: the gateway side of QueryOwner.Watch — one bidirectional stream
// per owner carrying every watch this node holds there, re-opened with fresh snapshots after
// the owner comes back.
#include <deque>

#include "cluster/cluster_node_impl.hpp"
#include "cluster/watch_codec.hpp"

namespace weir::cluster {

/// The gateway side of one Watch stream to an owner. Created and started under the peer's
/// lock; deletes itself when gRPC is done with it.
class watch_stream final : public grpc::ClientBidiReactor<v1::WatchRequest, v1::WatchEvent> {
 public:
  watch_stream(cluster_node::impl& node, peer_state& p) : node_(node), p_(p) {
    node_.call_started();
  }

  void start(std::vector<v1::WatchRequest> opens) {
    node_.authenticate(ctx_);
    p_.owner_stub->async()->Watch(&ctx_, this);
    // Writes may be started from other threads until the read side ends: hold the reactor.
    AddHold();
    {
      std::lock_guard lock{mu_};
      for (auto& r : opens) {
        out_.push_back(std::move(r));
      }
      if (!out_.empty()) {
        writing_ = true;
        StartWrite(&out_.front());
      }
    }
    // Called by the credit once the events held fell to half its bound: the stream was paused
    // (no read outstanding), and only this call takes it out of that state.
    p_.credit->attach([this] { StartRead(&in_); });
    StartRead(&in_);
    StartCall();
  }

  void enqueue(v1::WatchRequest r) {
    std::lock_guard lock{mu_};
    if (closing_) {
      return;  // the stream is ending; the watch is re-opened on the next one
    }
    out_.push_back(std::move(r));
    if (!writing_) {
      writing_ = true;
      StartWrite(&out_.front());
    }
  }

  /// Cancels the call. True when the stream was paused at its credit's bound: the caller then
  /// calls read_to_end() once it has released the peer's lock (that read fails at once, and its
  /// completion, which may run inside it, ends the stream and takes the lock).
  bool cancel() {
    ctx_.TryCancel();
    return p_.credit->detach();
  }
  void read_to_end() { StartRead(&in_); }

  void OnWriteDone(bool ok) override {
    std::lock_guard lock{mu_};
    out_.pop_front();
    if (!ok || closing_ || out_.empty()) {
      writing_ = false;
      return;
    }
    StartWrite(&out_.front());
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      {
        std::lock_guard lock{mu_};
        closing_ = true;
      }
      p_.credit->detach();
      RemoveHold();
      return;
    }
    p_.stream_events.fetch_add(1, std::memory_order_relaxed);
    node_.deliver(p_, in_, p_.credit->take(in_.ByteSizeLong()));
    if (p_.credit->may_read()) {
      StartRead(&in_);
    }
  }

  void OnDone(const grpc::Status& status) override {
    if (!status.ok()) {
      p_.stream_errors.fetch_add(1, std::memory_order_relaxed);
    }
    node_.stream_done(p_, this);
    auto& node = node_;
    delete this;
    node.call_ended();
  }

 private:
  cluster_node::impl& node_;
  peer_state& p_;
  grpc::ClientContext ctx_;
  v1::WatchEvent in_;
  // Recursive: should gRPC ever run a write completion inline inside StartWrite, the
  // completion takes this lock again on the same thread.
  std::recursive_mutex mu_;
  std::deque<v1::WatchRequest> out_;
  bool writing_ = false;
  bool closing_ = false;
};

namespace {

actors::watch_event lost_event(std::uint64_t id) {
  actors::watch_event ev;
  ev.what = actors::watch_event::kind::lost;
  ev.watch_id = id;
  return ev;
}

v1::WatchRequest open_request(std::uint64_t id, const v1::BoundQuery& q) {
  v1::WatchRequest r;
  r.set_watch_id(id);
  *r.mutable_open() = q;
  return r;
}

}  // namespace

void cluster_node::impl::start_stream_locked(peer_state& p) {
  std::vector<v1::WatchRequest> opens;
  opens.reserve(p.watches.size());
  for (auto& [id, w] : p.watches) {
    opens.push_back(open_request(id, w.query));
  }
  auto* s = new watch_stream(*this, p);
  p.stream = s;
  p.streams_started.fetch_add(1, std::memory_order_relaxed);
  s->start(std::move(opens));
}

void cluster_node::impl::deliver(peer_state& p, const v1::WatchEvent& ev,
                                 std::shared_ptr<const void> hold) {
  actors::watch_event out;
  out.watch_id = ev.watch_id();
  out.hold = std::move(hold);
  switch (ev.body_case()) {
    case v1::WatchEvent::kSnapshot:
      out.what = actors::watch_event::kind::snapshot;
      out.snapshot = from_proto(ev.seq(), ev.snapshot());
      break;
    case v1::WatchEvent::kUpdate:
      out.what = actors::watch_event::kind::update;
      out.update = from_proto(ev.seq(), ev.version_id(), ev.update());
      break;
    case v1::WatchEvent::kError:
      out.what = actors::watch_event::kind::failed;
      out.error = ev.error();
      out.error_code = ev.error_code();
      break;
    default:
      // An event this build does not know (the fields a member sends are its version's): the
      // watch cannot go on correctly, so it ends here rather than missing changes silently.
      out.what = actors::watch_event::kind::failed;
      out.error = "member '" + p.addr.id +
                  "' sent a watch event this node does not understand; every member must run "
                  "the same version of weir";
      out.error_code = "cluster.version_mismatch";
      break;
  }
  actors::watch_callback cb;
  {
    std::lock_guard lock{p.mu};
    auto it = p.watches.find(ev.watch_id());
    if (it == p.watches.end()) {
      return;
    }
    cb = it->second.cb;
    if (out.what == actors::watch_event::kind::failed) {
      p.watches.erase(it);
    }
  }
  cb(std::move(out));
}

void cluster_node::impl::stream_done(peer_state& p, watch_stream* s) {
  // `lost` goes out under the lock that also guards starting the next stream: otherwise a new
  // stream's snapshot could overtake it, and the watch would count a healthy stream as lost
  // (and fail its subscribers when the countdown ends). The callbacks only enqueue a message.
  std::lock_guard lock{p.mu};
  if (p.stream == s) {
    p.stream = nullptr;
  }
  for (auto& [id, w] : p.watches) {
    w.cb(lost_event(id));
  }
}

watch_stream* cluster_node::impl::cancel_stream_locked(peer_state& p) {
  return p.stream && p.stream->cancel() ? p.stream : nullptr;
}

void cluster_node::impl::end_paused_stream(watch_stream* s) {
  if (s) {
    s->read_to_end();
  }
}

std::uint64_t cluster_node::open_watch(const std::string& node, const core::bound_query& query,
                                       actors::watch_callback cb) {
  auto id = impl_->next_watch.fetch_add(1) + 1;
  auto* p = impl_->peer(node);
  if (!p) {
    actors::watch_event ev;
    ev.what = actors::watch_event::kind::failed;
    ev.watch_id = id;
    ev.error = "unknown member '" + node + "'";
    cb(std::move(ev));
    return id;
  }
  v1::BoundQuery q = to_proto(query);
  std::lock_guard lock{p->mu};
  if (p->stream) {
    p->stream->enqueue(open_request(id, q));
    p->watches.emplace(id, watch_entry{std::move(q), std::move(cb)});
  } else if (impl_->state_of(*p, clock_type::now()) == "up" && !impl_->halted) {
    p->watches.emplace(id, watch_entry{std::move(q), std::move(cb)});
    impl_->start_stream_locked(*p);
  } else {
    // Registered: opened once the owner answers heartbeats again. Told under the lock, like
    // stream_done, so this `lost` cannot come after that stream's snapshot.
    cb(lost_event(id));
    p->watches.emplace(id, watch_entry{std::move(q), std::move(cb)});
  }
  return id;
}

void cluster_node::cancel_watch(const std::string& node, std::uint64_t watch_id) {
  auto* p = impl_->peer(node);
  if (!p) {
    return;
  }
  std::lock_guard lock{p->mu};
  // Sent even when the watch is gone here already (a failed watch is dropped on arrival of its
  // error), so the owner releases its replica at once rather than when the stream ends.
  p->watches.erase(watch_id);
  if (p->stream) {
    v1::WatchRequest r;
    r.set_watch_id(watch_id);
    r.set_cancel(true);
    p->stream->enqueue(std::move(r));
  }
}

}  // namespace weir::cluster

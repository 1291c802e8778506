// Membership, heartbeats, forwarding and the gateway side of Watch streams.
//
// Liveness: every heartbeatIntervalMs each node asks every peer for its Status (deadline: the
// interval, at least 100 ms). A peer is up while its last answer is younger than suspectAfterMs,
// suspect until downAfterMs, down after that (and before its first answer). The answer carries
// the peer's own view, so /cluster/health can show whether every member sees the same thing.
//
// Watches: one stream per owner carries every watch this node holds there. When the stream
// breaks, every watch on it hears `lost` and stays registered; once the owner answers
// heartbeats again a new stream re-opens them all, and each gets a fresh snapshot.
#include "cluster/cluster_node.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "actors/capture_health.hpp"
#include "actors/runtime.hpp"
#include "cluster/grpc_errors.hpp"
#include "cluster/watch_codec.hpp"
#include "core/query_definition.hpp"
#include "core/rendezvous.hpp"
#include "store/durable_store.hpp"
#include "weir/v1/peer.grpc.pb.h"
#include "weir/v1/query_owner.grpc.pb.h"

namespace weir::cluster {

using clock_type = std::chrono::steady_clock;

namespace {

class watch_stream;

struct watch_entry {
  v1::BoundQuery query;
  actors::watch_callback cb;
};

}  // namespace

struct peer_state {
  member_address addr;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Peer::Stub> peer_stub;
  std::unique_ptr<v1::QueryOwner::Stub> owner_stub;

  mutable std::mutex mu;
  std::optional<clock_type::time_point> last_ok;
  bool status_in_flight = false;
  v1::StatusReply last_status;
  std::string last_state = "down";
  std::map<std::uint64_t, watch_entry> watches;
  watch_stream* stream = nullptr;
};

struct cluster_node::impl {
  cluster_options opts;
  actors::runtime& rt;
  std::vector<std::string> ids;                              // member ids, for rendezvous
  std::map<std::string, std::unique_ptr<peer_state>> peers;  // every member but this one
  std::atomic<std::uint64_t> next_watch{0};
  std::atomic<bool> draining{false};
  std::atomic<bool> halted{false};  // stop() ran: no new calls

  std::mutex control_mu;
  actors::control_handler control;

  // Calls in flight (heartbeats, forwards, streams): stop() waits for them.
  std::mutex calls_mu;
  std::condition_variable calls_cv;
  std::size_t calls = 0;

  std::mutex run_mu;
  std::condition_variable run_cv;
  bool running = false;
  bool stopped = false;
  std::thread heartbeat;

  impl(cluster_options o, actors::runtime& r) : opts(std::move(o)), rt(r) {}

  void call_started() {
    std::lock_guard lock{calls_mu};
    ++calls;
  }
  /// Counts a new call unless stop() began (checked and counted under one lock, so stop()'s
  /// wait for calls == 0 cannot miss a call started concurrently).
  bool try_call_started() {
    std::lock_guard lock{calls_mu};
    if (halted) {
      return false;
    }
    ++calls;
    return true;
  }
  /// One unary call to a peer, counted so stop() waits for it. `start(ctx, req, reply, cb)`
  /// issues it; `done(status, reply)` runs once, on a gRPC thread, within `deadline_ms`. Returns
  /// false, starting nothing and not calling `done`, once stop() began — unless `always` (the
  /// heartbeat thread, which stop() joins before it waits).
  template <class Req, class Reply, class Start, class Done>
  bool unary(Req req, std::int64_t deadline_ms, Start start, Done done, bool always = false) {
    if (always) {
      call_started();
    } else if (!try_call_started()) {
      return false;
    }
    struct call {
      grpc::ClientContext ctx;
      Req req;
      Reply reply;
      Done done;
    };
    auto* c = new call{{}, std::move(req), {}, std::move(done)};
    authenticate(c->ctx);
    c->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds{deadline_ms});
    start(&c->ctx, &c->req, &c->reply, [this, c](grpc::Status st) {
      c->done(st, c->reply);
      delete c;
      call_ended();
    });
    return true;
  }

  /// Presents this member's token on a call to another member.
  void authenticate(grpc::ClientContext& ctx) const {
    if (!opts.auth.token.empty()) {
      ctx.AddMetadata(peer_token_header, opts.auth.token);
    }
  }

  void call_ended() {
    std::lock_guard lock{calls_mu};
    if (--calls == 0) {
      calls_cv.notify_all();
    }
  }

  std::string state_of(const peer_state& p, clock_type::time_point now) const {
    if (!p.last_ok) {
      return "down";
    }
    auto age = now - *p.last_ok;
    if (age < std::chrono::milliseconds{opts.suspect_after_ms}) {
      return "up";
    }
    if (age < std::chrono::milliseconds{opts.down_after_ms}) {
      return "suspect";
    }
    return "down";
  }

  peer_state* peer(const std::string& id) {
    auto it = peers.find(id);
    return it == peers.end() ? nullptr : it->second.get();
  }

  bool peer_down(peer_state& p) {
    std::lock_guard lock{p.mu};
    return state_of(p, clock_type::now()) == "down";
  }

  void heartbeat_loop();
  void send_status(peer_state& p);
  void start_stream_locked(peer_state& p);
  void deliver(peer_state& p, const v1::WatchEvent& ev);
  void stream_done(peer_state& p, watch_stream* s);
};

namespace {

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

  void cancel() { ctx_.TryCancel(); }

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
      RemoveHold();
      return;
    }
    node_.deliver(p_, in_);
    StartRead(&in_);
  }

  void OnDone(const grpc::Status&) override {
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
  s->start(std::move(opens));
}

void cluster_node::impl::deliver(peer_state& p, const v1::WatchEvent& ev) {
  actors::watch_event out;
  out.watch_id = ev.watch_id();
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

void cluster_node::impl::send_status(peer_state& p) {
  v1::StatusRequest req;
  req.set_from(opts.self);
  unary<v1::StatusRequest, v1::StatusReply>(
      std::move(req), std::max<std::int64_t>(100, opts.heartbeat_interval_ms),
      [&p](auto* ctx, auto* rq, auto* rp, auto cb) {
        p.peer_stub->async()->Status(ctx, rq, rp, std::move(cb));
      },
      [&p](const grpc::Status& st, v1::StatusReply& reply) {
        std::lock_guard lock{p.mu};
        p.status_in_flight = false;
        if (st.ok()) {
          p.last_ok = clock_type::now();
          p.last_status = std::move(reply);
        }
      },
      true);
}

void cluster_node::impl::heartbeat_loop() {
  std::unique_lock run_lock{run_mu};
  while (running) {
    run_lock.unlock();
    auto now = clock_type::now();
    for (auto& [id, pp] : peers) {
      auto& p = *pp;
      watch_stream* to_cancel = nullptr;
      {
        std::lock_guard lock{p.mu};
        auto state = state_of(p, now);
        // The owner is back: re-open every watch. Not while it drains (it refuses new streams;
        // its watches re-open once it restarts).
        if (state == "up" && !p.stream && !p.watches.empty() && !p.last_status.draining()) {
          start_stream_locked(p);
        }
        if (state == "down" && p.stream && p.last_state != "down") {
          to_cancel = p.stream;  // a hung owner: let its watchers know
        }
        p.last_state = state;
        if (to_cancel) {
          to_cancel->cancel();
        }
        if (!p.status_in_flight) {
          p.status_in_flight = true;
          send_status(p);
        }
      }
    }
    run_lock.lock();
    run_cv.wait_for(run_lock, std::chrono::milliseconds{opts.heartbeat_interval_ms},
                    [this] { return !running; });
  }
}

cluster_node::cluster_node(cluster_options opts, actors::runtime& rt)
    : impl_(std::make_unique<impl>(std::move(opts), rt)) {
  auto& o = impl_->opts;
  for (auto& m : o.members) {
    impl_->ids.push_back(m.id);
    if (m.id == o.self) {
      continue;
    }
    auto p = std::make_unique<peer_state>();
    p->addr = m;
    grpc::ChannelArguments args;
    // Reconnect quickly after a peer restarts: heartbeats decide liveness, not gRPC's backoff
    // (which grows to two minutes by default).
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetMaxReceiveMessageSize(static_cast<int>(o.max_message_bytes));
    args.SetMaxSendMessageSize(static_cast<int>(o.max_message_bytes));
    std::shared_ptr<grpc::ChannelCredentials> creds;
    if (o.auth.tls()) {
      // Mutual TLS: the member's certificate must verify against the cluster's CA and name the
      // address it is reached at; ours goes with every connection.
      grpc::SslCredentialsOptions ssl;
      ssl.pem_root_certs = o.auth.ca_pem;
      ssl.pem_private_key = o.auth.key_pem;
      ssl.pem_cert_chain = o.auth.cert_pem;
      creds = grpc::SslCredentials(ssl);
    } else {
      creds = grpc::InsecureChannelCredentials();
    }
    p->channel = grpc::CreateCustomChannel(m.peer, creds, args);
    p->peer_stub = v1::Peer::NewStub(p->channel);
    p->owner_stub = v1::QueryOwner::NewStub(p->channel);
    impl_->peers.emplace(m.id, std::move(p));
  }
}

cluster_node::~cluster_node() {
  stop();
}

void cluster_node::start() {
  std::lock_guard lock{impl_->run_mu};
  if (impl_->running || impl_->stopped) {
    return;
  }
  impl_->running = true;
  impl_->heartbeat = std::thread([this] { impl_->heartbeat_loop(); });
}

void cluster_node::stop() {
  {
    std::lock_guard lock{impl_->run_mu};
    if (impl_->stopped) {
      return;
    }
    impl_->stopped = true;
    impl_->running = false;
  }
  {
    std::lock_guard lock{impl_->calls_mu};
    impl_->halted = true;
  }
  impl_->run_cv.notify_all();
  if (impl_->heartbeat.joinable()) {
    impl_->heartbeat.join();
  }
  for (auto& [id, p] : impl_->peers) {
    std::lock_guard lock{p->mu};
    p->watches.clear();
    if (p->stream) {
      p->stream->cancel();
    }
  }
  std::unique_lock lock{impl_->calls_mu};
  impl_->calls_cv.wait(lock, [this] { return impl_->calls == 0; });
}

void cluster_node::set_draining() {
  impl_->draining = true;
}

bool cluster_node::draining() const {
  return impl_->draining;
}

const cluster_options& cluster_node::options() const {
  return impl_->opts;
}

std::vector<member_view> cluster_node::view() const {
  std::vector<member_view> out;
  auto now = clock_type::now();
  for (auto& m : impl_->opts.members) {
    if (m.id == impl_->opts.self) {
      out.push_back({m.id, "up"});
      continue;
    }
    auto& p = *impl_->peers.at(m.id);
    std::lock_guard lock{p.mu};
    out.push_back({m.id, impl_->state_of(p, now)});
  }
  return out;
}

void cluster_node::handle_control(actors::control_request req, std::function<void(unsigned)> done) {
  actors::control_handler h;
  {
    std::lock_guard lock{impl_->control_mu};
    h = impl_->control;
  }
  if (!h) {
    done(404);
    return;
  }
  h(std::move(req), std::move(done));
}

const std::string& cluster_node::self_id() const {
  return impl_->opts.self;
}

std::vector<std::string> cluster_node::members() const {
  std::vector<std::string> out;
  for (const auto& m : impl_->opts.members) {
    out.push_back(m.id);
  }
  return out;
}

bool cluster_node::member_up(const std::string& id) const {
  if (id == impl_->opts.self) {
    return true;
  }
  auto* p = impl_->peer(id);
  if (!p) {
    return false;
  }
  std::lock_guard lock{p->mu};
  return impl_->state_of(*p, clock_type::now()) == "up";
}

void cluster_node::space_exists(const std::string& space, std::function<void(bool)> done) {
  struct gather {
    std::mutex mu;
    std::size_t left = 0;
    bool answered = false;
    std::function<void(bool)> done;
  };
  auto g = std::make_shared<gather>();
  g->done = std::move(done);
  std::vector<peer_state*> asked;
  if (!impl_->halted) {
    for (auto& [id, p] : impl_->peers) {
      if (!impl_->peer_down(*p)) {
        asked.push_back(p.get());
      }
    }
  }
  if (asked.empty()) {
    g->done(false);
    return;
  }
  g->left = asked.size();
  // The first yes answers; otherwise the last answer (or its absence) says no.
  auto take = [g](bool yes) {
    std::function<void(bool)> fire;
    bool result = false;
    {
      std::lock_guard lock{g->mu};
      --g->left;
      if (!g->answered && (yes || g->left == 0)) {
        g->answered = true;
        fire = std::move(g->done);
        result = yes;
      }
    }
    if (fire) {
      fire(result);
    }
  };
  for (auto* p : asked) {
    v1::SpaceRequest req;
    req.set_space(space);
    bool started = impl_->unary<v1::SpaceRequest, v1::SpaceReply>(
        std::move(req), impl_->opts.forward_timeout_ms,
        [p](auto* ctx, auto* rq, auto* rp, auto cb) {
          p->peer_stub->async()->SpaceExists(ctx, rq, rp, std::move(cb));
        },
        [take](const grpc::Status& st, v1::SpaceReply& reply) { take(st.ok() && reply.exists()); });
    if (!started) {
      take(false);
    }
  }
}

bool cluster_node::is_member(const std::string& id) const {
  return std::find(impl_->ids.begin(), impl_->ids.end(), id) != impl_->ids.end();
}

std::optional<std::string> cluster_node::remote_owner(const store::unit_key& unit) const {
  const auto& owner =
      impl_->ids[core::rendezvous_owner(impl_->ids, core::unit_name(unit.space, unit.object))];
  if (owner == impl_->opts.self) {
    return std::nullopt;
  }
  return owner;
}

namespace {

v1::WriteKind to_proto(actors::write_kind k) {
  switch (k) {
    case actors::write_kind::put_object:
      return v1::PUT_OBJECT;
    case actors::write_kind::delete_object:
      return v1::DELETE_OBJECT;
    case actors::write_kind::put_record:
      return v1::PUT_RECORD;
    case actors::write_kind::patch_record:
      return v1::PATCH_RECORD;
    case actors::write_kind::delete_record:
      return v1::DELETE_RECORD;
    case actors::write_kind::batch:
      return v1::BATCH;
    case actors::write_kind::delete_object_document:
      return v1::DELETE_OBJECT_DOCUMENT;
    case actors::write_kind::json_patch_record:
      return v1::JSON_PATCH_RECORD;
    case actors::write_kind::json_patch_object:
      return v1::JSON_PATCH_OBJECT;
    case actors::write_kind::refresh_records:
      return v1::REFRESH_RECORDS;
  }
  return v1::PUT_RECORD;
}

}  // namespace

void cluster_node::forward_write(const std::string& node, actors::write_command cmd,
                                 actors::write_callback done) {
  auto* p = impl_->peer(node);
  if (!p || impl_->halted || impl_->peer_down(*p)) {
    done(owner_down(node));
    return;
  }
  v1::ApplyRequest req;
  req.set_kind(to_proto(cmd.kind));
  req.set_space(std::move(cmd.space));
  req.set_object_id(std::move(cmd.object));
  req.set_dataset(std::move(cmd.dataset));
  req.set_id(std::move(cmd.id));
  if (!cmd.body.is_null()) {
    req.set_body_json(boost::json::serialize(cmd.body));
  }
  // `done` is shared with the refusal path below: the call may not start (this node stops).
  auto answer = std::make_shared<actors::write_callback>(std::move(done));
  bool started = impl_->unary<v1::ApplyRequest, v1::ApplyReply>(
      std::move(req), impl_->opts.forward_timeout_ms,
      [p](auto* ctx, auto* rq, auto* rp, auto cb) {
        p->peer_stub->async()->Apply(ctx, rq, rp, std::move(cb));
      },
      [answer, node](const grpc::Status& st, v1::ApplyReply& reply) {
        if (st.ok()) {
          (*answer)(actors::write_outcome{reply.version_id()});
        } else {
          (*answer)(from_status(st, node));
        }
      });
  if (!started) {
    (*answer)(owner_down(node));
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

void cluster_node::forward_control(const std::string& node, actors::control_request req,
                                   std::function<void(unsigned)> done) {
  auto* p = impl_->peer(node);
  if (!p || impl_->halted || impl_->peer_down(*p)) {
    done(404);  // the holder is down, and its stream with it
    return;
  }
  v1::ControlRequest out;
  out.set_subscribe(req.subscribe);
  out.set_body(std::move(req.body));
  out.set_remote_address(std::move(req.remote_address));
  out.set_principal(std::move(req.principal));
  auto answer = std::make_shared<std::function<void(unsigned)>>(std::move(done));
  bool started = impl_->unary<v1::ControlRequest, v1::ControlReply>(
      std::move(out), impl_->opts.forward_timeout_ms,
      [p](auto* ctx, auto* rq, auto* rp, auto cb) {
        p->peer_stub->async()->Control(ctx, rq, rp, std::move(cb));
      },
      [answer](const grpc::Status& st, v1::ControlReply& reply) {
        // The holder was up a moment ago: a failed call is worth a retry (503), not "your
        // stream is gone" (404); that answer is for a holder known to be down.
        (*answer)(st.ok() ? reply.status() : 503u);
      });
  if (!started) {
    (*answer)(503);  // this node is stopping
  }
}

namespace {

core::connection_health from_proto(const v1::ConnectionHealth& c) {
  auto opt = [](std::int64_t v) { return v ? std::optional<std::int64_t>{v} : std::nullopt; };
  core::connection_health out;
  out.connection_id = c.connection_id();
  out.protocol = c.protocol();
  out.established_at_ms = c.established_at_ms();
  out.client = core::client_info{c.remote_ip_address(), c.user_agent(), c.user_id(), c.protocol()};
  for (auto& s : c.subscriptions()) {
    out.subscriptions.push_back(core::subscription_health{
        s.subscription_id(), s.query_identifier(), s.read_model_type(), s.connected_at_ms(),
        opt(s.last_ping_sent_at_ms()), opt(s.last_pong_received_at_ms()),
        opt(s.last_data_served_at_ms())});
  }
  return out;
}

}  // namespace

void cluster_node::remote_connections(
    const core::health_scope& scope,
    std::function<void(std::vector<core::connection_health>)> done) {
  struct gather {
    std::mutex mu;
    std::size_t left = 0;
    std::vector<core::connection_health> found;
    std::function<void(std::vector<core::connection_health>)> done;
  };
  auto g = std::make_shared<gather>();
  g->done = std::move(done);
  std::vector<peer_state*> asked;
  if (!impl_->halted) {
    for (auto& [id, p] : impl_->peers) {
      if (!impl_->peer_down(*p)) {
        asked.push_back(p.get());
      }
    }
  }
  if (asked.empty()) {
    g->done({});
    return;
  }
  g->left = asked.size();
  // One member's answer (or its absence: `reply` null); the last one hands the sample over.
  auto take = [g](const v1::ConnectionsReply* reply) {
    bool last = false;
    {
      std::lock_guard lock{g->mu};
      if (reply) {
        for (auto& conn : reply->connections()) {
          g->found.push_back(from_proto(conn));
        }
      }
      last = --g->left == 0;
    }
    if (last) {
      g->done(std::move(g->found));
    }
  };
  // A member that does not answer within a heartbeat or so is left out of this sample only.
  auto deadline = std::max<std::int64_t>(200, 2 * impl_->opts.heartbeat_interval_ms);
  for (auto* p : asked) {
    v1::ConnectionsRequest req;
    req.set_tenant(scope.tenant);
    req.set_remote_address(scope.remote_address);
    req.set_subject(scope.subject);
    bool started = impl_->unary<v1::ConnectionsRequest, v1::ConnectionsReply>(
        std::move(req), deadline,
        [p](auto* ctx, auto* rq, auto* rp, auto cb) {
          p->peer_stub->async()->Connections(ctx, rq, rp, std::move(cb));
        },
        [take](const grpc::Status& st, v1::ConnectionsReply& reply) {
          take(st.ok() ? &reply : nullptr);
        });
    if (!started) {
      take(nullptr);
    }
  }
}

void cluster_node::set_local_control(actors::control_handler h) {
  std::lock_guard lock{impl_->control_mu};
  impl_->control = std::move(h);
}

bool cluster_node::ready() const {
  std::size_t up = 0;
  for (auto& v : view()) {
    up += v.state == "up" ? 1 : 0;
  }
  return up * 2 > impl_->opts.members.size();
}

std::pair<unsigned, std::string> cluster_node::health() const {
  namespace json = boost::json;
  auto views = view();
  json::array members;
  bool healthy = !impl_->draining;
  bool agree = true;
  auto now = clock_type::now();
  auto stats = impl_->rt.stats();
  for (auto& m : impl_->opts.members) {
    json::object o;
    o["id"] = m.id;
    o["peer"] = m.peer;
    o["http"] = m.http;
    json::object view;
    if (m.id == impl_->opts.self) {
      o["state"] = impl_->draining ? "draining" : "up";
      o["self"] = true;
      o["version"] = impl_->opts.version;
      o["units"] = stats.units > stats.remote_units ? stats.units - stats.remote_units : 0;
      o["connections"] = stats.hub_connections;
      o["subscriptions"] = stats.subscriptions;
      o["upstreams"] = stats.upstreams;
      o["replicas"] = stats.replicas;
      o["heldRowBytes"] = stats.held_row_bytes;
      o["lastSeenMs"] = 0;
      for (auto& v : views) {
        view[v.id] = v.state;
      }
    } else {
      auto& p = *impl_->peers.at(m.id);
      std::lock_guard lock{p.mu};
      auto state = impl_->state_of(p, now);
      bool reported = p.last_ok.has_value();
      o["state"] = state == "up" && p.last_status.draining() ? "draining" : state;
      o["self"] = false;
      healthy = healthy && state == "up" && !p.last_status.draining();
      if (reported) {
        // Figures are from its last heartbeat answer; lastSeenMs says how old that is.
        const auto& s = p.last_status;
        o["version"] = s.version();
        o["units"] = s.units();
        o["connections"] = s.connections();
        o["subscriptions"] = s.subscriptions();
        o["upstreams"] = s.upstreams();
        o["replicas"] = s.replicas();
        o["heldRowBytes"] = s.held_row_bytes();
        o["lastSeenMs"] =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - *p.last_ok).count();
        for (auto& v : s.view()) {
          view[v.id()] = v.state();
        }
      } else {
        for (auto* k : {"version", "units", "connections", "subscriptions", "upstreams", "replicas",
                        "heldRowBytes", "lastSeenMs"}) {
          o[k] = nullptr;
        }
      }
      if (state == "up") {
        for (auto& v : views) {
          auto* theirs = view.if_contains(v.id);
          agree = agree && theirs && theirs->is_string() && theirs->as_string() == v.state;
        }
      }
    }
    o["view"] = std::move(view);
    members.push_back(std::move(o));
  }
  json::object doc;
  doc["status"] = healthy ? "healthy" : "degraded";
  doc["self"] = impl_->opts.self;
  doc["store"] = impl_->rt.store_backend();
  doc["changeCapture"] = actors::capture_health(impl_->rt.store_capture());
  doc["viewsAgree"] = agree;
  doc["members"] = std::move(members);
  return {healthy ? 200u : 503u, json::serialize(doc)};
}

}  // namespace weir::cluster

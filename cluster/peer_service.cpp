// The owner side of the cluster: Status answers heartbeats with this node's figures and view;
// Apply runs a forwarded write on a unit this node owns and answers once it is durable;
// Control hands a forwarded SSE control POST to the gateway; Watch serves one gateway's
// stream of watches, each a replica subscription on a local query actor.
//
// Backpressure on Watch: events queue per stream up to maxStreamQueueBytes. A change that would
// go over the bound is dropped and its watch marked; once the queue drained below half, each
// marked watch is sent a fresh snapshot instead (its gateway starts over from it), so a slow
// gateway costs the owner a bounded queue and a re-read, never unbounded memory.
#include "cluster/peer_service.hpp"

#include <atomic>
#include <deque>
#include <map>
#include <mutex>

#include <grpcpp/grpcpp.h>
#include <openssl/crypto.h>
#include <boost/json/parse.hpp>

#include "actors/query_catalog.hpp"
#include "actors/runtime.hpp"
#include "cluster/cluster_node.hpp"
#include "cluster/grpc_errors.hpp"
#include "cluster/watch_codec.hpp"
#include "core/document_check.hpp"
#include "core/idempotency_key.hpp"
#include "core/query_definition.hpp"
#include "store/durable_store.hpp"
#include "weir/v1/peer.grpc.pb.h"
#include "weir/v1/query_owner.grpc.pb.h"

namespace weir::cluster {
namespace {

actors::write_kind from_proto(v1::WriteKind k) {
  switch (k) {
    case v1::PUT_OBJECT:
      return actors::write_kind::put_object;
    case v1::DELETE_OBJECT:
      return actors::write_kind::delete_object;
    case v1::PUT_RECORD:
      return actors::write_kind::put_record;
    case v1::PATCH_RECORD:
      return actors::write_kind::patch_record;
    case v1::DELETE_RECORD:
      return actors::write_kind::delete_record;
    case v1::BATCH:
      return actors::write_kind::batch;
    case v1::DELETE_OBJECT_DOCUMENT:
      return actors::write_kind::delete_object_document;
    case v1::JSON_PATCH_RECORD:
      return actors::write_kind::json_patch_record;
    case v1::JSON_PATCH_OBJECT:
      return actors::write_kind::json_patch_object;
    case v1::REFRESH_RECORDS:
      return actors::write_kind::refresh_records;
    default:
      return actors::write_kind::put_record;
  }
}

/// The unit a write lands on first (what its forwarder decided by).
store::unit_key first_unit(const actors::write_command& c) {
  if (actors::targets_objects_unit(c.kind)) {
    return {c.space, ""};
  }
  return {c.space, c.object};
}

/// True when the caller presented the cluster's peer token (or none is configured: then mutual
/// TLS, enforced by the server's credentials, is what admits members).
bool is_member(const grpc::CallbackServerContext* ctx, const std::string& token) {
  if (token.empty()) {
    return true;
  }
  const auto& md = ctx->client_metadata();
  auto it = md.find(peer_token_header);
  if (it == md.end() || it->second.size() != token.size()) {
    return false;
  }
  return CRYPTO_memcmp(it->second.data(), token.data(), token.size()) == 0;
}

const grpc::Status& not_a_member() {
  static const grpc::Status st{grpc::StatusCode::UNAUTHENTICATED,
                               "this port serves cluster members only: present the cluster's "
                               "peer token (cluster.token) or its TLS certificate"};
  return st;
}

/// A unary call from something that is not a member: refused, and nothing else happens.
grpc::ServerUnaryReactor* refuse(grpc::CallbackServerContext* ctx) {
  auto* r = ctx->DefaultReactor();
  r->Finish(not_a_member());
  return r;
}

/// A Watch stream opened by something that is not a member.
class refused_watch final : public grpc::ServerBidiReactor<v1::WatchRequest, v1::WatchEvent> {
 public:
  refused_watch() { Finish(not_a_member()); }
  void OnDone() override { delete this; }
};

class peer_service final : public v1::Peer::CallbackService {
 public:
  peer_service(cluster_node& node, actors::runtime& rt) : node_(node), rt_(rt) {}

  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* ctx, const v1::StatusRequest*,
                                   v1::StatusReply* reply) override {
    if (!is_member(ctx, node_.options().auth.token)) {
      return refuse(ctx);
    }
    auto s = rt_.stats();
    reply->set_id(node_.self_id());
    reply->set_version(node_.options().version);
    reply->set_units(s.units > s.remote_units ? s.units - s.remote_units : 0);
    reply->set_connections(s.hub_connections);
    reply->set_subscriptions(s.subscriptions);
    reply->set_upstreams(s.upstreams);
    reply->set_replicas(s.replicas);
    reply->set_held_row_bytes(s.held_row_bytes);
    reply->set_query_keys(s.query_keys);
    auto totals = node_.local_totals();
    reply->set_writes_total(totals.writes);
    reply->set_frames_total(totals.frames);
    reply->set_draining(node_.draining());
    for (auto& v : node_.view()) {
      auto* m = reply->add_view();
      m->set_id(v.id);
      m->set_state(v.state);
    }
    auto* r = ctx->DefaultReactor();
    r->Finish(grpc::Status::OK);
    return r;
  }

  grpc::ServerUnaryReactor* Apply(grpc::CallbackServerContext* ctx, const v1::ApplyRequest* req,
                                  v1::ApplyReply* reply) override {
    if (!is_member(ctx, node_.options().auth.token)) {
      return refuse(ctx);
    }
    auto* r = ctx->DefaultReactor();
    actors::write_command cmd;
    cmd.kind = from_proto(req->kind());
    cmd.space = req->space();
    cmd.object = req->object_id();
    cmd.dataset = req->dataset();
    cmd.id = req->id();
    if (!req->idempotency_key().empty()) {
      if (auto ok = core::check_idempotency_key(req->idempotency_key()); !ok) {
        r->Finish(to_status(ok.error()));
        return r;
      }
      cmd.idempotency_key = req->idempotency_key();
    }
    if (!req->body_json().empty()) {
      // As deep as the member that forwarded it parsed it; runtime::submit checks it again.
      auto body = core::parse_json(req->body_json());
      if (!body) {
        r->Finish(to_status(std::move(body).error()));
        return r;
      }
      cmd.body = std::move(body.value());
    }
    auto finish = [r, reply](core::result<actors::write_outcome> res) {
      if (res) {
        reply->set_version_id(res->version_id);
        reply->set_replayed(res->replayed);
        r->Finish(grpc::Status::OK);
      } else {
        r->Finish(to_status(res.error()));
      }
    };
    if (cmd.kind == actors::write_kind::refresh_records) {
      // Change capture chose this node as the unit's owner (by the owners in force when the
      // change committed): refreshed here if held here, never forwarded.
      rt_.refresh_held(std::move(cmd), std::move(finish));
      return r;
    }
    // Forwarded once only: a node that does not own the unit says so rather than forwarding
    // again (two members with different views of the owners would otherwise bounce it around).
    if (auto owner = node_.remote_owner(first_unit(cmd))) {
      r->Finish(to_status(core::make_error(
          "cluster.not_owner", "node '" + node_.self_id() + "' does not own this unit ('" + *owner +
                                   "' does): the members' views of the owners differ; retry")));
      return r;
    }
    rt_.submit(std::move(cmd), std::move(finish));
    return r;
  }

  grpc::ServerUnaryReactor* Connections(grpc::CallbackServerContext* ctx,
                                        const v1::ConnectionsRequest* req,
                                        v1::ConnectionsReply* reply) override {
    if (!is_member(ctx, node_.options().auth.token)) {
      return refuse(ctx);
    }
    auto local = rt_.local_connections(
        core::health_scope{req->tenant(), req->remote_address(), req->subject()});
    for (auto& c : local) {
      auto* out = reply->add_connections();
      out->set_connection_id(c.connection_id);
      out->set_protocol(c.protocol);
      out->set_established_at_ms(c.established_at_ms);
      out->set_remote_ip_address(c.client.remote_ip_address);
      out->set_user_agent(c.client.user_agent);
      out->set_user_id(c.client.user_id);
      for (auto& sub : c.subscriptions) {
        auto* o = out->add_subscriptions();
        o->set_subscription_id(sub.subscription_id);
        o->set_query_identifier(sub.query_identifier);
        o->set_read_model_type(sub.read_model_type);
        o->set_connected_at_ms(sub.connected_at_ms);
        o->set_last_ping_sent_at_ms(sub.last_ping_sent_at_ms.value_or(0));
        o->set_last_pong_received_at_ms(sub.last_pong_received_at_ms.value_or(0));
        o->set_last_data_served_at_ms(sub.last_data_served_at_ms.value_or(0));
      }
    }
    auto* r = ctx->DefaultReactor();
    r->Finish(grpc::Status::OK);
    return r;
  }

  grpc::ServerUnaryReactor* SpaceExists(grpc::CallbackServerContext* ctx,
                                        const v1::SpaceRequest* req,
                                        v1::SpaceReply* reply) override {
    if (!is_member(ctx, node_.options().auth.token)) {
      return refuse(ctx);
    }
    reply->set_exists(rt_.has_local_space(req->space()));
    auto* r = ctx->DefaultReactor();
    r->Finish(grpc::Status::OK);
    return r;
  }

  grpc::ServerUnaryReactor* Control(grpc::CallbackServerContext* ctx, const v1::ControlRequest* req,
                                    v1::ControlReply* reply) override {
    if (!is_member(ctx, node_.options().auth.token)) {
      return refuse(ctx);
    }
    auto* r = ctx->DefaultReactor();
    auto who = core::principal_from_json(req->principal());
    if (!who) {
      reply->set_status(404);  // an unreadable caller owns nothing here
      r->Finish(grpc::Status::OK);
      return r;
    }
    actors::control_request c{req->subscribe(), req->body(), req->remote_address(),
                              req->principal(),
                              std::make_shared<const core::principal>(std::move(*who))};
    node_.handle_control(std::move(c), [r, reply](unsigned status) {
      reply->set_status(status);
      r->Finish(grpc::Status::OK);
    });
    return r;
  }

 private:
  cluster_node& node_;
  actors::runtime& rt_;
};

class replica;

/// One Watch stream's outbound side, shared by the reactor and the replicas writing into it
/// (from query actor threads). The reactor pointer goes null when gRPC is done with it.
struct stream_out {
  struct queued {
    v1::WatchEvent ev;
    std::size_t size = 0;
    bool change = false;
  };

  std::mutex mu;
  grpc::ServerBidiReactor<v1::WatchRequest, v1::WatchEvent>* reactor = nullptr;
  std::deque<queued> queue;
  /// Bytes of queued changes: what maxStreamQueueBytes bounds. Snapshots and errors are always
  /// queued (at most one snapshot per watch is pending), so a result near the bound cannot
  /// starve every other watch's changes into endless resyncs.
  std::size_t change_bytes = 0;
  std::size_t max_bytes = 0;
  std::size_t max_message = 0;  ///< the largest event a gateway accepts
  bool writing = false;
  bool finishing = false;
  bool finished = false;
  std::vector<std::weak_ptr<replica>> behind;  // watches whose changes were dropped
  actors::runtime* rt = nullptr;

  /// Queues a snapshot or an error.
  void push_always(v1::WatchEvent ev) {
    std::lock_guard lock{mu};
    enqueue_locked(std::move(ev), false);
  }

  /// Queues a change of `who`; over the bound it is refused and `who` is marked behind under
  /// the same lock, so the drain that follows is sure to resync it.
  void push_change(v1::WatchEvent ev, const std::shared_ptr<replica>& who);

  void finish() {
    std::lock_guard lock{mu};
    finishing = true;
    finish_if_idle_locked();
  }

  void write_done(bool ok);

 private:
  void enqueue_locked(v1::WatchEvent ev, bool change) {
    if (!reactor || finishing) {
      return;  // the stream is ending: nothing to keep
    }
    auto size = ev.ByteSizeLong();
    queue.push_back(queued{std::move(ev), size, change});
    if (change) {
      change_bytes += size;
    }
    if (!writing) {
      writing = true;
      reactor->StartWrite(&queue.front().ev);
    }
  }

  void finish_if_idle_locked() {
    if (finishing && !writing && !finished && reactor) {
      finished = true;
      reactor->Finish(grpc::Status::OK);
    }
  }
};

/// A replica subscription on a local query actor for one watch of the stream.
class replica final : public actors::replica_sink {
 public:
  replica(std::shared_ptr<stream_out> out, std::uint64_t watch_id)
      : out_(std::move(out)), watch_id_(watch_id) {}

  void set_handle(actors::replica_handle h) {
    std::lock_guard lock{mu_};
    handle_ = std::move(h);
  }
  std::optional<actors::replica_handle> handle() {
    std::lock_guard lock{mu_};
    return handle_;
  }

  void snapshot(const actors::view_snapshot& snap) override {
    if (failed_.load()) {
      return;
    }
    v1::WatchEvent ev;
    ev.set_watch_id(watch_id_);
    ev.set_seq(snap.seq);
    to_proto(snap, ev.mutable_snapshot());
    if (auto size = ev.ByteSizeLong(); size > out_->max_message) {
      // One oversized message would end the stream that carries every watch of the gateway:
      // end this watch alone instead (its subscribers get an Error).
      failed_.store(true);
      v1::WatchEvent err;
      err.set_watch_id(watch_id_);
      err.set_error("the query's result (" + std::to_string(size) +
                    " bytes) is larger than a message between nodes may be (" +
                    std::to_string(out_->max_message) + " bytes)");
      out_->push_always(std::move(err));
      return;
    }
    behind_.store(false);
    resync_asked_.store(false);
    out_->push_always(std::move(ev));
  }

  void update(const actors::view_update& u) override {
    if (behind_.load() || failed_.load()) {
      return;  // a snapshot is coming instead, or the watch is over
    }
    v1::WatchEvent ev;
    ev.set_watch_id(watch_id_);
    ev.set_seq(u.seq);
    ev.set_version_id(u.version_id);
    to_proto(u, ev.mutable_update());
    if (auto me = self_.lock()) {
      out_->push_change(std::move(ev), me);
    }
  }

  void refused(const core::error& e) override {
    if (failed_.exchange(true)) {
      return;
    }
    v1::WatchEvent ev;
    ev.set_watch_id(watch_id_);
    ev.set_error(e.message);
    ev.set_error_code(e.code);
    out_->push_always(std::move(ev));
  }

  /// Asks the query actor for the snapshot, once per fall-behind.
  void resync(actors::runtime& rt) {
    if (behind_.load() && !resync_asked_.exchange(true)) {
      if (auto h = handle()) {
        rt.resync_replica(*h);
      }
    }
  }

  std::weak_ptr<replica> self_;
  std::atomic<bool> behind_{false};  // set by stream_out under its lock

 private:
  std::shared_ptr<stream_out> out_;
  std::uint64_t watch_id_;
  std::mutex mu_;
  std::optional<actors::replica_handle> handle_;
  std::atomic<bool> resync_asked_{false};
  std::atomic<bool> failed_{false};
};

void stream_out::push_change(v1::WatchEvent ev, const std::shared_ptr<replica>& who) {
  std::lock_guard lock{mu};
  auto size = ev.ByteSizeLong();
  // No change queued yet takes any change: one write larger than the bound must not leave its
  // watch resyncing forever.
  if (change_bytes > 0 && change_bytes + size > max_bytes) {
    who->behind_.store(true);
    behind.push_back(who);
    return;
  }
  enqueue_locked(std::move(ev), true);
}

void stream_out::write_done(bool ok) {
  std::vector<std::weak_ptr<replica>> resync;
  {
    std::lock_guard lock{mu};
    if (!ok || !reactor) {
      // The stream broke (the gateway went away): nothing queued will be written. Finish now
      // if the read side already asked to, or gRPC waits for this call forever.
      queue.clear();
      change_bytes = 0;
      writing = false;
      finish_if_idle_locked();
      return;
    }
    if (queue.front().change) {
      change_bytes -= queue.front().size;
    }
    queue.pop_front();
    if (!queue.empty()) {
      reactor->StartWrite(&queue.front().ev);
    } else {
      writing = false;
      finish_if_idle_locked();
    }
    if (!behind.empty() && change_bytes <= max_bytes / 2) {
      resync.swap(behind);
    }
  }
  for (auto& w : resync) {
    if (auto r = w.lock()) {
      r->resync(*rt);
    }
  }
}

/// Every live Watch stream's outbound side, so a draining node can end them all.
struct stream_registry {
  std::mutex mu;
  bool draining = false;
  std::vector<std::weak_ptr<stream_out>> streams;

  /// False once the node drains (the new stream is refused).
  bool add(const std::shared_ptr<stream_out>& s) {
    std::lock_guard lock{mu};
    if (draining) {
      return false;
    }
    std::erase_if(streams, [](const auto& w) { return w.expired(); });
    streams.push_back(s);
    return true;
  }

  void end_all() {
    std::vector<std::shared_ptr<stream_out>> live;
    {
      std::lock_guard lock{mu};
      draining = true;
      for (auto& w : streams) {
        if (auto s = w.lock()) {
          live.push_back(std::move(s));
        }
      }
      streams.clear();
    }
    // The gateways see their streams end and wait for this node to come back.
    for (auto& s : live) {
      s->finish();
    }
  }
};

class watch_session final : public grpc::ServerBidiReactor<v1::WatchRequest, v1::WatchEvent> {
 public:
  watch_session(actors::runtime& rt, std::size_t max_bytes, std::size_t max_message,
                stream_registry& registry)
      : rt_(rt) {
    out_ = std::make_shared<stream_out>();
    out_->reactor = this;
    out_->max_bytes = max_bytes;
    out_->max_message = max_message;
    out_->rt = &rt;
    if (!registry.add(out_)) {
      out_->finish();  // draining: no new watches here
      return;
    }
    StartRead(&req_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      close_all();
      out_->finish();
      return;
    }
    handle(req_);
    StartRead(&req_);
  }

  void OnWriteDone(bool ok) override { out_->write_done(ok); }

  void OnDone() override {
    close_all();
    {
      std::lock_guard lock{out_->mu};
      out_->reactor = nullptr;
    }
    delete this;
  }

 private:
  void handle(const v1::WatchRequest& req) {
    auto id = req.watch_id();
    if (req.has_cancel()) {
      if (auto it = watches_.find(id); it != watches_.end()) {
        if (auto h = it->second->handle()) {
          rt_.close_replica(*h);
        }
        watches_.erase(it);
      }
      return;
    }
    if (!req.has_open() || watches_.count(id)) {
      return;
    }
    auto fail = [&](const std::string& why, const std::string& code = {}) {
      v1::WatchEvent ev;
      ev.set_watch_id(id);
      ev.set_error(why);
      ev.set_error_code(code);
      out_->push_always(std::move(ev));
    };
    auto bound = bind_watched(req.open(), rt_.catalog());
    if (!bound) {
      fail(bound.error().message);
      return;
    }
    auto r = std::make_shared<replica>(out_, id);
    r->self_ = r;
    auto h = rt_.open_replica(std::move(bound.value()), r);
    if (!h) {
      fail(h.error().message, h.error().code);  // cluster.not_owner: the gateway asks again
      return;
    }
    r->set_handle(h.value());
    watches_.emplace(id, std::move(r));
  }

  void close_all() {
    for (auto& [id, r] : watches_) {
      if (auto h = r->handle()) {
        rt_.close_replica(*h);
      }
    }
    watches_.clear();
  }

  actors::runtime& rt_;
  std::shared_ptr<stream_out> out_;
  v1::WatchRequest req_;
  std::map<std::uint64_t, std::shared_ptr<replica>> watches_;  // reactor threads only
};

class owner_service final : public v1::QueryOwner::CallbackService {
 public:
  owner_service(actors::runtime& rt, std::size_t max_bytes, std::size_t max_message,
                std::string token)
      : rt_(rt), max_bytes_(max_bytes), max_message_(max_message), token_(std::move(token)) {}

  grpc::ServerBidiReactor<v1::WatchRequest, v1::WatchEvent>* Watch(
      grpc::CallbackServerContext* ctx) override {
    if (!is_member(ctx, token_)) {
      return new refused_watch;
    }
    return new watch_session(rt_, max_bytes_, max_message_, registry_);
  }

  void end_all() { registry_.end_all(); }

 private:
  actors::runtime& rt_;
  std::size_t max_bytes_;
  std::size_t max_message_;
  std::string token_;
  stream_registry registry_;
};

}  // namespace

peer_services make_peer_services(cluster_node& node, actors::runtime& rt) {
  peer_services out;
  auto owner =
      std::make_unique<owner_service>(rt, node.options().max_stream_queue_bytes,
                                      node.options().max_message_bytes, node.options().auth.token);
  auto* o = owner.get();
  out.end_watch_streams = [o] { o->end_all(); };
  out.services.push_back(std::make_unique<peer_service>(node, rt));
  out.services.push_back(std::move(owner));
  return out;
}

}  // namespace weir::cluster

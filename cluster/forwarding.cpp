// cluster_node's forwarding: what this node sends other members on a client's behalf — writes
// to their owners (Peer.Apply), SSE control POSTs to the member holding the stream
// (Peer.Control), space lookups (Peer.SpaceExists) and health-feed samples (Peer.Connections).
#include <algorithm>

#include <boost/json/serialize.hpp>

#include "cluster/cluster_node_impl.hpp"
#include "cluster/grpc_errors.hpp"

namespace weir::cluster {

void cluster_node::space_exists(const std::string& space, std::function<void(bool)> done) {
  struct gather {
    std::mutex mu;
    std::size_t left = 0;
    bool answered = false;
    std::function<void(bool)> done;
  };
  auto g = std::make_shared<gather>();
  g->done = std::move(done);
  auto asked = impl_->peers_not_down();
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
  req.set_idempotency_key(std::move(cmd.idempotency_key));
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
          (*answer)(actors::write_outcome{reply.version_id(), reply.replayed()});
        } else {
          (*answer)(from_status(st, node));
        }
      });
  if (!started) {
    (*answer)(owner_down(node));
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
  auto asked = impl_->peers_not_down();
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

}  // namespace weir::cluster

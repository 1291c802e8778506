// The Data gRPC service: the HTTP write API's operations for backends. Each call becomes the
// same write_command the HTTP API builds, so validation, durability and errors are identical;
// a failure carries the Weir error JSON in the status' error_details.
#include <chrono>

#include <grpcpp/grpcpp.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "actors/runtime.hpp"
#include "cluster/grpc_errors.hpp"
#include "cluster/grpc_server.hpp"
#include "cluster/peer_service.hpp"
#include "weir/v1/data.grpc.pb.h"

namespace weir::cluster {
namespace {

core::result<boost::json::value> parse_json(const std::string& text) {
  boost::system::error_code ec;
  auto v = boost::json::parse(text, ec);
  if (ec) {
    return core::make_error("request.bad_json", "the document is not valid JSON: " + ec.message());
  }
  return v;
}

class data_service final : public weir::v1::Data::CallbackService {
 public:
  explicit data_service(actors::runtime& rt) : rt_(rt) {}

  grpc::ServerUnaryReactor* PutObject(grpc::CallbackServerContext* ctx,
                                      const weir::v1::PutObjectRequest* req,
                                      weir::v1::WriteReply* reply) override {
    actors::write_command cmd;
    cmd.kind = actors::write_kind::put_object;
    cmd.space = req->space();
    cmd.object = req->object_id();
    return run(ctx, std::move(cmd), &req->document_json(), reply);
  }

  grpc::ServerUnaryReactor* DeleteObject(grpc::CallbackServerContext* ctx,
                                         const weir::v1::DeleteObjectRequest* req,
                                         weir::v1::WriteReply* reply) override {
    actors::write_command cmd;
    cmd.kind = actors::write_kind::delete_object;
    cmd.space = req->space();
    cmd.object = req->object_id();
    return run(ctx, std::move(cmd), nullptr, reply);
  }

  grpc::ServerUnaryReactor* PutRecord(grpc::CallbackServerContext* ctx,
                                      const weir::v1::PutRecordRequest* req,
                                      weir::v1::WriteReply* reply) override {
    auto cmd = record_cmd(actors::write_kind::put_record, *req);
    return run(ctx, std::move(cmd), &req->record_json(), reply);
  }

  grpc::ServerUnaryReactor* PatchRecord(grpc::CallbackServerContext* ctx,
                                        const weir::v1::PatchRecordRequest* req,
                                        weir::v1::WriteReply* reply) override {
    auto cmd = record_cmd(actors::write_kind::patch_record, *req);
    return run(ctx, std::move(cmd), &req->update_json(), reply);
  }

  grpc::ServerUnaryReactor* DeleteRecord(grpc::CallbackServerContext* ctx,
                                         const weir::v1::DeleteRecordRequest* req,
                                         weir::v1::WriteReply* reply) override {
    auto cmd = record_cmd(actors::write_kind::delete_record, *req);
    return run(ctx, std::move(cmd), nullptr, reply);
  }

  grpc::ServerUnaryReactor* Batch(grpc::CallbackServerContext* ctx,
                                  const weir::v1::BatchRequest* req,
                                  weir::v1::WriteReply* reply) override {
    actors::write_command cmd;
    cmd.kind = actors::write_kind::batch;
    cmd.space = req->space();
    cmd.object = req->object_id();
    cmd.dataset = req->dataset();
    boost::json::array upserts;
    for (const auto& u : req->upsert_json()) {
      auto v = parse_json(u);
      if (!v) {
        auto* r = ctx->DefaultReactor();
        r->Finish(to_status(v.error()));
        return r;
      }
      upserts.push_back(std::move(v.value()));
    }
    boost::json::array deletes;
    for (const auto& d : req->delete_ids()) {
      deletes.emplace_back(d);
    }
    boost::json::object body;
    if (!upserts.empty() || req->delete_ids().empty()) {
      body["upsert"] = std::move(upserts);
    }
    if (!deletes.empty()) {
      body["delete"] = std::move(deletes);
    }
    cmd.body = std::move(body);
    return run(ctx, std::move(cmd), nullptr, reply);
  }

 private:
  template <class Req>
  static actors::write_command record_cmd(actors::write_kind kind, const Req& req) {
    actors::write_command cmd;
    cmd.kind = kind;
    cmd.space = req.space();
    cmd.object = req.object_id();
    cmd.dataset = req.dataset();
    cmd.id = req.id();
    return cmd;
  }

  grpc::ServerUnaryReactor* run(grpc::CallbackServerContext* ctx, actors::write_command cmd,
                                const std::string* json, weir::v1::WriteReply* reply) {
    auto* reactor = ctx->DefaultReactor();
    if (json) {
      auto v = parse_json(*json);
      if (!v) {
        reactor->Finish(to_status(v.error()));
        return reactor;
      }
      cmd.body = std::move(v.value());
    }
    rt_.submit(std::move(cmd), [reactor, reply](core::result<actors::write_outcome> r) {
      if (r) {
        reply->set_version_id(r->version_id);
        reactor->Finish(grpc::Status::OK);
      } else {
        reactor->Finish(to_status(r.error()));
      }
    });
    return reactor;
  }

  actors::runtime& rt_;
};

}  // namespace

struct grpc_server::impl {
  grpc_options opts;
  actors::runtime& rt;
  cluster_node* cluster = nullptr;
  peer_services peers;
  std::unique_ptr<data_service> data;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

grpc_server::grpc_server(grpc_options opts, actors::runtime& rt)
    : impl_(std::make_unique<impl>(impl{std::move(opts), rt, nullptr, {}, nullptr, nullptr, 0})) {}

void grpc_server::serve_cluster(cluster_node& node) {
  impl_->cluster = &node;
}

grpc_server::~grpc_server() {
  stop(0);
}

core::result<void> grpc_server::start() {
  impl_->data = std::make_unique<data_service>(impl_->rt);
  grpc::ServerBuilder b;
  // gRPC wants IPv6 literals in brackets ("[::1]:9090").
  auto host = impl_->opts.address.find(':') != std::string::npos ? "[" + impl_->opts.address + "]"
                                                                 : impl_->opts.address;
  auto addr = host + ":" + std::to_string(impl_->opts.port);
  b.AddListeningPort(addr, grpc::InsecureServerCredentials(), &impl_->port);
  // A forwarded write (Peer.Apply) carries a body of up to maxBodyBytes plus its ids.
  auto envelope = impl_->cluster ? std::size_t{64} << 10 : 0;
  b.SetMaxReceiveMessageSize(static_cast<int>(impl_->opts.max_message_bytes + envelope));
  b.RegisterService(impl_->data.get());
  if (impl_->cluster) {
    impl_->peers = make_peer_services(*impl_->cluster, impl_->rt);
    for (auto& s : impl_->peers.services) {
      b.RegisterService(s.get());
    }
  }
  impl_->server = b.BuildAndStart();
  if (!impl_->server || impl_->port == 0) {
    impl_->server.reset();
    return core::make_error("server.bind_failed", "cannot serve gRPC on " + addr);
  }
  return {};
}

std::uint16_t grpc_server::port() const {
  return static_cast<std::uint16_t>(impl_->port);
}

void grpc_server::end_watch_streams() {
  if (impl_->peers.end_watch_streams) {
    impl_->peers.end_watch_streams();
  }
}

void grpc_server::stop(std::int64_t timeout_ms) {
  if (impl_->server) {
    impl_->server->Shutdown(std::chrono::system_clock::now() +
                            std::chrono::milliseconds{timeout_ms});
    impl_->server->Wait();
    impl_->server.reset();
  }
}

}  // namespace weir::cluster

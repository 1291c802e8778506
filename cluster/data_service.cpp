// The Data gRPC service: the HTTP write API's operations for backends. Each call becomes the
// same write_command the HTTP API builds, so validation, durability and errors are identical;
// a failure carries the Weir error JSON in the status' error_details.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string_view>

#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>
#include <boost/json/serialize.hpp>

#include "actors/runtime.hpp"
#include "cluster/cluster_node.hpp"
#include "cluster/grpc_errors.hpp"
#include "cluster/grpc_server.hpp"
#include "cluster/peer_service.hpp"
#include "core/document_check.hpp"
#include "core/idempotency_key.hpp"
#include "log/log.hpp"
#include "weir/v1/data.grpc.pb.h"

namespace weir::cluster {
namespace {

core::result<boost::json::value> parse_json(const std::string& text) {
  return core::parse_json(text);  // as deep as the HTTP write API; runtime::submit checks the rest
}

class data_service final : public weir::v1::Data::CallbackService {
 public:
  data_service(actors::runtime& rt, const grpc_options& opts) : rt_(rt), opts_(opts) {}

  grpc::ServerUnaryReactor* PutObject(grpc::CallbackServerContext* ctx,
                                      const weir::v1::PutObjectRequest* req,
                                      weir::v1::WriteReply* reply) override {
    actors::write_command cmd;
    cmd.kind = actors::write_kind::put_object;
    cmd.space = req->space();
    cmd.object = req->object_id();
    cmd.idempotency_key = req->idempotency_key();
    return run(ctx, std::move(cmd), &req->document_json(), reply);
  }

  grpc::ServerUnaryReactor* DeleteObject(grpc::CallbackServerContext* ctx,
                                         const weir::v1::DeleteObjectRequest* req,
                                         weir::v1::WriteReply* reply) override {
    actors::write_command cmd;
    cmd.kind = actors::write_kind::delete_object;
    cmd.space = req->space();
    cmd.object = req->object_id();
    cmd.idempotency_key = req->idempotency_key();
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
    cmd.idempotency_key = req->idempotency_key();
    if (auto ok = authorized(ctx, cmd); !ok) {  // who asks, before anything of the body
      auto* r = ctx->DefaultReactor();
      r->Finish(to_status(ok.error()));
      return r;
    }
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
    cmd.idempotency_key = req.idempotency_key();
    return cmd;
  }

  /// The caller may write to the command's space: its `authorization: Bearer` metadata verifies
  /// and the space's write rule admits it (the HTTP write API's rules, the same codes).
  core::result<void> authorized(const grpc::CallbackServerContext* ctx,
                                const actors::write_command& cmd) const {
    core::credential_sources in;
    const auto& md = ctx->client_metadata();
    std::string authorization;
    if (auto it = md.find("authorization"); it != md.end()) {
      authorization.assign(it->second.data(), it->second.size());
      in.authorization = authorization;
    }
    static const core::authenticator off;
    const auto& auth = opts_.auth ? *opts_.auth : off;
    auto who = auth.authenticate(in, std::chrono::duration_cast<std::chrono::seconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count());
    if (!who) {
      return std::move(who).error();
    }
    return core::check_space_access(opts_.spaces, cmd.space, core::space_access::write, **who);
  }

  grpc::ServerUnaryReactor* run(grpc::CallbackServerContext* ctx, actors::write_command cmd,
                                const std::string* json, weir::v1::WriteReply* reply) {
    auto* reactor = ctx->DefaultReactor();
    if (auto ok = authorized(ctx, cmd); !ok) {
      reactor->Finish(to_status(ok.error()));
      return reactor;
    }
    if (!cmd.idempotency_key.empty()) {
      if (auto ok = core::check_idempotency_key(cmd.idempotency_key); !ok) {
        reactor->Finish(to_status(ok.error()));
        return reactor;
      }
    }
    // Node-wide: however many connections a backend opens (each holds up to 256 calls), the
    // writes it has in the actors' mailboxes at once stay bounded.
    if (in_flight_->fetch_add(1) >= opts_.max_data_calls) {
      in_flight_->fetch_sub(1);
      reactor->Finish(
          to_status(core::make_error("server.overloaded",
                                     "this node is running as many Data calls as it takes at once "
                                     "(http.maxDataCallsInFlight); retry")));
      return reactor;
    }
    if (json) {
      auto v = parse_json(*json);
      if (!v) {
        in_flight_->fetch_sub(1);
        reactor->Finish(to_status(v.error()));
        return reactor;
      }
      cmd.body = std::move(v.value());
    }
    rt_.submit(std::move(cmd),
               [reactor, reply, in_flight = in_flight_](core::result<actors::write_outcome> r) {
                 in_flight->fetch_sub(1);
                 if (r) {
                   reply->set_version_id(r->version_id);
                   reply->set_replayed(r->replayed);
                   reactor->Finish(grpc::Status::OK);
                 } else {
                   reactor->Finish(to_status(r.error()));
                 }
               });
    return reactor;
  }

  actors::runtime& rt_;
  const grpc_options& opts_;
  // Shared with the calls' callbacks, which may run after a shutdown began.
  std::shared_ptr<std::atomic<std::size_t>> in_flight_ =
      std::make_shared<std::atomic<std::size_t>>(0);
};

/// "host:port" as gRPC wants it (IPv6 literals in brackets: "[::1]:9090").
std::string listen_address(const std::string& address, std::uint16_t port) {
  auto host = address.find(':') != std::string::npos ? "[" + address + "]" : address;
  return host + ":" + std::to_string(port);
}

/// Why `address`:`port` cannot be bound, as the system says it ("" when it can, or when the
/// address is not an IP literal). gRPC only reports that its listener failed (and logs the
/// reason as a line of its own); a start that fails must say why in its error.
std::string bind_reason(const std::string& address, std::uint16_t port) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    len = sizeof *v4;
  } else if (::inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    len = sizeof *v6;
  } else {
    return {};
  }
  int fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return std::strerror(errno);
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  std::string why;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    why = std::strerror(errno);
  }
  ::close(fd);
  return why;
}

/// gRPC's own log lines go through Weir's structured log (its errors as errors, the rest at
/// debug level), so that a node's output stays one line per event in one format.
void route_grpc_log(gpr_log_func_args* args) {
  std::string_view m{args->message ? args->message : ""};
  if (args->severity == GPR_LOG_SEVERITY_ERROR) {
    log::error("grpc",
               {{"message", m}, {"file", std::string_view{args->file}}, {"line", args->line}});
  } else if (args->severity == GPR_LOG_SEVERITY_INFO) {
    log::debug("grpc", {{"message", m}});
  } else {
    log::debug("grpc", {{"message", m}, {"file", std::string_view{args->file}}});
  }
}

core::error bind_failed(const std::string& what, const std::string& address, std::uint16_t port) {
  auto why = bind_reason(address, port);
  return core::make_error("server.bind_failed", "cannot serve " + what + " on " +
                                                    listen_address(address, port) +
                                                    (why.empty() ? std::string{} : ": " + why));
}

}  // namespace

struct grpc_server::impl {
  grpc_options opts;
  actors::runtime& rt;
  cluster_node* cluster = nullptr;
  peer_services peers;
  std::unique_ptr<data_service> data;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<grpc::Server> peer_server;
  int port = 0;
  int peer_port = 0;
};

grpc_server::grpc_server(grpc_options opts, actors::runtime& rt)
    : impl_(std::make_unique<impl>(
          impl{std::move(opts), rt, nullptr, {}, nullptr, nullptr, nullptr, 0, 0})) {}

void grpc_server::serve_cluster(cluster_node& node) {
  impl_->cluster = &node;
}

grpc_server::~grpc_server() {
  stop(0);
}

namespace {

/// What a gRPC listener does about a peer that vanished or never speaks: an HTTP/2 ping after
/// `keep_alive_ms` with nothing received, the connection closed when the ping is not answered
/// within `keep_alive_ms` (its calls and streams end with it), pings sent whether or not calls are
/// open; and a connection with no call for 5 minutes is closed (a client reconnects at its next
/// call), so one that authenticates nothing cannot hold a descriptor for good.
void bound_connections(grpc::ServerBuilder& b, std::int64_t keep_alive_ms) {
  const int ms = static_cast<int>(std::clamp<std::int64_t>(keep_alive_ms, 100, 3600000));
  b.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, ms);
  b.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, ms);
  b.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  b.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  b.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, 5 * 60 * 1000);
}

}  // namespace

core::result<void> grpc_server::start() {
  auto& o = impl_->opts;
  impl_->data = std::make_unique<data_service>(impl_->rt, o);
  grpc::ServerBuilder b;
  auto addr = listen_address(o.address, o.port);
  b.AddListeningPort(addr, grpc::InsecureServerCredentials(), &impl_->port);
  b.SetMaxReceiveMessageSize(static_cast<int>(o.max_message_bytes));
  // Calls in flight per client connection: each is a write waiting for its owner, so a backend
  // cannot queue an unbounded number of them (beyond it gRPC holds the stream back).
  b.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 256);
  bound_connections(b, 20000);
  b.RegisterService(impl_->data.get());
  static std::once_flag routed;
  std::call_once(routed, [] { gpr_set_log_function(route_grpc_log); });
  impl_->server = b.BuildAndStart();
  if (!impl_->server || impl_->port == 0) {
    impl_->server.reset();
    return bind_failed("gRPC", o.address, o.port);
  }
  if (!impl_->cluster) {
    return {};
  }
  // The members' own listener: nothing a client needs is here, and only members get in.
  const auto& auth = impl_->cluster->options().auth;
  std::shared_ptr<grpc::ServerCredentials> creds;
  if (auth.tls()) {
    grpc::SslServerCredentialsOptions ssl{
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY};
    ssl.pem_root_certs = auth.ca_pem;
    ssl.pem_key_cert_pairs.push_back({auth.key_pem, auth.cert_pem});
    creds = grpc::SslServerCredentials(ssl);
  } else {
    creds = grpc::InsecureServerCredentials();  // the token on every call admits members
  }
  grpc::ServerBuilder pb;
  auto peer_addr = listen_address(o.peer_address, o.peer_port);
  pb.AddListeningPort(peer_addr, creds, &impl_->peer_port);
  // A forwarded write (Peer.Apply) carries a body of up to maxBodyBytes plus its ids.
  pb.SetMaxReceiveMessageSize(static_cast<int>(o.max_message_bytes + (std::size_t{64} << 10)));
  // A member that stops answering here (its host gone, its process hung) is as good as down
  // for this node too: its watches here (and the queries and units they keep) end once a ping
  // of its connection goes unanswered for cluster.downAfterMs.
  bound_connections(pb, impl_->cluster->options().down_after_ms);
  impl_->peers = make_peer_services(*impl_->cluster, impl_->rt);
  for (auto& s : impl_->peers.services) {
    pb.RegisterService(s.get());
  }
  impl_->peer_server = pb.BuildAndStart();
  if (!impl_->peer_server || impl_->peer_port == 0) {
    impl_->peer_server.reset();
    stop(0);
    return bind_failed("the peer gRPC", o.peer_address, o.peer_port);
  }
  return {};
}

std::uint16_t grpc_server::port() const {
  return static_cast<std::uint16_t>(impl_->port);
}

std::uint16_t grpc_server::peer_port() const {
  return static_cast<std::uint16_t>(impl_->peer_port);
}

void grpc_server::end_watch_streams() {
  if (impl_->peers.end_watch_streams) {
    impl_->peers.end_watch_streams();
  }
}

void grpc_server::stop(std::int64_t timeout_ms) {
  auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds{timeout_ms};
  for (auto* server : {&impl_->peer_server, &impl_->server}) {
    if (*server) {
      (*server)->Shutdown(deadline);
      (*server)->Wait();
      server->reset();
    }
  }
}

}  // namespace weir::cluster

// Peer traffic: the member-to-member services listen on their own port and admit members only
// — the cluster's token, or mutual TLS with the cluster's CA. Real processes, real gRPC.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <grpcpp/grpcpp.h>

#include "cluster_support.hpp"
#include "weir/v1/data.grpc.pb.h"
#include "weir/v1/peer.grpc.pb.h"
#include "weir/v1/query_owner.grpc.pb.h"

namespace weir::test {
namespace {

grpc::Status status_call(
    std::uint16_t port, const std::string& token,
    std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials()) {
  auto stub = weir::v1::Peer::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), std::move(creds)));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  if (!token.empty()) {
    ctx.AddMetadata("x-weir-peer-token", token);
  }
  weir::v1::StatusRequest req;
  weir::v1::StatusReply reply;
  return stub->Status(&ctx, req, &reply);
}

TEST(PeerAuth, OnlyMembersGetIn) {
  cluster3 cl;
  const int a = 0, c = 2;
  EXPECT_TRUE(status_call(cl.peer_port(a), cluster3::peer_token).ok());
  EXPECT_EQ(status_call(cl.peer_port(a), "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(status_call(cl.peer_port(a), std::string(42, 'x')).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  // The client-facing gRPC port does not serve the member services at all.
  EXPECT_EQ(status_call(cl.grpc_port(a), cluster3::peer_token).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);

  // A Watch without the token is refused before it reads anything.
  auto owner = weir::v1::QueryOwner::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(cl.peer_port(c)), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  auto stream = owner->Watch(&ctx);
  weir::v1::WatchEvent ev;
  EXPECT_FALSE(stream->Read(&ev));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);

  // A control POST forged straight at the holder's peer port: refused, nothing applied.
  auto peer = weir::v1::Peer::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(cl.peer_port(a)), grpc::InsecureChannelCredentials()));
  grpc::ClientContext cctx;
  weir::v1::ControlRequest creq;
  creq.set_subscribe(true);
  creq.set_body("{}");
  weir::v1::ControlReply creply;
  EXPECT_EQ(peer->Control(&cctx, creq, &creply).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST(PeerAuth, AMemberWithTheWrongTokenIsRefusedByTheOthers) {
  cluster3 cl;
  const int a = 0, c = 2;
  cl.kill(c);
  ASSERT_TRUE(cl.wait_state(a, c, "down", 10s));
  {
    std::ifstream in{cl.config(c)};
    std::stringstream text;
    text << in.rdbuf();
    auto yaml = text.str();
    auto at = yaml.find(cluster3::peer_token);
    ASSERT_NE(at, std::string::npos);
    yaml.replace(at, std::string{cluster3::peer_token}.size(),
                 "an-impostor-token-0123456789abcdef0123456");
    std::ofstream{cl.config(c)} << yaml;
  }
  cl.start(c);
  // It runs, but the others never see it up, and it never sees them.
  EXPECT_FALSE(cl.wait_state(a, c, "up", 3s));
  EXPECT_TRUE(cl.wait_state(c, a, "down", 5s));
}

/// Runs the openssl command line (Debian's), failing the test when it fails.
void openssl(const std::string& args) {
  auto cmd = "openssl " + args + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

std::string read_text(const std::string& path) {
  std::ifstream in{path};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A CA and one certificate it signed for 127.0.0.1 (server and client use), in `dir`.
void make_pki(const std::string& dir, const std::string& name) {
  auto p = dir + "/" + name;
  openssl("req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=" + name +
          "-ca -keyout " + p + "-ca.key -out " + p + "-ca.crt");
  openssl("req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=" + name +
          "-member -keyout " + p + ".key -out " + p + ".csr");
  std::ofstream{p + ".ext"} << "subjectAltName=IP:127.0.0.1\n"
                               "extendedKeyUsage=serverAuth,clientAuth\n";
  openssl("x509 -req -days 2 -in " + p + ".csr -CA " + p + "-ca.crt -CAkey " + p +
          "-ca.key -CAcreateserial -extfile " + p + ".ext -out " + p + ".crt");
}

TEST(PeerAuth, MutualTlsAdmitsTheClustersCertificatesOnly) {
  temp_dir pki;
  make_pki(pki.path(), "weir");
  make_pki(pki.path(), "other");
  auto tls = "  tls:\n    certFile: " + pki.path() + "/weir.crt\n    keyFile: " + pki.path() +
             "/weir.key\n    caFile: " + pki.path() + "/weir-ca.crt\n";
  cluster3 cl{tls, false};  // no token: the certificates alone admit members
  const int a = 0;
  for (int j = 0; j < cluster3::n; ++j) {
    EXPECT_TRUE(cl.wait_state(a, j, "up", 5s)) << cl.id(j);
  }
  grpc::SslCredentialsOptions ours;
  ours.pem_root_certs = read_text(pki.path() + "/weir-ca.crt");
  ours.pem_private_key = read_text(pki.path() + "/weir.key");
  ours.pem_cert_chain = read_text(pki.path() + "/weir.crt");
  EXPECT_TRUE(status_call(cl.peer_port(a), "", grpc::SslCredentials(ours)).ok());
  // No client certificate, or one from another CA: the handshake fails.
  grpc::SslCredentialsOptions anonymous;
  anonymous.pem_root_certs = ours.pem_root_certs;
  EXPECT_FALSE(status_call(cl.peer_port(a), "", grpc::SslCredentials(anonymous)).ok());
  grpc::SslCredentialsOptions stranger = anonymous;
  stranger.pem_private_key = read_text(pki.path() + "/other.key");
  stranger.pem_cert_chain = read_text(pki.path() + "/other.crt");
  EXPECT_FALSE(status_call(cl.peer_port(a), "", grpc::SslCredentials(stranger)).ok());
  // Plaintext is not spoken at all.
  EXPECT_FALSE(status_call(cl.peer_port(a), "").ok());
}

}  // namespace
}  // namespace weir::test

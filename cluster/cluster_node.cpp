// cluster_node: construction (a gRPC channel to every other member), start, stop and drain.
// The rest of the class lives by concept in membership.cpp, watch_client.cpp, forwarding.cpp and
// cluster_health.cpp (see cluster_node_impl.hpp).
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

#include "cluster/cluster_node_impl.hpp"

namespace weir::cluster {

cluster_node::cluster_node(cluster_options opts, actors::runtime& rt)
    : impl_(std::make_unique<impl>(std::move(opts), rt)) {
  auto& o = impl_->opts;
  std::vector<std::string> ids;
  for (auto& m : o.members) {
    ids.push_back(m.id);
    if (m.id == o.self) {
      continue;
    }
    impl_->peers.emplace(m.id, impl_->make_peer(m));
  }
  if (!impl_->elastic()) {
    // Elastic membership starts with no owners: join() records the first.
    impl_->owner_ids = std::make_shared<const std::vector<std::string>>(std::move(ids));
  }
}

std::unique_ptr<peer_state> cluster_node::impl::make_peer(const member_address& m) const {
  const auto& o = opts;
  auto p = std::make_unique<peer_state>();
  p->addr = m;
  p->credit = std::make_shared<watch_credit>(o.max_stream_queue_bytes);
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
  return p;
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
  if (impl_->elastic()) {
    impl_->lease_thread = std::thread([this] { impl_->lease_loop(); });
  }
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
  if (impl_->lease_thread.joinable()) {
    impl_->lease_thread.join();
  }
  if (impl_->elastic()) {
    impl_->opts.leases->leave();  // gone now, not when the lease runs out
  }
  {
    std::shared_lock peers_lock{impl_->peers_mu};
    for (auto& [id, p] : impl_->peers) {
      watch_stream* paused = nullptr;
      std::map<std::uint64_t, watch_entry> watches;  // destroyed after the lock is released:
      {  // a callback may hold the last handle of an actor whose mailbox holds events' holds
        std::lock_guard lock{p->mu};
        watches.swap(p->watches);
        paused = impl_->cancel_stream_locked(*p);
      }
      impl::end_paused_stream(paused);
    }
  }
  std::unique_lock lock{impl_->calls_mu};
  impl_->calls_cv.wait(lock, [this] { return impl_->calls == 0; });
}

void cluster_node::set_draining(std::int64_t wait_ms) {
  impl_->draining = true;
  if (!impl_->elastic() || wait_ms <= 0) {
    return;
  }
  // Two lease rounds from now: the first may have started before the flag was set.
  auto deadline = clock_type::now() + std::chrono::milliseconds{wait_ms};
  std::uint64_t target = 0;
  {
    std::lock_guard lock{impl_->owners_mu};
    target = impl_->rounds + 2;
  }
  {
    std::lock_guard lock{impl_->run_mu};
    impl_->lease_wake = true;
  }
  impl_->run_cv.notify_all();
  std::unique_lock lock{impl_->owners_mu};
  impl_->rounds_cv.wait_until(lock, deadline,
                              [this, target] { return impl_->rounds >= target || impl_->halted; });
  lock.unlock();
  // Then one renewal interval, for the other members' rounds to take its units over.
  auto rest = std::min(deadline - clock_type::now(),
                       std::chrono::duration_cast<clock_type::duration>(
                           std::chrono::milliseconds{impl_->opts.lease_renew_ms + 100}));
  if (rest > clock_type::duration::zero()) {
    std::this_thread::sleep_for(rest);
  }
}

bool cluster_node::draining() const {
  return impl_->draining;
}

const cluster_options& cluster_node::options() const {
  return impl_->opts;
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

void cluster_node::set_local_control(actors::control_handler h) {
  std::lock_guard lock{impl_->control_mu};
  impl_->control = std::move(h);
}

}  // namespace weir::cluster

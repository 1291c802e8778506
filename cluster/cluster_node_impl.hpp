// cluster_node's internals, shared by the files that implement it by concept (internal to
// cluster/: it brings gRPC's headers):
//   cluster_node.cpp    construction (a channel per member), start, stop, drain
//   membership.cpp      heartbeats, member states, rendezvous ownership, readiness
//   leases.cpp          elastic membership: the lease round, new members' channels, owners
//   watch_client.cpp    the gateway side of Watch streams: one per owner, every watch on it
//   forwarding.cpp      writes, SSE control POSTs, space lookups and health-feed samples sent
//                       to other members
//   cluster_health.cpp  /cluster/health
//   member_statuses.cpp the members' figures for the admin page, this node's traffic totals
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "actors/runtime.hpp"
#include "cluster/cluster_node.hpp"
#include "cluster/watch_credit.hpp"
#include "store/postgres_leases.hpp"
#include "weir/v1/peer.grpc.pb.h"
#include "weir/v1/query_owner.grpc.pb.h"

namespace weir::cluster {

using clock_type = std::chrono::steady_clock;

class watch_stream;  // watch_client.cpp

/// A watch this node holds on an owner: re-opened on every new stream to it.
struct watch_entry {
  v1::BoundQuery query;
  actors::watch_callback cb;
};

/// Everything this node keeps about one other member.
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
  /// Elastic membership: still a member (a live lease, or an owner on record). Former members
  /// keep their entry (in-flight calls may hold it) but get no heartbeats.
  bool member = true;
  std::map<std::uint64_t, watch_entry> watches;
  watch_stream* stream = nullptr;
  /// The bytes of this member's Watch events taken and not yet applied here, bounded by
  /// cluster.maxStreamQueueBytes: its streams read only under it (set by make_peer).
  std::shared_ptr<watch_credit> credit;
  // Watch stream health (/metrics), counted by the streams' reactors.
  std::atomic<std::uint64_t> stream_events{0};
  std::atomic<std::uint64_t> streams_started{0};
  std::atomic<std::uint64_t> stream_errors{0};
};

struct cluster_node::impl {
  cluster_options opts;
  actors::runtime& rt;
  bool elastic() const { return opts.leases != nullptr; }

  // Every member but this one. Entries are added (elastic membership) under the unique lock and
  // never removed before the node is destroyed, so a peer_state* stays valid once looked up.
  mutable std::shared_mutex peers_mu;
  std::map<std::string, std::unique_ptr<peer_state>> peers;
  std::vector<std::unique_ptr<peer_state>> replaced;  // entries whose member changed address

  // The owners of units (rendezvous over these ids) and, with elastic membership, the last
  // lease round.
  mutable std::mutex owners_mu;
  std::shared_ptr<const std::vector<std::string>> owner_ids;
  std::uint64_t epoch = 0;
  std::vector<store::member_lease> leases;
  std::optional<clock_type::time_point> last_round;    // the last successful lease round
  std::optional<clock_type::time_point> settle_until;  // after a lapse: record no owners yet
  std::string lease_error;
  std::uint64_t rounds = 0;
  std::condition_variable rounds_cv;
  std::thread lease_thread;
  std::atomic<std::uint64_t> next_watch{0};
  std::atomic<bool> draining{false};
  std::atomic<bool> halted{false};  // stop() ran: no new calls

  std::mutex control_mu;
  actors::control_handler control;

  // Where Peer.Status reads this node's traffic totals (the gateway counts them).
  mutable std::mutex totals_mu;
  std::function<actors::traffic_totals()> totals;

  // Calls in flight (heartbeats, forwards, streams): stop() waits for them.
  std::mutex calls_mu;
  std::condition_variable calls_cv;
  std::size_t calls = 0;

  std::mutex run_mu;
  std::condition_variable run_cv;
  bool running = false;
  bool lease_wake = false;  // renew now (the node began to drain)
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

  peer_state* peer(const std::string& id) const {
    std::shared_lock lock{peers_mu};
    auto it = peers.find(id);
    return it == peers.end() ? nullptr : it->second.get();
  }

  /// The members to heartbeat and ask (former members of an elastic cluster left out).
  std::vector<peer_state*> member_peers() const {
    std::vector<peer_state*> out;
    std::shared_lock lock{peers_mu};
    for (auto& [id, p] : peers) {
      std::lock_guard plock{p->mu};
      if (p->member) {
        out.push_back(p.get());
      }
    }
    return out;
  }

  std::shared_ptr<const std::vector<std::string>> current_owners() const {
    std::lock_guard lock{owners_mu};
    return owner_ids;
  }

  /// The members as /cluster/health lists them: the static list, or this node, the owners on
  /// record and every live lease.
  std::vector<member_address> current_members() const;

  bool peer_down(peer_state& p) {
    std::lock_guard lock{p.mu};
    return state_of(p, clock_type::now()) == "down";
  }

  /// The other members not known to be down (none once stop() began): whom a gather asks.
  std::vector<peer_state*> peers_not_down() {
    std::vector<peer_state*> out;
    if (!halted) {
      for (auto* p : member_peers()) {
        if (!peer_down(*p)) {
          out.push_back(p);
        }
      }
    }
    return out;
  }

  // cluster_node.cpp
  std::unique_ptr<peer_state> make_peer(const member_address& m) const;
  // membership.cpp
  void heartbeat_loop();
  // leases.cpp
  void lease_loop();
  /// Takes one lease round's outcome: channels to new members, the owners, and the runtime's
  /// units moved when the owners changed.
  void apply_round(store::membership_round round);
  void send_status(peer_state& p);
  // watch_client.cpp
  void start_stream_locked(peer_state& p);
  /// Ends `p`'s stream (its watches hear `lost` and stay registered). Returns a stream that was
  /// paused at its credit's bound: pass it to end_paused_stream once `p.mu` is released.
  [[nodiscard]] watch_stream* cancel_stream_locked(peer_state& p);
  /// Starts the read that lets a cancelled, paused stream see its end (null: nothing to do).
  static void end_paused_stream(watch_stream* s);
  /// Hands one event to its watch; `hold` travels with it (the peer's credit).
  void deliver(peer_state& p, const v1::WatchEvent& ev, std::shared_ptr<const void> hold);
  void stream_done(peer_state& p, watch_stream* s);
};

}  // namespace weir::cluster

// http_server: the listener and the Asio threads. One io_context per I/O thread, and each
// accepted connection lives on one of them (round robin) for its whole life: its handlers run on
// that one thread, never concurrently, with no strand to pay for on every handler (the strand's
// queueing was a few percent of the node's CPU per delivered frame, docs/performance.md), and a
// second core serves its own share of the connections.
#include "gateway/http_server.hpp"

#include <array>
#include <atomic>
#include <thread>
#include <vector>

#include "actors/runtime.hpp"
#include "actors/unsubscribe_batch.hpp"
#include "gateway/beast.hpp"
#include "gateway/delivery_lane.hpp"
#include "gateway/http_session.hpp"
#include "gateway/keep_alive_timer.hpp"
#include "gateway/node_totals.hpp"
#include "gateway/sse_control_router.hpp"

namespace weir::gateway {

struct http_server::impl {
  impl(http_options o, actors::runtime& rt)
      : ctx{std::move(o), rt}, iocs(make_contexts(ctx.opts.io_threads)), acceptor(*iocs[0]) {
    for (auto& c : iocs) {
      // A context with no connection yet must not return from run().
      guards.emplace_back(c->get_executor());
      lanes.push_back(std::make_unique<delivery_lane>(*c));
      wheels.push_back(std::make_unique<keep_alive_wheel>(*c));
      // The subscriptions the handlers of one wake-up end leave in one message per unit: the
      // flush is posted behind them.
      unsubscribes.push_back(std::make_unique<actors::unsubscribe_batch>(
          rt, [ioc = c.get()](actors::unsubscribe_batch& b) {
            asio::post(*ioc, [&b] { b.flush(); });
          }));
    }
  }

  static std::vector<std::unique_ptr<asio::io_context>> make_contexts(int n) {
    std::vector<std::unique_ptr<asio::io_context>> out;
    for (int i = 0; i < std::max(1, n); ++i) {
      // Concurrency hint 1: one thread runs it; posts from other threads (actors, the
      // acceptor) still lock, as they must.
      out.push_back(std::make_unique<asio::io_context>(1));
    }
    return out;
  }

  void do_accept() {
    auto& target = *iocs[next_context++ % iocs.size()];
    acceptor.async_accept(target.get_executor(), [this](beast::error_code ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted) {
        return;
      }
      if (ec) {
        // Out of descriptors or similar: retrying at once would spin a core. Back off briefly;
        // the kernel keeps pending connections in the listen backlog meanwhile.
        accept_retry.expires_after(std::chrono::milliseconds{100});
        accept_retry.async_wait([this](beast::error_code wec) {
          if (!wec) {
            do_accept();
          }
        });
        return;
      }
      // The session starts on its own context's thread: everything it does runs there.
      auto ex = s.get_executor();
      asio::post(ex, [this, s = std::move(s)]() mutable { admit(std::move(s)); });
      do_accept();
    });
  }

  /// Starts a session for `s`, or, over the connection budget, answers 503 and closes it.
  void admit(tcp::socket s) {
    beast::error_code ec;
    auto peer = s.remote_endpoint(ec);
    if (ec) {
      return;  // already gone
    }
    auto address = peer.address().to_string();
    auto slot = ctx.admit_connection(address, core::is_trusted(ctx.opts.trusted_proxies, address));
    if (!slot) {
      refuse(std::move(s));
      return;
    }
    auto session = std::make_shared<http_session>(std::move(s), ctx);
    session->hold(std::move(slot));
    session->run();
  }

  /// Answers a connection over the budget with 503 and closes it, within 2 s whatever the peer
  /// does; at most 64 such answers at once (beyond that the connection is just closed).
  void refuse(tcp::socket s) {
    static const std::string body =
        R"({"error":{"code":"server.overloaded","message":"too many connections; retry shortly"}})";
    static const std::string answer =
        "HTTP/1.1 503 Service Unavailable\r\nServer: weir\r\nContent-Type: application/json\r\n"
        "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    if (refusing.fetch_add(1) >= 64) {
      refusing.fetch_sub(1);
      return;  // the socket closes as `s` goes
    }
    struct refusal {
      explicit refusal(tcp::socket sock)
          : sock(std::move(sock)), deadline(this->sock.get_executor()) {}
      tcp::socket sock;
      asio::steady_timer deadline;
      std::array<char, 512> sink{};
    };
    auto r = std::make_shared<refusal>(std::move(s));
    r->deadline.expires_after(std::chrono::seconds{2});
    r->deadline.async_wait([r](beast::error_code) {
      beast::error_code ignore;
      r->sock.close(ignore);
    });
    // Written without reading the request; then our side ends and what the client still sends
    // is read and dropped until it closes, so the answer is not lost to a reset.
    asio::async_write(r->sock, asio::buffer(answer), [this, r](beast::error_code ec, std::size_t) {
      if (ec) {
        r->deadline.cancel();
        refusing.fetch_sub(1);
        return;
      }
      beast::error_code ignore;
      r->sock.shutdown(tcp::socket::shutdown_send, ignore);
      drain(r);
    });
  }

  template <class R>
  void drain(std::shared_ptr<R> r) {
    r->sock.async_read_some(asio::buffer(r->sink), [this, r](beast::error_code ec, std::size_t) {
      if (!ec) {
        drain(r);
        return;
      }
      r->deadline.cancel();
      refusing.fetch_sub(1);
    });
  }

  std::atomic<int> refusing{0};
  server_context ctx;
  // One per context, same order. A batch sends what it still holds when it goes (a flush that
  // stop() discarded); sessions the contexts destroy as they go end on this thread, which has
  // no batch, and send their own.
  std::vector<std::unique_ptr<actors::unsubscribe_batch>> unsubscribes;
  std::vector<std::unique_ptr<asio::io_context>> iocs;  // one per I/O thread
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  std::vector<std::unique_ptr<delivery_lane>> lanes;  // one per context, same order
  // One per context, same order; after the contexts: gone (with the sessions they hold) first.
  std::vector<std::unique_ptr<keep_alive_wheel>> wheels;
  std::size_t next_context = 0;  // acceptor side only
  tcp::acceptor acceptor;        // on iocs[0]
  asio::steady_timer accept_retry{*iocs[0]};
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  bool stopped = false;
};

http_server::http_server(http_options opts, actors::runtime& rt)
    : impl_(std::make_unique<impl>(std::move(opts), rt)) {}

http_server::~http_server() {
  drain(0);
  stop();
}

core::result<void> http_server::listen() {
  beast::error_code ec;
  auto addr = asio::ip::make_address(impl_->ctx.opts.address, ec);
  if (ec) {
    return core::make_error("config.invalid",
                            "'" + impl_->ctx.opts.address + "' is not an IP address to listen on");
  }
  tcp::endpoint ep{addr, impl_->ctx.opts.port};
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) {
    a.set_option(asio::socket_base::reuse_address(true), ec);
  }
  if (!ec) {
    a.bind(ep, ec);
  }
  if (!ec) {
    a.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    return core::make_error("server.bind_failed", "cannot listen on " + impl_->ctx.opts.address +
                                                      ":" + std::to_string(impl_->ctx.opts.port) +
                                                      ": " + ec.message());
  }
  impl_->port = a.local_endpoint().port();
  return {};
}

core::result<void> http_server::start() {
  if (!impl_->acceptor.is_open()) {
    if (auto r = listen(); !r) {
      return r;
    }
  }
  if (auto* link = impl_->ctx.rt.cluster()) {
    // Control POSTs other members forward here, for the SSE streams this node holds.
    auto* ctx = &impl_->ctx;
    link->set_local_control([ctx](actors::control_request req, std::function<void(unsigned)> done) {
      apply_sse_control(*ctx, std::move(req), std::move(done));
    });
    // What the other members' admin pages show of this node's traffic (Peer.Status).
    link->set_local_totals([ctx] {
      return actors::traffic_totals{writes_total(*ctx), frames_total(*ctx)};
    });
  }
  impl_->do_accept();
  for (std::size_t i = 0; i < impl_->iocs.size(); ++i) {
    impl_->threads.emplace_back([c = impl_->iocs[i].get(), lane = impl_->lanes[i].get(),
                                 wheel = impl_->wheels[i].get(),
                                 unsubscribes = impl_->unsubscribes[i].get()] {
      delivery_lane::set_current(lane);
      keep_alive_wheel::set_current(wheel);
      actors::unsubscribe_batch::set_current(unsubscribes);
      c->run();
    });
  }
  return {};
}

std::uint16_t http_server::port() const {
  return impl_->port;
}

void http_server::drain(std::int64_t timeout_ms) {
  if (impl_->ctx.draining.exchange(true)) {
    return;
  }
  asio::post(*impl_->iocs[0], [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
    impl_->accept_retry.cancel();
  });
  std::vector<std::shared_ptr<closable>> live;
  {
    std::lock_guard lock{impl_->ctx.sessions_mu};
    for (auto& [p, w] : impl_->ctx.sessions) {
      if (auto s = w.lock()) {
        live.push_back(std::move(s));
      }
    }
  }
  for (auto& s : live) {
    s->shut_down();
  }
  live.clear();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds{timeout_ms};
  while (impl_->ctx.live() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
}

void http_server::stop() {
  if (impl_->stopped) {
    return;
  }
  impl_->stopped = true;
  if (auto* link = impl_->ctx.rt.cluster()) {
    link->set_local_control(nullptr);
    link->set_local_totals(nullptr);
  }
  for (auto& c : impl_->iocs) {
    c->stop();
  }
  for (auto& t : impl_->threads) {
    if (t.joinable()) {
      t.join();
    }
  }
  impl_->threads.clear();
}

}  // namespace weir::gateway

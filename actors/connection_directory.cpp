// connection_directory: the health feed's view of this node's hub connections.
#include "actors/connection_directory.hpp"

#include <chrono>

namespace weir::actors {

namespace {
std::optional<std::int64_t> stamp(const shared_time& t) {
  if (!t) {
    return std::nullopt;
  }
  auto v = t->load(std::memory_order_relaxed);
  return v == 0 ? std::nullopt : std::optional<std::int64_t>{v};
}
}  // namespace

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::uint64_t connection_directory::add_connection(connection_entry e) {
  std::lock_guard lock{mu_};
  auto id = ++next_;
  conns_.emplace(id, entry{std::move(e), {}});
  return id;
}

void connection_directory::remove_connection(std::uint64_t id) {
  std::lock_guard lock{mu_};
  conns_.erase(id);
}

shared_time connection_directory::ping_clock(std::uint64_t id) const {
  std::lock_guard lock{mu_};
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : it->second.conn.last_ping_sent;
}

shared_time connection_directory::pong_clock(std::uint64_t id) const {
  std::lock_guard lock{mu_};
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : it->second.conn.last_pong_received;
}

void connection_directory::add_subscription(std::uint64_t id, const std::string& query_id,
                                            std::string query_name, std::string read_model,
                                            shared_time served) {
  std::lock_guard lock{mu_};
  auto it = conns_.find(id);
  if (it == conns_.end()) {
    return;
  }
  it->second.subs[query_id] = subscription_entry{std::move(query_name), std::move(read_model),
                                                 unix_now_ms(), std::move(served)};
}

void connection_directory::remove_subscription(std::uint64_t id, const std::string& query_id) {
  std::lock_guard lock{mu_};
  if (auto it = conns_.find(id); it != conns_.end()) {
    it->second.subs.erase(query_id);
  }
}

std::vector<core::connection_health> connection_directory::snapshot(
    const core::health_scope& scope) const {
  std::vector<core::connection_health> out;
  std::lock_guard lock{mu_};
  for (const auto& [id, e] : conns_) {
    const auto& c = e.conn;
    if (!scope.sees(c.tenant, c.subject, c.client.remote_ip_address)) {
      continue;
    }
    core::connection_health h;
    h.connection_id = c.id;
    h.protocol = c.client.protocol;
    h.established_at_ms = c.established_at_ms;
    h.client = c.client;
    auto ping = stamp(c.last_ping_sent);
    auto pong = stamp(c.last_pong_received);
    for (const auto& [qid, s] : e.subs) {
      core::subscription_health sh;
      sh.subscription_id = qid;
      sh.query_identifier = s.query_name;
      sh.read_model_type = s.read_model;
      sh.connected_at_ms = s.connected_at_ms;
      sh.last_ping_sent_at_ms = ping;
      sh.last_pong_received_at_ms = pong;
      sh.last_data_served_at_ms = stamp(s.served);
      h.subscriptions.push_back(std::move(sh));
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace weir::actors

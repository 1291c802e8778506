// The admin page's stats document (see the header). This node's figures come from its own
// runtime, other members' from their last Peer.Status answer, so a member that stops answering
// keeps its last figures next to its state (suspect, down) rather than vanishing from the page.
#include "gateway/admin_stats.hpp"

#include <chrono>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "actors/cluster_link.hpp"
#include "actors/runtime.hpp"
#include "gateway/node_totals.hpp"
#include "gateway/server_context.hpp"
#include "gateway/slowest_consumers.hpp"

namespace weir::gateway {
namespace {

namespace json = boost::json;

/// This node's own entry, from its runtime.
json::object self_member(server_context& ctx, std::string id, std::optional<bool> owner) {
  auto s = ctx.rt.stats();
  json::object o;
  o["id"] = std::move(id);
  o["state"] = "up";
  if (owner) {
    o["owner"] = *owner;
  }
  o["draining"] = ctx.draining.load();
  o["units"] = s.units > s.remote_units ? s.units - s.remote_units : 0;
  o["queryKeys"] = s.query_keys;
  o["connections"] = s.hub_connections;
  o["subscriptions"] = s.subscriptions;
  o["writesTotal"] = writes_total(ctx);
  o["framesTotal"] = frames_total(ctx);
  o["self"] = true;
  return o;
}

json::object other_member(const actors::member_status& m) {
  json::object o;
  o["id"] = m.id;
  o["state"] = m.state;
  if (m.owner) {
    o["owner"] = *m.owner;
  }
  o["draining"] = m.draining;
  // A member that never answered has no figures: null, not a zero the page would add up.
  auto figure = [&](std::uint64_t v) { return m.reported ? json::value(v) : json::value(nullptr); };
  o["units"] = figure(m.units);
  o["queryKeys"] = figure(m.query_keys);
  o["connections"] = figure(m.connections);
  o["subscriptions"] = figure(m.subscriptions);
  o["writesTotal"] = figure(m.totals.writes);
  o["framesTotal"] = figure(m.totals.frames);
  o["self"] = false;
  return o;
}

}  // namespace

std::string admin_stats_json(server_context& ctx) {
  json::object doc;
  json::array members;
  if (auto* link = ctx.rt.cluster()) {
    doc["node"] = link->self_id();
    for (const auto& m : link->member_statuses()) {
      members.push_back(m.self ? self_member(ctx, m.id, m.owner) : other_member(m));
    }
  } else {
    doc["node"] = "";
    members.push_back(self_member(ctx, "", std::nullopt));
  }
  doc["at"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  doc["members"] = std::move(members);
  json::array slowest;
  for (auto& c : slowest_consumers(ctx, admin_slowest_count)) {
    slowest.push_back(json::object{{"member", c.member},
                                   {"connection", c.connection},
                                   {"transport", c.transport},
                                   {"queuedBytes", c.queued_bytes},
                                   {"framesSent", c.frames_sent}});
  }
  doc["slowest"] = std::move(slowest);
  return json::serialize(doc);
}

}  // namespace weir::gateway

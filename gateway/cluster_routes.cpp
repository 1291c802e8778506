// /readyz and /cluster/health.
#include "gateway/cluster_routes.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "actors/cluster_link.hpp"
#include "actors/runtime.hpp"
#include "actors/store_health.hpp"
#include "gateway/server_context.hpp"

namespace weir::gateway {

std::pair<unsigned, std::string> readiness(server_context& ctx) {
  if (ctx.draining) {
    return {503, R"({"status":"draining"})"};
  }
  if (auto* link = ctx.rt.cluster(); link && !link->ready()) {
    if (link->elastic()) {
      return {503, R"({"status":"no lease","message":"this member has not renewed its lease in )"
                   R"(PostgreSQL within cluster.leaseMs"})"};
    }
    return {
        503,
        R"({"status":"no quorum","message":"fewer than a majority of the members are reachable"})"};
  }
  return {200, R"({"status":"ready"})"};
}

std::pair<unsigned, std::string> cluster_health(server_context& ctx) {
  if (auto* link = ctx.rt.cluster()) {
    return link->health();
  }
  namespace json = boost::json;
  auto s = ctx.rt.stats();
  json::object self;
  self["id"] = "";
  self["state"] = ctx.draining ? "draining" : "up";
  self["self"] = true;
  self["http"] = ctx.opts.address + ":" + std::to_string(ctx.opts.port);
  self["units"] = s.units;
  self["connections"] = s.hub_connections;
  self["subscriptions"] = s.subscriptions;
  self["upstreams"] = 0;
  self["replicas"] = 0;
  self["heldRowBytes"] = s.held_row_bytes;
  json::object doc;
  bool healthy = !ctx.draining;
  doc["status"] = healthy ? "healthy" : "degraded";
  doc["self"] = "";
  doc["store"] = ctx.rt.store_backend();
  actors::add_store_health(doc, ctx.rt);
  doc["viewsAgree"] = true;
  doc["members"] = json::array{std::move(self)};
  return {healthy ? 200u : 503u, json::serialize(doc)};
}

}  // namespace weir::gateway

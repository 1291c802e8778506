// The node's own routes: liveness and readiness probes, Prometheus metrics, the cluster's
// health, and who the caller is (`GET /v1/auth`, windowed-subscribe §11). http_session
// members; the route table is http_routes.cpp.
#include <boost/json/serialize.hpp>

#include "gateway/cluster_routes.hpp"
#include "gateway/http_session.hpp"
#include "gateway/metrics_route.hpp"

namespace weir::gateway {

void http_session::serve_livez(http::request<http::string_body>&, route_match&) {
  respond(200, "{\"status\":\"ok\"}");
}

void http_session::serve_readyz(http::request<http::string_body>&, route_match&) {
  auto [status, body] = readiness(ctx_);
  respond(status, std::move(body));
}

void http_session::serve_metrics(http::request<http::string_body>&, route_match&) {
  content_type_ = prometheus_content_type;
  respond(200, prometheus_metrics(ctx_));
}

void http_session::serve_cluster_health(http::request<http::string_body>&, route_match&) {
  auto [status, body] = cluster_health(ctx_);
  respond(status, std::move(body));
}

void http_session::serve_whoami(http::request<http::string_body>&, route_match&) {
  // windowed-subscribe §11 / seed 002: {authorized, accountId} for the caller's credentials.
  // Without authentication configured every caller is authorized and anonymous, so the seed's
  // client loop proceeds; with it, only a valid credential is authorized.
  boost::json::object o;
  if (!ctx_.opts.auth) {
    o["authorized"] = true;
    o["accountId"] = "";
  } else {
    bool ok = !id_.refused && id_.who->authenticated();
    o["authorized"] = ok;
    o["accountId"] = ok ? id_.who->subject : std::string{};
  }
  respond(200, boost::json::serialize(o));
}

}  // namespace weir::gateway

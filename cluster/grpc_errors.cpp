// Weir error ⇄ grpc::Status.
#include "cluster/grpc_errors.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::cluster {
namespace {

grpc::StatusCode code_for(const core::error& e) {
  const auto& c = e.code;
  if (c == "record.not_found" || c == "object.not_found") {
    return grpc::StatusCode::NOT_FOUND;
  }
  if (c == "server.overloaded" || c == "server.unavailable" || c == "server.draining" ||
      c.rfind("cluster.", 0) == 0) {
    return grpc::StatusCode::UNAVAILABLE;
  }
  if (c == "query.too_many_sorts") {
    return grpc::StatusCode::RESOURCE_EXHAUSTED;
  }
  if (c.rfind("store.", 0) == 0) {
    return grpc::StatusCode::INTERNAL;
  }
  if (c == "write.outcome_unknown") {
    return grpc::StatusCode::UNKNOWN;  // it may have committed: not a refusal
  }
  if (c == "auth.forbidden" || c == "auth.tenant_forbidden") {
    return grpc::StatusCode::PERMISSION_DENIED;
  }
  if (c.rfind("auth.", 0) == 0) {
    return grpc::StatusCode::UNAUTHENTICATED;
  }
  return grpc::StatusCode::INVALID_ARGUMENT;
}

}  // namespace

grpc::Status to_status(const core::error& e) {
  boost::json::object o;
  o["code"] = e.code;
  o["message"] = e.message;
  if (!e.details.empty()) {
    o["details"] = e.details;
  }
  return grpc::Status(code_for(e), e.code + ": " + e.message, boost::json::serialize(o));
}

core::error from_status(const grpc::Status& s, const std::string& node) {
  if (!s.error_details().empty()) {
    boost::system::error_code ec;
    auto v = boost::json::parse(s.error_details(), ec);
    if (!ec && v.is_object()) {
      auto& o = v.as_object();
      auto* code = o.if_contains("code");
      auto* message = o.if_contains("message");
      if (code && code->is_string() && message && message->is_string()) {
        boost::json::object details;
        if (auto* d = o.if_contains("details"); d && d->is_object()) {
          details = d->as_object();
        }
        return core::make_error(std::string{code->as_string()}, std::string{message->as_string()},
                                std::move(details));
      }
    }
  }
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return core::make_error("cluster.owner_timeout",
                            "the node owning this data ('" + node +
                                "') did not answer in time; the write may or may not have been "
                                "applied: read it back before retrying",
                            {{"node", node}});
  }
  // The request may have reached the owner before the connection failed: say so, since a
  // retried PATCH or $inc would apply twice.
  return core::make_error("cluster.owner_unavailable",
                          "the node owning this data ('" + node + "') is unreachable (" +
                              s.error_message() +
                              "); the write may or may not have been applied: read it back "
                              "before retrying",
                          {{"node", node}});
}

core::error owner_down(const std::string& node) {
  return core::make_error("cluster.owner_unavailable",
                          "the node owning this data ('" + node +
                              "') is down; nothing was applied: retry once it is back",
                          {{"node", node}});
}

}  // namespace weir::cluster

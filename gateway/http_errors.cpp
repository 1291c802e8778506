// Error code → HTTP status, and the JSON error envelope of the write API.
#include "gateway/http_errors.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace weir::gateway {

unsigned status_for(const core::error& e) {
  const auto& c = e.code;
  auto starts = [&](std::string_view p) { return c.rfind(p, 0) == 0; };
  if (c == "record.not_found" || c == "object.not_found" || c == "route.not_found" ||
      c == "space.not_found") {
    return 404;
  }
  if (c == "object.deleted" || c == "record.deleted") {
    return 410;
  }
  // RFC 6902 writes: a failed `test` means the document is not in the state the patch was made
  // for (409, like a failed precondition); a patch that is well formed but does not fit the
  // document (a missing path, an index past the end) is unprocessable (422); a malformed one is
  // a bad request (400, below).
  if (c == "patch.test_failed") {
    return 409;
  }
  // The IETF Idempotency-Key draft: a key reused with a different request is 422.
  if (c == "patch.path_not_found" || c == "patch.out_of_bounds" || c == "patch.invalid_target" ||
      c == "patch.move_into_child" || c == "patch.invalid_result" ||
      c == "request.idempotency_key_reused") {
    return 422;
  }
  if (c == "auth.forbidden" || c == "auth.tenant_forbidden" || c == "request.origin_forbidden") {
    return 403;
  }
  if (starts("auth.")) {
    return 401;
  }
  if (c == "access.rate_limited") {
    return 429;
  }
  if (c == "method.not_allowed") {
    return 405;
  }
  if (c == "request.too_large" || c == "record.too_large") {
    return 413;
  }
  if (c == "request.headers_too_large") {
    return 431;
  }
  if (c == "request.upgrade_required") {
    return 426;
  }
  if (c == "request.unsupported_media_type") {
    return 415;
  }
  // A window on one sort too many: the node's bound, not a mistake in the request (the same
  // request succeeds once other sorts' windows close).
  if (c == "server.overloaded" || c == "server.unavailable" || c == "server.draining" ||
      c == "query.too_many_sorts" || c == "query.too_many_objects" || starts("cluster.")) {
    return 503;
  }
  if (starts("store.")) {
    return 500;
  }
  if (starts("request.") || starts("update.") || starts("filter.") || starts("batch.") ||
      starts("patch.") || starts("record.") || starts("query.") || c == "object.id_required") {
    return 400;
  }
  return 500;
}

boost::json::object error_object(const core::error& e) {
  boost::json::object err;
  err["code"] = e.code;
  err["message"] = e.message;
  if (!e.details.empty()) {
    err["details"] = e.details;
  }
  return err;
}

core::error space_not_found(const std::string& space) {
  return core::make_error("space.not_found", "space " + space + " not found", {{"space", space}});
}

core::error body_too_large(std::size_t limit) {
  return core::make_error(
      "request.too_large",
      "the body is larger than the configured limit of " + std::to_string(limit) + " bytes",
      {{"limit", limit}});
}

std::string error_body(const core::error& e) {
  boost::json::object root;
  root["error"] = error_object(e);
  return boost::json::serialize(root);
}

std::string_view error_code_of(std::string_view body) {
  // error_body() serializes "error" then "code" first; codes are plain dotted words.
  constexpr std::string_view prefix = R"({"error":{"code":")";
  if (!body.starts_with(prefix)) {
    return {};
  }
  body.remove_prefix(prefix.size());
  return body.substr(0, body.find('"'));
}

}  // namespace weir::gateway

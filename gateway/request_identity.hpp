// weir::gateway request identity — who a request comes from: its principal (core::authenticator
// over its Authorization header, cookie, access_token and tenant header) and its client address
// (the peer's, or X-Forwarded-For's behind a trusted proxy). Internal to gateway/.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/principal.hpp"
#include "core/result.hpp"
#include "gateway/beast.hpp"
#include "gateway/server_context.hpp"

namespace weir::gateway {

struct request_identity {
  /// The caller; anonymous when no credential was presented, or when `refused` is set.
  std::shared_ptr<const core::principal> who = core::anonymous_principal();
  /// A credential was presented and refused (auth.* codes; see core::authenticator).
  std::optional<core::error> refused;
  /// The client address: what anonymous callers are told apart by.
  std::string client;
};

/// A header's value (`key`: an http::field or a name), or nullopt when the request has none.
template <class Key>
std::optional<std::string_view> header(const http::request<http::string_body>& req, Key key) {
  auto it = req.find(key);
  if (it == req.end()) {
    return std::nullopt;
  }
  return std::string_view{it->value()};
}

/// Identifies the caller of `req`, received from `peer`.
request_identity identify(const server_context& ctx, const http::request<http::string_body>& req,
                          std::string_view peer);

/// 401 for a missing or refused credential, 403 for one that does not allow the request.
unsigned auth_status(const core::error& e);

/// The WWW-Authenticate challenge a 401 carries (RFC 6750 §3).
std::string bearer_challenge(const core::error& e);

/// Seconds since the Unix epoch, now.
std::int64_t unix_now_seconds();

/// The budget key of a request's caller (arc-hub §9.1): its principal, or its client address.
std::string caller_of(const request_identity& id);

}  // namespace weir::gateway

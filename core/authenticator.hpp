// weir::core::authenticator — from a request's credentials to its principal: a bearer token in
// the Authorization header, else the configured cookie (browsers cannot set headers on an
// EventSource or a WebSocket), else — on WebSocket upgrades, when enabled — an `access_token`
// query parameter; and the tenant, from the token or, where that is allowed, the
// x-cratis-tenant-id header. Pure: the gateway hands it header values and the clock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/jwt.hpp"
#include "core/principal.hpp"
#include "core/result.hpp"

namespace weir::core {

/// What one request carries that can identify its caller.
struct credential_sources {
  std::optional<std::string_view> authorization;  ///< the Authorization header
  std::optional<std::string_view> cookie;         ///< the Cookie header
  std::string_view query;                         ///< the raw query string
  std::optional<std::string_view> tenant_header;  ///< x-cratis-tenant-id
  bool websocket_upgrade = false;
  /// The peer is one of the configured trusted proxies: its tenant header is believed.
  bool from_trusted_proxy = false;
};

struct authenticator_options {
  std::string cookie;        ///< the cookie holding the token; "" for none
  bool query_token = false;  ///< accept `access_token` on WebSocket upgrades
};

class authenticator {
 public:
  /// No verifier: authentication is off, every caller is anonymous and credentials are not read.
  authenticator() = default;
  authenticator(jwt_verifier verifier, authenticator_options options);

  bool enabled() const { return verifier_.has_value(); }

  /// The caller of a request at `now` (seconds since the Unix epoch): anonymous when it presents
  /// no credential, an error when it presents one that does not verify (auth.* codes of
  /// jwt_verifier::verify, answered 401; auth.invalid_token also for an Authorization header
  /// that is not `Bearer <token>`), or auth.tenant_forbidden (403) when the tenant header names a
  /// tenant the caller may not select.
  result<std::shared_ptr<const principal>> authenticate(const credential_sources& in,
                                                        std::int64_t now) const;

  const authenticator_options& options() const { return options_; }

 private:
  std::optional<jwt_verifier> verifier_;
  authenticator_options options_;
};

/// The value of cookie `name` in a Cookie header (RFC 6265 §4.2.1), unquoted; nullopt if absent.
std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name);

/// Removes `access_token=…` from a query string, so the rest can be read as query arguments.
std::string strip_access_token(std::string_view query);

}  // namespace weir::core

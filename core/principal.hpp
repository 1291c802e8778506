// weir::core::principal — who is calling: the identity a verified credential (a JWT, see
// core/jwt.hpp) establishes, or the anonymous caller. Every authorization decision, caller
// budget, ownership check and health-feed scope is made from one of these.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "core/result.hpp"

namespace weir::core {

struct principal {
  /// The subject (`sub`, or the configured subject claim); "" for an anonymous caller.
  std::string subject;
  /// The tenant: the token's tenant claim, or the `x-cratis-tenant-id` header where that is
  /// allowed (see core/credentials.hpp); "" when none.
  std::string tenant;
  std::vector<std::string> roles;
  /// Every claim of the token, for required-claim rules and `{claims.<name>}` bindings.
  boost::json::object claims;
  /// When the credential stops being valid (seconds since the Unix epoch): subscriptions opened
  /// with it end then (the emission guard). Unset for anonymous callers and tokens without `exp`.
  std::optional<std::int64_t> expires_at;

  bool authenticated() const { return !subject.empty(); }
  bool has_role(std::string_view role) const;
};

/// The anonymous caller with no tenant, shared.
const std::shared_ptr<const principal>& anonymous_principal();

/// The principal as JSON text, for the cluster: the member holding a connection checks a control
/// POST that another member received against the principal that member verified.
std::string principal_to_json(const principal& p);
/// The inverse; "" is the anonymous caller. Error: cluster.mismatch for text that is not one.
result<principal> principal_from_json(std::string_view text);

}  // namespace weir::core

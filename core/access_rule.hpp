// weir::core::access_rule — who may do something: a named query's `authorize`, a space's `read`
// and `write`. Parsed from configuration, checked against a principal on every request.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "core/principal.hpp"
#include "core/result.hpp"

namespace weir::core {

struct access_rule {
  /// False: anyone, anonymous callers included.
  bool authenticated = false;
  /// When non-empty the caller needs at least one of these roles.
  std::vector<std::string> roles;
  /// Claims the caller's token must carry: equal to the value, or, for an array claim,
  /// containing it.
  std::vector<std::pair<std::string, boost::json::value>> claims;

  bool anonymous() const { return !authenticated; }
};

/// Parses `anonymous`, `authenticated`, or `{roles: [...], claims: {name: value}}` (an object
/// implies authenticated; either member may be left out). `field` names the setting in errors
/// (code config.invalid).
result<access_rule> parse_access_rule(const boost::json::value& v, std::string_view field);

/// Checks `who` against `rule`. Errors: auth.required (401: the rule needs a signed-in caller and
/// there is none), auth.forbidden (403: signed in, but without the role or claim).
result<void> check_access(const access_rule& rule, const principal& who);

}  // namespace weir::core

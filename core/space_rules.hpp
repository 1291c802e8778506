// weir::core::space_rules — who may read and write which spaces (YAML `spaces`): the write API
// and the windowed API check every request against the first rule whose pattern matches its
// space. A space no rule matches is open to every caller, as it is with no rules at all.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "core/access_rule.hpp"
#include "core/principal.hpp"
#include "core/result.hpp"

namespace weir::core {

struct space_rule {
  /// An exact space id, a prefix followed by '*' ("team-*"), or "*" for every space.
  std::string pattern;
  access_rule read;   ///< windowed queries and subscriptions
  access_rule write;  ///< the write API

  bool matches(std::string_view space) const;
};

enum class space_access { read, write };

/// Parses the `spaces` list (null: none). Errors: config.invalid naming the entry and field.
result<std::vector<space_rule>> parse_space_rules(const boost::json::value& list);

/// The rule that decides for `space` (the first that matches), or null when none does.
const space_rule* space_rule_for(const std::vector<space_rule>& rules, std::string_view space);

/// Checks `who` for `access` to `space`: ok, or auth.required (401) / auth.forbidden (403) with
/// the space in the details.
result<void> check_space_access(const std::vector<space_rule>& rules, std::string_view space,
                                space_access access, const principal& who);

}  // namespace weir::core

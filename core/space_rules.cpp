// weir::core::space_rules — parsing and matching.
#include "core/space_rules.hpp"

#include <boost/json/object.hpp>

namespace weir::core {

namespace json = boost::json;

namespace {

error entry_error(std::size_t i, std::string_view field, std::string why) {
  std::string where = "spaces[" + std::to_string(i) + "]";
  if (!field.empty()) {
    where += "." + std::string{field};
  }
  return make_error("config.invalid", where + ": " + std::move(why), {{"field", where}});
}

}  // namespace

bool space_rule::matches(std::string_view space) const {
  if (!pattern.empty() && pattern.back() == '*') {
    return space.starts_with(std::string_view{pattern}.substr(0, pattern.size() - 1));
  }
  return space == pattern;
}

result<std::vector<space_rule>> parse_space_rules(const json::value& list) {
  std::vector<space_rule> out;
  if (list.is_null()) {
    return out;
  }
  if (!list.is_array()) {
    return make_error("config.invalid", "spaces: must be a list of {name, read, write}",
                      {{"field", "spaces"}});
  }
  for (std::size_t i = 0; i < list.get_array().size(); ++i) {
    const auto& v = list.get_array()[i];
    if (!v.is_object()) {
      return entry_error(i, "", "must be a mapping with name, read and write");
    }
    space_rule rule;
    for (const auto& kv : v.get_object()) {
      if (kv.key() == "name") {
        if (!kv.value().is_string() || kv.value().get_string().empty()) {
          return entry_error(i, "name", "must be a space id, a prefix ending in '*', or '*'");
        }
        rule.pattern = std::string{kv.value().get_string()};
        if (rule.pattern.find('*') < rule.pattern.size() - 1) {
          return entry_error(i, "name", "'*' may only end the pattern");
        }
      } else if (kv.key() == "read" || kv.key() == "write") {
        auto field = "spaces[" + std::to_string(i) + "]." + std::string{kv.key()};
        auto parsed = parse_access_rule(kv.value(), field);
        if (!parsed) {
          return std::move(parsed).error();
        }
        (kv.key() == "read" ? rule.read : rule.write) = std::move(*parsed);
      } else {
        return entry_error(i, kv.key(), "unknown key (known: name, read, write)");
      }
    }
    if (rule.pattern.empty()) {
      return entry_error(i, "name", "required");
    }
    out.push_back(std::move(rule));
  }
  return out;
}

const space_rule* space_rule_for(const std::vector<space_rule>& rules, std::string_view space) {
  for (const auto& rule : rules) {
    if (rule.matches(space)) {
      return &rule;
    }
  }
  return nullptr;
}

result<void> check_space_access(const std::vector<space_rule>& rules, std::string_view space,
                                space_access access, const principal& who) {
  if (const auto* found = space_rule_for(rules, space)) {
    const auto& rule = *found;
    auto r = check_access(access == space_access::read ? rule.read : rule.write, who);
    if (!r) {
      auto e = std::move(r).error();
      e.message = std::string{access == space_access::read ? "reading" : "writing"} + " space " +
                  std::string{space} + ": " + e.message;
      e.details["space"] = std::string{space};
      return e;
    }
  }
  return {};
}

}  // namespace weir::core

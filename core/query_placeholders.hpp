// weir::core query placeholders — the rules a named query's parsing (query_definition.cpp) and
// its binding to arguments (query_binding.cpp) share: which strings are placeholders, which ids
// are valid, how an argument's text becomes a typed value and an id. Private to those files.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/query_definition.hpp"

namespace weir::core::query_detail {

namespace json = boost::json;

inline constexpr std::size_t max_id_bytes = 256;
inline constexpr std::size_t max_sort_by_bytes = 256;
inline constexpr std::string_view invalid_arguments = "query.invalid_arguments";
inline constexpr std::string_view claims_prefix = "claims.";

/// Whether `s` holds an ASCII control character.
bool has_control_char(std::string_view s);

/// A valid space or object id: 1–256 bytes, no control character.
bool is_valid_id(std::string_view s);

/// "{name}" with an identifier inside is an argument placeholder, "{claims.<claim>}" a claim
/// placeholder: their inner text. Any other string is a literal (nullopt).
std::optional<std::string_view> placeholder_of(std::string_view s);

/// The claim a placeholder's inner text names, if it is a claim placeholder.
std::optional<std::string_view> claim_of(std::string_view inner);

/// Text form of a typed argument value, for ids bound from it: canonical, so "042" and "42"
/// given for an integer argument select the same object (and share a key).
std::string id_text(const json::value& v);

/// The declared argument `name` of `def`; nullptr when it declares none of that name.
const std::pair<std::string, argument_type>* find_argument(const query_definition& def,
                                                           std::string_view name);

/// A query.invalid_arguments error naming the query and, under `detail_key`, the argument.
error argument_error(const query_definition& def, std::string message, std::string_view argument,
                     std::string_view detail_key = "argument");

/// An argument's text as a value of its declared type; nullopt when it is not one.
std::optional<json::value> convert_argument(std::string_view text, argument_type type);

// Copies `tmpl`, replacing every placeholder string value by `lookup(name)`. Object keys are
// never placeholders: they are field paths and operators.
template <class Lookup>
json::value bind_placeholders(const json::value& tmpl, const Lookup& lookup) {
  switch (tmpl.kind()) {
    case json::kind::string: {
      if (auto name = placeholder_of(std::string_view(tmpl.get_string()))) {
        return lookup(*name);
      }
      return tmpl;
    }
    case json::kind::array: {
      json::array out;
      out.reserve(tmpl.get_array().size());
      for (const auto& e : tmpl.get_array()) {
        out.push_back(bind_placeholders(e, lookup));
      }
      return out;
    }
    case json::kind::object: {
      json::object out;
      out.reserve(tmpl.get_object().size());
      for (const auto& kv : tmpl.get_object()) {
        out.emplace(kv.key(), bind_placeholders(kv.value(), lookup));
      }
      return out;
    }
    default:
      return tmpl;
  }
}

}  // namespace weir::core::query_detail

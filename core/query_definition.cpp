// weir::core::query_definition — parsing and validation of named queries. Binding them to
// arguments is query_binding.cpp; the placeholder and argument rules both use are in
// query_placeholders.hpp.
#include "core/query_definition.hpp"

#include <boost/json/value_from.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "core/match_spans.hpp"
#include "core/query_placeholders.hpp"
#include "core/rendezvous.hpp"

namespace weir::core {

namespace query_detail {

namespace json = boost::json;

constexpr std::size_t max_query_name_length = 180;  // arc-hub.md §2.3 `queryName`
constexpr std::size_t max_arguments = 128;          // arc-hub.md §2.3 `arguments`
constexpr std::size_t max_argument_name_length = 128;

constexpr std::string_view config_invalid = "config.invalid";

// The hub strips these out of the request before `arguments` is read (arc-hub.md §2.3), and the
// direct routes read `transferMode` from the query string (Weir's extension), so an argument of
// that name could never be supplied.
constexpr std::array<std::string_view, 7> reserved_argument_names = {
    "page",          "pagesize",           "sortby",
    "sortdirection", "waitforfirstresult", "waitforfirstresulttimeout",
    "transfermode"};

constexpr std::array<std::string_view, 9> known_fields = {
    "name", "route", "space", "object", "dataset", "filter", "sort", "arguments", "authorize"};

bool is_ascii_alpha(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool is_ascii_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_ascii_alpha(s.front())) {
    return false;
  }
  for (char c : s) {
    if (!is_ascii_alpha(c) && !is_ascii_digit(c) && c != '_') {
      return false;
    }
  }
  return true;
}

bool is_query_name(std::string_view s) {
  if (s.empty() || s.size() > max_query_name_length) {
    return false;
  }
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!is_identifier(part)) {
      return false;
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    start = dot + 1;
  }
}

bool has_control_char(std::string_view s) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      return true;
    }
  }
  return false;
}

bool is_valid_id(std::string_view s) {
  return !s.empty() && s.size() <= max_id_bytes && !has_control_char(s);
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

bool is_reserved_argument(std::string_view name) {
  std::string lower = ascii_lower(name);
  for (auto r : reserved_argument_names) {
    if (lower == r) {
      return true;
    }
  }
  return false;
}

bool is_claim_name(std::string_view s) {
  if (s.empty() || s.size() > max_argument_name_length) {
    return false;
  }
  for (char c : s) {
    if (!is_ascii_alpha(c) && !is_ascii_digit(c) && c != '_' && c != '-' && c != ':' && c != '/' &&
        c != '.') {
      return false;
    }
  }
  return true;
}

// "{name}" with an identifier inside is an argument placeholder, "{claims.<claim>}" a claim
// placeholder; any other string is a literal, so data values that merely contain braces keep
// working.
std::optional<std::string_view> placeholder_of(std::string_view s) {
  if (s.size() < 3 || s.front() != '{' || s.back() != '}') {
    return std::nullopt;
  }
  std::string_view inner = s.substr(1, s.size() - 2);
  if (is_identifier(inner) ||
      (inner.starts_with(claims_prefix) && is_claim_name(inner.substr(claims_prefix.size())))) {
    return inner;
  }
  return std::nullopt;
}

// The claim a placeholder's inner text names, if it is a claim placeholder.
std::optional<std::string_view> claim_of(std::string_view inner) {
  if (!inner.starts_with(claims_prefix)) {
    return std::nullopt;
  }
  return inner.substr(claims_prefix.size());
}

// Adds the claims `v` names (selector strings and filter values) to `out`, once each.
void note_claims(const json::value& v, std::vector<std::string>& out) {
  switch (v.kind()) {
    case json::kind::string:
      if (auto inner = placeholder_of(std::string_view(v.get_string()))) {
        if (auto claim = claim_of(*inner)) {
          if (std::find(out.begin(), out.end(), *claim) == out.end()) {
            out.emplace_back(*claim);
          }
        }
      }
      return;
    case json::kind::array:
      for (const auto& e : v.get_array()) {
        note_claims(e, out);
      }
      return;
    case json::kind::object:
      for (const auto& kv : v.get_object()) {
        note_claims(kv.value(), out);
      }
      return;
    default:
      return;
  }
}

std::optional<argument_type> argument_type_from(std::string_view s) {
  if (s == "string") {
    return argument_type::string;
  }
  if (s == "integer") {
    return argument_type::integer;
  }
  if (s == "number") {
    return argument_type::number;
  }
  if (s == "boolean") {
    return argument_type::boolean;
  }
  return std::nullopt;
}

const std::pair<std::string, argument_type>* find_argument(const query_definition& def,
                                                           std::string_view name) {
  for (const auto& a : def.arguments) {
    if (a.first == name) {
      return &a;
    }
  }
  return nullptr;
}

// The first placeholder in `v` that names no declared argument, if any.
std::optional<std::string> undeclared_placeholder(const json::value& v,
                                                  const query_definition& def) {
  switch (v.kind()) {
    case json::kind::string: {
      auto name = placeholder_of(std::string_view(v.get_string()));
      if (name && !claim_of(*name) && find_argument(def, *name) == nullptr) {
        return std::string(*name);
      }
      return std::nullopt;
    }
    case json::kind::array:
      for (const auto& e : v.get_array()) {
        if (auto found = undeclared_placeholder(e, def)) {
          return found;
        }
      }
      return std::nullopt;
    case json::kind::object:
      for (const auto& kv : v.get_object()) {
        if (auto found = undeclared_placeholder(kv.value(), def)) {
          return found;
        }
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// A value of the declared type, used to check the filter's grammar at load time before real values
// exist. The string is "string" because that is also a `$type` alias, so `$type: "{t}"` validates.
json::value dummy_value(argument_type t) {
  switch (t) {
    case argument_type::string:
      return json::string("string");
    case argument_type::integer:
      return std::int64_t{0};
    case argument_type::number:
      return 0.0;
    case argument_type::boolean:
      return false;
  }
  return nullptr;
}

// Names the query in messages: by name when it has a valid one, else by its list position.
struct query_ref {
  std::string label;
  json::value id;
};

query_ref ref_for(const json::object& obj, std::size_t index) {
  if (auto it = obj.find("name"); it != obj.end() && it->value().is_string()) {
    std::string_view name(it->value().get_string());
    if (is_query_name(name)) {
      return {"query '" + std::string(name) + "'", json::string(name)};
    }
  }
  return {"query #" + std::to_string(index), static_cast<std::uint64_t>(index)};
}

error field_error(const query_ref& ref, std::string_view field, std::string_view why,
                  json::object extra = {}) {
  json::object details = std::move(extra);
  details["query"] = ref.id;
  details["field"] = field;
  return make_error(std::string(config_invalid),
                    ref.label + ": field '" + std::string(field) + "': " + std::string(why),
                    std::move(details));
}

// `space`, `object`, `dataset`: a fixed id or "{arg}".
result<std::string> parse_selector(const json::object& obj, std::string_view field,
                                   const query_definition& def, const query_ref& ref) {
  const json::value& v = obj.at(field);
  if (!v.is_string()) {
    return field_error(ref, field, "must be a string (a fixed id or \"{argument}\")");
  }
  std::string_view s(v.get_string());
  if (auto name = placeholder_of(s)) {
    if (!claim_of(*name) && find_argument(def, *name) == nullptr) {
      return field_error(ref, field,
                         "placeholder {" + std::string(*name) + "} names no declared argument");
    }
    return std::string(s);
  }
  if (!is_valid_id(s)) {
    return field_error(ref, field,
                       "not a valid id (non-empty, at most 256 bytes, no control characters)");
  }
  return std::string(s);
}

result<void> parse_arguments(const json::value& v, query_definition& def, const query_ref& ref) {
  if (v.is_null()) {
    return {};
  }
  if (!v.is_object()) {
    return field_error(ref, "arguments", "must be a mapping of argument name to type");
  }
  const auto& args = v.get_object();
  if (args.size() > max_arguments) {
    return field_error(ref, "arguments", "at most 128 arguments");
  }
  for (const auto& kv : args) {
    std::string_view name(kv.key());
    if (!is_identifier(name) || name.size() > max_argument_name_length) {
      return field_error(ref, "arguments",
                         "argument name '" + std::string(name) +
                             "' must match ^[A-Za-z][A-Za-z0-9_]*$ (at most 128 characters)");
    }
    if (is_reserved_argument(name)) {
      return field_error(
          ref, "arguments",
          "argument name '" + std::string(name) + "' is reserved by the hub (page, pageSize, " +
              "sortBy, sortDirection, waitForFirstResult, waitForFirstResultTimeout, " +
              "transferMode)");
    }
    std::optional<argument_type> type;
    if (kv.value().is_string()) {
      type = argument_type_from(std::string_view(kv.value().get_string()));
    }
    if (!type) {
      return field_error(ref, "arguments",
                         "argument '" + std::string(name) +
                             "': type must be one of string, integer, number, boolean");
    }
    def.arguments.emplace_back(std::string(name), *type);
  }
  return {};
}

result<void> parse_route(const json::value& v, query_definition& def, const query_ref& ref) {
  if (!v.is_string()) {
    return field_error(ref, "route", "must be a string starting with '/'");
  }
  std::string_view route(v.get_string());
  if (route.empty() || route.front() != '/') {
    return field_error(ref, "route", "must start with '/'");
  }
  for (char c : route) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '?' || c == '#') {
      return field_error(ref, "route",
                         "must be a plain path (no spaces, control characters, '?' or '#')");
    }
  }
  // These prefixes belong to the hub and the write API; a query there would shadow them.
  for (std::string_view reserved : {std::string_view("/.cratis"), std::string_view("/v1")}) {
    if (route == reserved || (route.size() > reserved.size() && route.starts_with(reserved) &&
                              route[reserved.size()] == '/')) {
      return field_error(ref, "route",
                         "routes under " + std::string(reserved) + "/ are reserved by Weir");
    }
  }
  def.route = std::string(route);
  return {};
}

result<void> parse_filter(const json::value& v, query_definition& def, const query_ref& ref) {
  if (auto missing = undeclared_placeholder(v, def)) {
    return field_error(ref, "filter", "placeholder {" + *missing + "} names no declared argument");
  }
  json::value probe = bind_placeholders(v, [&](std::string_view name) {
    return claim_of(name) ? json::value(json::string("string"))
                          : dummy_value(find_argument(def, name)->second);
  });
  auto parsed = filter::parse(probe);
  if (!parsed) {
    const error& e = parsed.error();
    json::object extra;
    extra["cause"] = e.code;
    if (!e.details.empty()) {
      extra["filter"] = e.details;
    }
    return field_error(ref, "filter", e.message, std::move(extra));
  }
  def.filter_template = v;
  // Paths the filter bounds with any values of its arguments: the node keeps an index on each
  // for large datasets, so the query's first page needs no pass. A complement ($ne, $nin) or a
  // whole type class ($type) earns one only where it is the whole filter (its count then comes
  // from ranks); beside other fields it would narrow nothing.
  def.filter_index_sorts.clear();
  const auto& fields = parsed->paths();
  for (const auto& field : fields) {
    auto order = filter_index_order({field});
    auto plan = order ? span_plan::make(*parsed, *order) : std::nullopt;
    if (plan && (plan->narrow() || plan->exact())) {
      def.filter_index_sorts.push_back({field});
    }
  }
  // An $or across fields ({$or: [{owner: "{me}"}, {shared: "{me}"}]}): a field for each branch,
  // when each bounds one narrowly and they are at most max_disjunct_index_fields, so that its
  // matches are read from the branches' runs.
  if (def.filter_index_sorts.empty()) {
    for (const auto& branch : parsed->disjuncts()) {
      auto narrowed = std::find_if(fields.begin(), fields.end(), [&](const std::string& field) {
        auto order = filter_index_order({field});
        auto plan = order ? span_plan::make(branch, *order) : std::nullopt;
        return plan && plan->narrow();
      });
      if (narrowed == fields.end()) {
        def.filter_index_sorts.clear();
        break;
      }
      std::vector<std::string> keys{*narrowed};
      if (std::find(def.filter_index_sorts.begin(), def.filter_index_sorts.end(), keys) ==
          def.filter_index_sorts.end()) {
        def.filter_index_sorts.push_back(std::move(keys));
      }
    }
    if (def.filter_index_sorts.size() > max_disjunct_index_fields) {
      def.filter_index_sorts.clear();  // all or nothing: part of them would serve no query
    }
  }
  // Two fields, one fixed to values: an index on both counts the filter from its ranks where
  // one on each would count neither (each field's bounds may admit many records).
  if (fields.size() == 2) {
    for (const auto& keys :
         {std::vector{fields[0], fields[1]}, std::vector{fields[1], fields[0]}}) {
      auto order = filter_index_order(keys);
      auto plan = order ? span_plan::make(*parsed, *order) : std::nullopt;
      if (plan && plan->compound() && plan->exact()) {
        def.filter_index_sorts = {keys};
        break;
      }
    }
  }
  return {};
}

result<void> parse_sort(const json::value& v, query_definition& def, const query_ref& ref) {
  std::vector<std::string> keys;
  if (v.is_string()) {
    keys.emplace_back(v.get_string());
  } else if (v.is_array()) {
    for (const auto& e : v.get_array()) {
      if (!e.is_string()) {
        return field_error(ref, "sort", "must be a list of field paths (\"-path\" = descending)");
      }
      keys.emplace_back(e.get_string());
    }
  } else if (!v.is_null()) {
    return field_error(ref, "sort", "must be a list of field paths (\"-path\" = descending)");
  }
  auto parsed = sort_spec::parse(keys);
  if (!parsed) {
    json::object extra;
    extra["cause"] = parsed.error().code;
    return field_error(ref, "sort", parsed.error().message, std::move(extra));
  }
  def.sort = std::move(keys);
  return {};
}

// Text form of a typed argument value, for ids bound from it. Canonical, so "042" and "42" given
// for an integer argument select the same object (and share a key).
std::string id_text(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string:
      return std::string(v.get_string());
    case json::kind::int64:
      return std::to_string(v.get_int64());
    case json::kind::bool_:
      return v.get_bool() ? "true" : "false";
    default:
      return json::serialize(v);
  }
}

std::optional<json::value> convert_argument(std::string_view text, argument_type type) {
  switch (type) {
    case argument_type::string:
      return json::value(json::string(text));
    case argument_type::integer: {
      std::int64_t n = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
        return std::nullopt;
      }
      return json::value(n);
    }
    case argument_type::number: {
      double d = 0.0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() ||
          !std::isfinite(d)) {
        return std::nullopt;
      }
      if (d == 0.0) {
        d = 0.0;  // -0 and 0 compare equal, so they must not make different keys
      }
      return json::value(d);
    }
    case argument_type::boolean: {
      std::string lower = ascii_lower(text);
      if (lower == "true") {
        return json::value(true);
      }
      if (lower == "false") {
        return json::value(false);
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

error argument_error(const query_definition& def, std::string message, std::string_view argument,
                     std::string_view detail_key) {
  json::object details;
  details["query"] = def.name;
  details[detail_key] = argument;
  return make_error(std::string(invalid_arguments), std::move(message), std::move(details));
}

}  // namespace query_detail

using namespace query_detail;

std::string_view to_string(argument_type t) {
  switch (t) {
    case argument_type::string:
      return "string";
    case argument_type::integer:
      return "integer";
    case argument_type::number:
      return "number";
    case argument_type::boolean:
      return "boolean";
  }
  return "string";
}

bool query_definition::yields_collection() const {
  return !(object.has_value() && !dataset);
}

bool is_placeholder(std::string_view s) {
  return placeholder_of(s).has_value();
}

result<query_definition> parse_query_definition(const boost::json::value& v, std::size_t index) {
  if (!v.is_object()) {
    json::object details;
    details["query"] = static_cast<std::uint64_t>(index);
    return make_error(std::string(config_invalid),
                      "query #" + std::to_string(index) +
                          ": must be a mapping with at least name, route and space",
                      std::move(details));
  }
  const json::object& obj = v.get_object();
  query_ref ref = ref_for(obj, index);

  // Unknown keys first: a misspelt optional field must not pass silently as "absent".
  for (const auto& kv : obj) {
    bool known = false;
    for (auto f : known_fields) {
      known = known || kv.key() == f;
    }
    if (!known) {
      return field_error(ref, kv.key(),
                         "unknown field (known: name, route, space, object, dataset, filter, "
                         "sort, arguments, authorize)");
    }
  }
  for (std::string_view required : {"name", "route", "space"}) {
    if (!obj.contains(required) || obj.at(required).is_null()) {
      return field_error(ref, required, "required");
    }
  }

  query_definition def;
  const json::value& name = obj.at("name");
  if (!name.is_string() || !is_query_name(std::string_view(name.get_string()))) {
    return field_error(ref, "name",
                       "must be dot-separated parts each matching ^[A-Za-z][A-Za-z0-9_]*$, at "
                       "most 180 characters");
  }
  def.name = std::string(name.get_string());

  if (auto it = obj.find("arguments"); it != obj.end()) {
    if (auto r = parse_arguments(it->value(), def, ref); !r) {
      return std::move(r).error();
    }
  }
  if (auto r = parse_route(obj.at("route"), def, ref); !r) {
    return std::move(r).error();
  }
  auto space = parse_selector(obj, "space", def, ref);
  if (!space) {
    return std::move(space).error();
  }
  def.space = std::move(*space);

  const bool has_object = obj.contains("object") && !obj.at("object").is_null();
  const bool has_dataset = obj.contains("dataset") && !obj.at("dataset").is_null();
  if (has_object) {
    auto object = parse_selector(obj, "object", def, ref);
    if (!object) {
      return std::move(object).error();
    }
    def.object = std::move(*object);
  }
  if (has_dataset) {
    if (!has_object) {
      return field_error(ref, "dataset",
                         "needs 'object' (without an object the query reads the space's objects "
                         "collection; omit 'dataset' for that)");
    }
    auto dataset = parse_selector(obj, "dataset", def, ref);
    if (!dataset) {
      return std::move(dataset).error();
    }
    def.dataset = std::move(*dataset);
  }

  if (auto it = obj.find("filter"); it != obj.end()) {
    if (auto r = parse_filter(it->value(), def, ref); !r) {
      return std::move(r).error();
    }
  } else if (auto r = parse_filter(nullptr, def, ref); !r) {
    return std::move(r).error();
  }
  if (auto it = obj.find("sort"); it != obj.end()) {
    if (auto r = parse_sort(it->value(), def, ref); !r) {
      return std::move(r).error();
    }
  }
  if (auto it = obj.find("authorize"); it != obj.end()) {
    auto rule = parse_access_rule(it->value(), "authorize");
    if (!rule) {
      return field_error(ref, "authorize",
                         rule.error().message.substr(std::string_view("authorize: ").size()));
    }
    def.authorize = std::move(*rule);
  }
  for (std::string_view selector : {"space", "object", "dataset", "filter"}) {
    if (auto it = obj.find(selector); it != obj.end()) {
      note_claims(it->value(), def.claims);
    }
  }
  if (!def.claims.empty()) {
    def.authorize.authenticated = true;  // only a signed-in caller has claims to bind
  }
  return def;
}

result<std::vector<query_definition>> parse_query_definitions(const boost::json::value& list) {
  std::vector<query_definition> out;
  if (list.is_null()) {
    return out;
  }
  if (!list.is_array()) {
    json::object details;
    details["field"] = "queries";
    return make_error(std::string(config_invalid), "queries: must be a list of queries",
                      std::move(details));
  }
  std::map<std::string, std::string> route_owner;
  std::set<std::string> names;
  const auto& items = list.get_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto def = parse_query_definition(items[i], i);
    if (!def) {
      return std::move(def).error();
    }
    query_ref ref{"query '" + def->name + "'", json::string(def->name)};
    if (!names.insert(def->name).second) {
      return field_error(ref, "name", "declared more than once");
    }
    auto [it, inserted] = route_owner.emplace(def->route, def->name);
    if (!inserted) {
      return field_error(ref, "route",
                         "route " + def->route + " is already used by query '" + it->second + "'");
    }
    out.push_back(std::move(*def));
  }
  return out;
}

}  // namespace weir::core

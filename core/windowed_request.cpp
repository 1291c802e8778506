// Windowed request validation (see windowed_request.hpp).
#include "core/windowed_request.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include "core/document_check.hpp"
#include "core/record_rules.hpp"

namespace weir::core {
namespace {

error invalid_field(std::string_view field, std::string message) {
  return make_error("request.invalid_field", std::move(message), {{"field", field}});
}

/// An integer in any JSON number form; nullopt for anything else (null is handled by callers).
std::optional<std::int64_t> as_integer(const boost::json::value& v) {
  if (v.is_int64()) {
    return v.get_int64();
  }
  if (v.is_uint64()) {
    auto u = v.get_uint64();
    return u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? std::numeric_limits<std::int64_t>::max()
               : static_cast<std::int64_t>(u);
  }
  if (v.is_double()) {
    double d = v.get_double();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9.2e18) {
      return static_cast<std::int64_t>(d);
    }
  }
  return std::nullopt;
}

const boost::json::value* present(const boost::json::object& body, std::string_view key) {
  const auto* v = body.if_contains(key);
  return v && !v->is_null() ? v : nullptr;
}

result<std::int64_t> read_integer(const boost::json::object& body, std::string_view key,
                                  std::int64_t absent) {
  const auto* v = present(body, key);
  if (!v) {
    return absent;
  }
  auto i = as_integer(*v);
  if (!i) {
    return invalid_field(key, std::string{key} + " must be an integer");
  }
  return *i;
}

result<bool> read_bool(const boost::json::object& body, std::string_view key) {
  const auto* v = present(body, key);
  if (!v) {
    return false;
  }
  if (!v->is_bool()) {
    return invalid_field(key, std::string{key} + " must be true or false");
  }
  return v->get_bool();
}

/// Step 4 for one id field.
result<std::string> read_id(const boost::json::object& body, std::string_view key) {
  const auto* v = present(body, key);
  if (v && !v->is_string()) {
    return invalid_field(key, std::string{key} + " must be a string");
  }
  if (!v || v->get_string().empty()) {
    return make_error("request.missing_field", std::string{key} + " required", {{"field", key}});
  }
  std::string s{v->get_string()};
  if (key == "objectId" && (s == "null" || s == "None" || s == "undefined")) {
    return make_error("object.id_required",
                      "objectId is \"" + s + "\": the client sent a serialized nil, not an id",
                      {{"field", key}});
  }
  if (auto ok = validate_id(s, key); !ok) {
    return std::move(ok).error();
  }
  return s;
}

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (auto s : items) {
    if (!out.empty()) {
      out.append(", ");
    }
    out.append(s);
  }
  return out;
}

}  // namespace

std::string_view to_string(windowed_scope s) {
  switch (s) {
    case windowed_scope::object:
      return "object";
    case windowed_scope::objects:
      return "objects";
    case windowed_scope::datasets:
      return "datasets";
  }
  return "object";
}

std::vector<std::string_view> accepted_fields(windowed_scope scope, bool subscribe) {
  std::vector<std::string_view> out;
  if (scope == windowed_scope::object) {
    out.push_back("objectId");
  }
  if (scope != windowed_scope::objects) {
    out.push_back("dataset");
  }
  for (auto f : {"filter", "sort", "limit", "offset", "includeTotal"}) {
    out.push_back(f);
  }
  if (subscribe) {
    out.push_back("mailboxCapacity");
    out.push_back("driftBudgetPercent");
  }
  out.push_back("projection");
  out.push_back("includeDeleted");
  return out;
}

result<windowed_request> parse_windowed_request(windowed_scope scope, bool subscribe,
                                                std::string space, std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return make_error("request.bad_json", "the body is empty: send a JSON object");
  }
  auto v = parse_json(body);
  if (!v) {
    // The protocol has one code for a body it cannot read, however deep or malformed.
    return make_error("request.bad_json", "the body is not valid JSON: " + v.error().message);
  }
  // Numbers JSON cannot carry (1e400) would compare as infinities and come back in errors and
  // echoes as a bare `Infinity`: refused as a bad value of the field that holds them.
  if (auto ok = check_document(v.value(), unbounded_sizes); !ok) {
    std::string field;
    if (const auto* p = ok.error().details.if_contains("path"); p && p->is_string()) {
      std::string_view path = p->get_string();
      path.remove_prefix(path.empty() ? 0 : 1);
      field = std::string{path.substr(0, path.find('/'))};
    }
    return make_error("request.invalid_field", ok.error().message, {{"field", field}});
  }
  return parse_windowed_request(scope, subscribe, std::move(space), v.value());
}

result<windowed_request> parse_windowed_request(windowed_scope scope, bool subscribe,
                                                std::string space,
                                                const boost::json::value& value) {
  const auto* body = value.if_object();
  if (!body) {
    return make_error("request.bad_json", "the body must be a JSON object");
  }
  // 3. The closed field set.
  auto accepted = accepted_fields(scope, subscribe);
  boost::json::array unknown;
  std::string names;
  for (const auto& kv : *body) {
    if (std::find(accepted.begin(), accepted.end(), std::string_view{kv.key()}) == accepted.end()) {
      unknown.push_back(boost::json::string{kv.key()});
      names.append(names.empty() ? "\"" : ", \"").append(kv.key()).append("\"");
    }
  }
  if (!unknown.empty()) {
    boost::json::array acc;
    for (auto f : accepted) {
      acc.push_back(boost::json::string{f});
    }
    // The message is built first: the order in which arguments are evaluated is unspecified, and
    // the details argument moves `unknown` away.
    auto message = std::string{unknown.size() == 1 ? "unknown field " : "unknown fields "} + names +
                   "; accepted fields: " + join(accepted);
    return make_error("request.unknown_field", std::move(message),
                      {{"fields", std::move(unknown)}, {"accepted", std::move(acc)}});
  }
  windowed_request r;
  r.scope = scope;
  r.subscribe = subscribe;
  r.space = std::move(space);
  // 4. Addressing.
  if (scope == windowed_scope::object) {
    auto id = read_id(*body, "objectId");
    if (!id) {
      return std::move(id).error();
    }
    r.object_id = std::move(id.value());
  }
  if (scope == windowed_scope::objects) {
    r.dataset = "objects";
  } else {
    auto ds = read_id(*body, "dataset");
    if (!ds) {
      return std::move(ds).error();
    }
    r.dataset = std::move(ds.value());
  }
  // 5. Filter.
  if (const auto* f = present(*body, "filter")) {
    if (!f->is_object()) {
      return invalid_field("filter", "filter must be an object");
    }
    auto parsed = filter::parse(*f);
    if (!parsed) {
      return std::move(parsed).error();
    }
    r.where = std::move(parsed.value());
    r.filter_json = *f;
  }
  // 6. Sort and the numbers.
  if (const auto* s = present(*body, "sort")) {
    auto parsed = sort_spec::parse(*s);
    if (!parsed) {
      return std::move(parsed).error();
    }
    r.order = std::move(parsed.value());
    for (const auto& k : s->as_array()) {
      r.sort_keys.emplace_back(k.as_string());
    }
  }
  auto limit = read_integer(*body, "limit", 0);
  if (!limit) {
    return std::move(limit).error();
  }
  auto offset = read_integer(*body, "offset", 0);
  if (!offset) {
    return std::move(offset).error();
  }
  auto total = read_bool(*body, "includeTotal");
  if (!total) {
    return std::move(total).error();
  }
  r.limit = *limit > 0 ? static_cast<std::uint64_t>(*limit) : 0;
  r.offset = *offset > 0 ? static_cast<std::uint64_t>(*offset) : 0;
  r.include_total = *total;
  if (subscribe) {
    auto mailbox = read_integer(*body, "mailboxCapacity", 0);
    if (!mailbox) {
      return std::move(mailbox).error();
    }
    auto drift = read_integer(*body, "driftBudgetPercent", 0);
    if (!drift) {
      return std::move(drift).error();
    }
    r.mailbox_capacity = *mailbox <= 0 ? default_mailbox_capacity
                                       : std::max<std::uint64_t>(min_mailbox_capacity, *mailbox);
    r.drift_budget_percent =
        *drift <= 0 ? default_drift_budget_percent : static_cast<std::uint64_t>(*drift);
    if (r.limit > 0 && r.sort_keys.empty()) {
      return invalid_field("limit", "a live window has to be ordered: send sort with limit");
    }
  }
  // 7. Projection.
  if (const auto* p = present(*body, "projection")) {
    auto parsed = projection::parse(*p);
    if (!parsed) {
      return std::move(parsed).error();
    }
    r.proj = std::move(parsed.value());
    r.projection_json = *p;
  }
  // 8. includeDeleted.
  auto deleted = read_bool(*body, "includeDeleted");
  if (!deleted) {
    return std::move(deleted).error();
  }
  r.include_deleted = *deleted;
  if (subscribe && r.include_deleted) {
    return invalid_field("includeDeleted", "includeDeleted is snapshot-only: use POST …/query");
  }
  boost::json::array key{boost::json::string{to_string(scope)},
                         boost::json::string{r.space},
                         boost::json::string{r.object_id},
                         boost::json::string{r.dataset},
                         r.filter_json,
                         boost::json::value_from(r.sort_keys),
                         r.offset,
                         r.limit,
                         r.include_total,
                         boost::json::string{r.proj.canonical()},
                         r.include_deleted};
  r.key = "w" + boost::json::serialize(key);
  return r;
}

std::string windowed_request::canonical_body() const {
  boost::json::object o;
  if (scope == windowed_scope::object) {
    o["objectId"] = object_id;
  }
  if (scope != windowed_scope::objects) {
    o["dataset"] = dataset;
  }
  if (!filter_json.is_null()) {
    o["filter"] = filter_json;
  }
  if (!sort_keys.empty()) {
    o["sort"] = boost::json::value_from(sort_keys);
  }
  if (limit) {
    o["limit"] = limit;
  }
  if (offset) {
    o["offset"] = offset;
  }
  if (include_total) {
    o["includeTotal"] = true;
  }
  if (subscribe) {
    o["mailboxCapacity"] = mailbox_capacity;
    o["driftBudgetPercent"] = drift_budget_percent;
  }
  if (!projection_json.is_null()) {
    o["projection"] = projection_json;
  }
  if (include_deleted) {
    o["includeDeleted"] = true;
  }
  return boost::json::serialize(o);
}

}  // namespace weir::core

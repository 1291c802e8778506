// weir::core query binding — a named query bound to a caller's arguments and claims (its key,
// its filter with every placeholder replaced, its page and sort), the definition's fingerprint,
// and the bound forms of property documents and windowed requests.
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include "core/query_definition.hpp"
#include "core/query_placeholders.hpp"
#include "core/rendezvous.hpp"
#include "core/windowed_request.hpp"

namespace weir::core {

using namespace query_detail;

std::string definition_fingerprint(const query_definition& def) {
  json::array sort;
  for (const auto& k : def.sort) {
    sort.push_back(json::string(k));
  }
  json::array args;
  for (const auto& [name, type] : def.arguments) {
    args.push_back(json::array{json::string(name), json::string(to_string(type))});
  }
  auto opt = [](const std::optional<std::string>& v) {
    return v ? json::value(json::string(*v)) : json::value(nullptr);
  };
  json::array parts{json::string(def.name), json::string(def.space), opt(def.object),
                    opt(def.dataset),       def.filter_template,     std::move(sort),
                    std::move(args)};
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(stable_hash(json::serialize(parts))));
  return hex;
}

result<bound_query> bind_query(const query_definition& def,
                               const std::vector<std::pair<std::string, std::string>>& arguments,
                               std::uint64_t page, std::uint64_t page_size,
                               const std::optional<std::string>& sort_by, bool descending,
                               const json::object& claims) {
  const std::string label = "query '" + def.name + "'";

  // The caller's values of the claims the definition names: part of the key, so two callers
  // share a result only when their rows are the same.
  json::object bound_claims;
  for (const auto& name : def.claims) {
    const auto* v = claims.if_contains(name);
    if (!v || !(v->is_string() || v->is_number() || v->is_bool())) {
      return make_error("auth.forbidden",
                        label + " needs the claim '" + name +
                            "' (a string, number or boolean) and the caller's token has none",
                        {{"query", def.name}, {"claim", name}});
    }
    bound_claims.emplace(name, *v);
  }

  std::map<std::string_view, std::string_view> given;
  for (const auto& [name, text] : arguments) {
    if (find_argument(def, name) == nullptr) {
      return argument_error(def, label + ": unknown argument '" + name + "'", name);
    }
    if (!given.emplace(name, text).second) {
      return argument_error(def, label + ": argument '" + name + "' given more than once", name);
    }
  }

  // Typed values in declaration order; they are what the key is made of.
  json::object typed;
  for (const auto& [name, type] : def.arguments) {
    auto it = given.find(name);
    if (it == given.end()) {
      return argument_error(def, label + ": missing argument '" + name + "'", name);
    }
    auto value = convert_argument(it->second, type);
    if (!value) {
      return argument_error(def,
                            label + ": argument '" + name + "': '" + std::string(it->second) +
                                "' is not a valid " + std::string(to_string(type)),
                            name);
    }
    typed.emplace(name, std::move(*value));
  }

  // Resolves a selector to an id; ids from arguments are checked because clients choose them.
  std::string failed_argument;
  bool failed_claim = false;
  auto resolve = [&](const std::string& selector) -> std::optional<std::string> {
    auto name = placeholder_of(selector);
    if (!name) {
      return selector;
    }
    auto claim = claim_of(*name);
    auto& from = claim ? bound_claims : typed;
    auto it = from.find(claim ? *claim : *name);
    failed_claim = claim.has_value();
    if (it == from.end()) {
      failed_argument = std::string(*name);
      return std::nullopt;
    }
    std::string id = id_text(it->value());
    if (!is_valid_id(id)) {
      failed_argument = std::string(*name);
      return std::nullopt;
    }
    return id;
  };
  auto bad_id = [&](std::string_view field) -> error {
    if (failed_claim) {
      return make_error("auth.forbidden",
                        label + ": the claim '" + failed_argument.substr(claims_prefix.size()) +
                            "' (" + std::string(field) + ") is not a valid id",
                        {{"query", def.name}, {"claim", failed_argument}});
    }
    return argument_error(def,
                          label + ": argument '" + failed_argument + "' (" + std::string(field) +
                              "): not a valid id (non-empty, at most 256 bytes, no control "
                              "characters)",
                          failed_argument);
  };

  auto space = resolve(def.space);
  if (!space) {
    return bad_id("space");
  }
  std::string object;
  std::string dataset = "objects";
  std::optional<std::string> single_id;
  if (def.object) {
    auto object_id = resolve(*def.object);
    if (!object_id) {
      return bad_id("object");
    }
    if (def.dataset) {
      auto dataset_id = resolve(*def.dataset);
      if (!dataset_id) {
        return bad_id("dataset");
      }
      object = std::move(*object_id);
      dataset = std::move(*dataset_id);
    } else {
      // The property document lives in the space's objects collection, keyed by the object id.
      single_id = std::move(*object_id);
    }
  }

  json::value bound_filter = bind_placeholders(def.filter_template, [&](std::string_view name) {
    if (auto claim = claim_of(name)) {
      auto it = bound_claims.find(*claim);
      return it == bound_claims.end() ? json::value(nullptr) : it->value();
    }
    auto it = typed.find(name);
    return it == typed.end() ? json::value(nullptr) : it->value();
  });
  auto where = filter::parse(bound_filter);
  if (!where) {
    json::object details;
    details["query"] = def.name;
    details["field"] = "filter";
    details["cause"] = where.error().code;
    return make_error(std::string(invalid_arguments), label + ": filter: " + where.error().message,
                      std::move(details));
  }

  auto order = sort_spec::parse(def.sort);
  if (!order) {
    return std::move(order).error();
  }
  if (sort_by && !sort_by->empty()) {
    if (sort_by->size() > max_sort_by_bytes || has_control_char(*sort_by)) {
      return argument_error(def,
                            label + ": sortBy must be at most 256 bytes without control characters",
                            "sortBy", "field");
    }
    order->prepend(sort_key{*sort_by, descending});
  }

  if (page_size == 0) {
    page = 0;  // unpaged: the page number changes nothing, so it must not split the key
  }

  json::array sort_text;
  for (const auto& k : order->keys()) {
    sort_text.push_back(json::array{json::string(k.path), k.descending ? "desc" : "asc"});
  }
  json::array key_parts{json::string(def.name), std::move(typed), page, page_size,
                        std::move(sort_text)};
  std::string claims_text;
  if (!bound_claims.empty()) {
    claims_text = json::serialize(bound_claims);
    key_parts.push_back(std::move(bound_claims));
  }

  bound_query out{std::move(*space),
                  std::move(object),
                  std::move(dataset),
                  std::move(single_id),
                  std::move(*where),
                  std::move(*order),
                  page,
                  page_size,
                  json::serialize(key_parts),
                  {def.name, arguments, sort_by, descending, definition_fingerprint(def),
                   std::move(claims_text)},
                  0,
                  0,
                  false,
                  nullptr,
                  json::serialize(bound_filter)};
  if (page_size > 0 && !out.single_id) {
    out.offset = page * page_size;
    out.limit = page_size;
    out.count = true;
  }
  return out;
}

std::string object_document_key(std::string_view object) {
  return "d" + json::serialize(json::array{"document", json::string{object}});
}

bound_query bind_object_document(std::string space, std::string object) {
  bound_query q;
  q.space = std::move(space);
  q.dataset = "objects";  // property documents live in the space's objects collection
  q.key = object_document_key(object);
  q.single_id = std::move(object);
  return q;
}

namespace {

/// What every bound form of a windowed request shares: its space, dataset, filter, sort and
/// whether it counts.
bound_query windowed_base(const windowed_request& req) {
  bound_query q;
  q.space = req.space;
  q.dataset = req.dataset;
  q.where = req.where;
  q.where_text = json::serialize(req.filter_json);
  q.order = req.order;
  q.count = req.include_total;
  return q;
}

}  // namespace

bound_query bind_windowed(std::shared_ptr<const windowed_request> req, std::string object) {
  auto q = windowed_base(*req);
  switch (req->scope) {
    case windowed_scope::object:
      q.object = req->object_id;
      q.offset = req->offset;
      q.limit = req->limit;
      q.key = req->key;
      break;
    case windowed_scope::objects:
      q.offset = req->offset;
      q.limit = req->limit;
      q.key = req->key;
      break;
    case windowed_scope::datasets: {
      // One object's part of the merge: its first offset + limit matches.
      q.object = std::move(object);
      q.limit = req->limit ? req->offset + req->limit : 0;
      json::array parts{"datasets-part",  json::string{req->dataset},
                        req->filter_json, json::value_from(req->sort_keys),
                        q.limit,          req->include_total};
      q.key = "w" + json::serialize(parts);
      break;
    }
  }
  if (q.limit == 0 && q.offset > 0) {
    q.limit = unbounded_limit;
  }
  q.windowed = std::move(req);
  return q;
}

bound_query bind_windowed_merge(std::shared_ptr<const windowed_request> req, bool member_part) {
  auto q = windowed_base(*req);
  if (member_part) {
    auto part = bind_windowed(req, "");
    q.limit = part.limit ? part.limit : unbounded_limit;
    q.key = "m" + part.key;
  } else {
    q.offset = req->offset;
    q.limit = req->limit ? req->limit : unbounded_limit;
    q.key = req->key;
  }
  q.windowed = std::move(req);
  return q;
}

}  // namespace weir::core

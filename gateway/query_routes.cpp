// Query routes: argument parsing, non-success QueryResults, introspection.
#include "gateway/query_routes.hpp"

#include "core/query_health.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "actors/query_catalog.hpp"
#include "core/query_result.hpp"
#include "core/url.hpp"

namespace weir::gateway {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::optional<std::uint64_t> to_count(const std::string& v) {
  if (v.empty() || v.size() > 15 || v.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoull(v);
}

core::error bad(std::string field, std::string message) {
  return core::make_error("query.invalid_arguments", std::move(message), {{"field", field}});
}

std::string with_status(std::string_view correlation_id, const core::query_result_status& st) {
  return core::encode_bare_query_result(correlation_id,
                                        core::encode_query_result_body(nullptr, nullptr, {}, st));
}

}  // namespace

core::result<route_request> parse_route_request(std::string_view query_string) {
  auto pairs = core::parse_query(query_string);
  if (!pairs) {
    return bad("query", "the query string has a bad percent-escape");
  }
  route_request r;
  for (auto& [k, v] : *pairs) {
    if (iequals(k, "page")) {
      auto n = to_count(v);
      if (!n) {
        return bad("page", "page must be a non-negative integer");
      }
      r.direct.page = *n;
    } else if (iequals(k, "pageSize")) {
      auto n = to_count(v);
      if (!n || *n > 1000) {
        return bad("pageSize", "pageSize must be an integer from 0 to 1000");
      }
      r.direct.page_size = *n;
    } else if (iequals(k, "sortBy")) {
      r.direct.sort_by = v;
    } else if (iequals(k, "sortDirection")) {
      r.direct.descending = iequals(v, "desc");
    } else if (iequals(k, "transferMode")) {
      // Weir's extension on the direct transports: full snapshots unless `delta` or `patch`.
      auto mode = core::parse_transfer_mode(v);
      r.direct.mode = mode == core::transfer_mode::legacy ? core::transfer_mode::full : mode;
    } else if (iequals(k, "waitForFirstResult")) {
      r.wait_for_first_result = iequals(v, "true");
    } else if (iequals(k, "waitForFirstResultTimeout")) {
      char* end = nullptr;
      double s = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(s >= 0) || s > 3600) {
        return bad("waitForFirstResultTimeout", "waitForFirstResultTimeout is seconds, 0 to 3600");
      }
      r.wait_timeout_s = s;
    } else if (k == "x-cratis-microservice") {
      continue;  // routing hint of the Arc client (§12)
    } else {
      r.direct.arguments.emplace_back(k, v);
    }
  }
  return r;
}

std::string not_ready_result(std::string_view correlation_id) {
  core::query_result_status st;
  st.is_ready = false;
  return with_status(correlation_id, st);
}

std::string invalid_result(std::string_view correlation_id, const core::error& e) {
  core::query_result_status st;
  boost::json::array members;
  if (auto* f = e.details.if_contains("argument")) {
    members.push_back(*f);
  } else if (auto* f2 = e.details.if_contains("field")) {
    members.push_back(*f2);
  }
  // Severity 3 is Error in Arc's ValidationResultSeverity (Unknown, Information, Warning, Error).
  st.validation_results.push_back(boost::json::object{{"severity", 3},
                                                      {"message", e.message},
                                                      {"members", std::move(members)},
                                                      {"reason", "malformedRequest"}});
  return with_status(correlation_id, st);
}

std::string unauthorized_result(std::string_view correlation_id) {
  core::query_result_status st;
  st.is_authorized = false;
  return with_status(correlation_id, st);
}

std::string failed_result(std::string_view correlation_id, std::string_view message) {
  core::query_result_status st;
  st.exception_messages.emplace_back(message);
  return with_status(correlation_id, st);
}

std::string introspection_json(const actors::query_catalog& catalog) {
  boost::json::array out;
  for (const auto& d : catalog.all()) {
    auto dot = d.name.rfind('.');
    boost::json::object props;
    boost::json::array required;
    for (const auto& [name, type] : d.arguments) {
      props[name] = boost::json::object{{"type", std::string{core::to_string(type)}}};
      required.push_back(boost::json::string{name});
    }
    out.push_back(boost::json::object{
        {"name", dot == std::string::npos ? d.name : d.name.substr(dot + 1)},
        {"namespace", dot == std::string::npos ? std::string{} : d.name.substr(0, dot)},
        {"fullyQualifiedName", d.name},
        {"route", d.route},
        {"type", "observable"},
        {"isEnumerable", d.yields_collection()},
        {"documentationSummary", ""},
        {"argumentsSchema",
         boost::json::object{{"type", "object"}, {"properties", props}, {"required", required}}},
    });
  }
  // The built-in health feed (arc-hub §11) is an observable query too.
  out.push_back(boost::json::object{
      {"name", "ObserveHealth"},
      {"namespace", "QueryHealth"},
      {"fullyQualifiedName", std::string{core::query_health_name}},
      {"route", std::string{core::query_health_route}},
      {"type", "observable"},
      {"isEnumerable", false},
      {"documentationSummary",
       "The caller's own hub connections and subscriptions, updated as they change."},
      {"argumentsSchema", boost::json::object{{"type", "object"},
                                              {"properties", boost::json::object{}},
                                              {"required", boost::json::array{}}}},
  });
  return boost::json::serialize(out);
}

}  // namespace weir::gateway

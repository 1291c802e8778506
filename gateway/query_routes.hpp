// weir::gateway query routes — what a named query's HTTP route and the introspection route
// answer, as pure request → response pieces (arc-hub §1, §10): query-string arguments with the
// reserved paging names, the not-ready/invalid QueryResult forms, and the query list.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "actors/direct_query.hpp"
#include "core/query_definition.hpp"
#include "core/result.hpp"

namespace weir::actors {
class query_catalog;
}

namespace weir::gateway {

/// A query-string request on a query's route: its arguments, paging and the snapshot knobs.
struct route_request {
  actors::direct_request direct;
  bool wait_for_first_result = false;
  std::optional<double> wait_timeout_s;  ///< waitForFirstResultTimeout, seconds
};

/// Parses `a=1&page=2&pageSize=10&sortBy=x&sortDirection=desc&waitForFirstResult=true` (and
/// Weir's `transferMode=patch|delta`). The reserved names (case-insensitive) are not arguments.
/// Error: query.invalid_arguments.
core::result<route_request> parse_route_request(std::string_view query_string);

/// A QueryResult that is not a success: not ready (202), or invalid (400, with a
/// `malformedRequest` validation result naming what is wrong), or failed (exception message), or
/// unauthorized.
std::string not_ready_result(std::string_view correlation_id);
std::string invalid_result(std::string_view correlation_id, const core::error& e);
std::string failed_result(std::string_view correlation_id, std::string_view message);
/// isAuthorized:false: the caller may not run the query (arc-hub §10), or its credential expired.
std::string unauthorized_result(std::string_view correlation_id);

/// GET /.cratis/queries: every named query with its route, arguments schema and shape.
std::string introspection_json(const actors::query_catalog& catalog);

}  // namespace weir::gateway

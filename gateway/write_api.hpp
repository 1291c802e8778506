// weir::gateway write API routing — turns `/v1/spaces/...` requests into write_commands.
// Pure request → command mapping; the session does the I/O.
#pragma once

#include <string>
#include <string_view>

#include "actors/write_command.hpp"
#include "core/result.hpp"

namespace weir::gateway {

/// What a /v1/spaces path names, before the body is looked at.
struct write_route {
  actors::write_kind kind;
  actors::write_command cmd;  ///< ids filled, body empty
};

/// Matches `method path` against the write API. Errors: route.not_found (404),
/// method.not_allowed (405, details.allow = the allowed methods), request.invalid_field for a
/// bad percent-escape. Returns nullopt-like error for paths outside /v1/spaces.
core::result<write_route> match_write_route(std::string_view method, std::string_view path);

/// Parses a request body as JSON, as deep as a record may nest (core::parse_json: request.bad_json,
/// request.invalid_utf8, record.too_deep). The write's other checks follow in runtime::submit.
core::result<boost::json::value> parse_body(std::string_view body);

}  // namespace weir::gateway

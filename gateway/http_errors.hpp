// weir::gateway HTTP error answers: the one place that maps a core::error code to an HTTP
// status and renders {"error":{"code","message","details"}}.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "core/result.hpp"

namespace weir::gateway {

/// The HTTP status for an error code (400 for validation, 404 for not found, 413, 503…).
unsigned status_for(const core::error& e);

/// windowed-subscribe §3's 404 for a space that does not exist, worded as the reference words it.
core::error space_not_found(const std::string& space);

/// 413 request.too_large: a body over http.maxBodyBytes (`limit`).
core::error body_too_large(std::size_t limit);

/// The JSON error envelope.
std::string error_body(const core::error& e);

/// What the envelope holds under "error": {"code","message","details"} (details only when set).
boost::json::object error_object(const core::error& e);

/// The code of a body error_body() wrote ("" for any other body): what the refusal's log line
/// names.
std::string_view error_code_of(std::string_view body);

}  // namespace weir::gateway

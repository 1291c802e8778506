// weir::core document checks — the checks of core/document_limits, on trees and on text, and the
// measure JSON Patch keeps while it applies. None of them recurses: a document of any depth is
// refused without touching the stack.
#pragma once

#include <cstddef>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/value.hpp>

#include "core/document_limits.hpp"
#include "core/result.hpp"

namespace weir::core {

/// Boost.JSON parse options for documents: max_depth = max_document_depth. Boost's default (32)
/// is lower than what the write API accepts, so a reader using it would not see deep records.
boost::json::parse_options document_parse_options();

/// Checks a document tree against `limits` without recursing: nesting depth (`record.too_deep`),
/// members of each object and elements of each array (`record.too_many_members`), member name
/// length (`record.key_too_long`), numbers that are not finite (`record.invalid_number`: what
/// Boost.JSON makes of 1e400, a 400-digit integer, an $inc past the largest double) and member
/// names and strings that are not UTF-8 (`request.invalid_utf8`). Size is not checked here: the
/// writer checks the exact serialized size. `depth_offset`: how deep `doc` sits in its document.
/// Errors carry details {"path": <JSON Pointer of the offending value>, "max": <the limit>}.
result<void> check_document(const boost::json::value& doc, const document_limits& limits,
                            std::size_t depth_offset = 0);
/// The same for a record (an object at the top of its document).
result<void> check_document(const boost::json::object& doc, const document_limits& limits);

/// The same checks on JSON text, plus its size against max_bytes (`record.too_large`), without
/// building a document (a SAX pass): what loaders use on rows they did not write themselves.
/// Text that is not JSON is `request.bad_json` (`request.invalid_utf8` when that is why).
result<void> check_document_text(std::string_view text, const document_limits& limits);

/// Parses JSON text as deeply as documents nest, with no other check: request.bad_json,
/// request.invalid_utf8 (when that is why it is not JSON), record.too_deep. For bodies that
/// check_write or the shard checks next. `extra_depth`: levels allowed beyond a document's, for
/// a body that carries a whole document one level down (an AG-UI RunAgentInput's `state`).
result<boost::json::value> parse_json(std::string_view text, std::size_t extra_depth = 0);

/// Parses a client's document (a record, an update, a patch) with document_parse_options and
/// check_document. Errors: request.bad_json, request.invalid_utf8, record.too_deep and the
/// others of check_document. Size is left to the writer (the body was bounded on arrival).
result<boost::json::value> parse_document(std::string_view text, const document_limits& limits);

/// What a value adds to a document: a lower bound of its serialized size, and its nesting depth
/// (0 for a scalar). Iterative; costs one pass over the value.
struct document_measure {
  std::size_t bytes = 0;
  std::size_t depth = 0;
};
document_measure measure_document(const boost::json::value& v);

/// The error for a record whose serialized size `bytes` exceeds `limits.max_bytes`.
error record_too_large(std::size_t bytes, const document_limits& limits, std::string_view id);

}  // namespace weir::core

// weir::core record rules — what makes a client-sent JSON body a storable record, shared by PUT
// and batch upsert: the id's shape, the id/path agreement, and the server-owned `_ver` stamp.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/result.hpp"

namespace weir::core {

/// Longest accepted record id, in bytes.
inline constexpr std::size_t max_record_id_size = 256;

/// Checks an id: non-empty, at most max_record_id_size bytes, no control characters (bytes below
/// 0x20, including '\0', and 0x7f): otherwise `request.invalid_field`; UTF-8 text: otherwise
/// `request.invalid_utf8`. Details {"field": field_name}.
result<void> validate_id(std::string_view id, std::string_view field_name);

/// The id rules of normalize_record, without changing anything (a write checked before it is
/// forwarded to its owner).
result<void> check_record_id(const boost::json::object& body,
                             std::optional<std::string_view> path_id);

/// Turns an upsert body into a record:
///   - not an object → `request.not_object`;
///   - "id" present but not a string, or not a valid id → `request.invalid_field` {"field":"id"};
///   - "id" missing → `request.missing_field` {"field":"id"}, unless `path_id` is given, in which
///     case it is filled from `path_id` (validated as field "id");
///   - "id" present and different from `path_id` → `record.id_mismatch` {"id", "pathId"};
///   - a client-sent "_ver" is dropped (the server stamps it); other members keep their order.
result<boost::json::object> normalize_record(boost::json::value body,
                                             std::optional<std::string_view> path_id);

/// Sets `_ver` to {"id": version_id}, replacing any existing one, with "id" (when present) as the
/// first member and "_ver" as the last; other members keep their relative order. Cheap when the
/// record is already in that shape (the usual case after normalize_record).
void stamp_version(boost::json::object& record, std::string_view version_id);

/// Whether serialized JSON holds the character U+0000 in a string (the escape `\u0000`, not an
/// escaped backslash followed by "u0000"). PostgreSQL's jsonb cannot store it.
bool contains_nul_character(std::string_view json);

/// A batch body's own shape: an object (`request.not_object`) with "upsert" and/or "delete"
/// (`request.missing_field`) and no other member (`request.unknown_field` {fields, accepted}).
/// The members' contents are the caller's to check.
result<void> check_batch_fields(const boost::json::value& body);

}  // namespace weir::core

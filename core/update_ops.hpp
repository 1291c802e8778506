// weir::core update operators — the `$set` / `$unset` / `$inc` bodies of a record PATCH.
// Owns their grammar (parse_update) and their effect on a stored record (apply_update). Paths are
// split once at parse time; apply is atomic, so a failed PATCH never leaves a half-applied record.
#pragma once

#include <cstdint>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/document_check.hpp"
#include "core/json_path.hpp"
#include "core/result.hpp"

namespace weir::core {

enum class update_op_kind : std::uint8_t { set, unset, inc };

/// One operator applied to one path.
struct update_op {
  update_op_kind kind = update_op_kind::set;
  json_path path;
  /// The assigned value ($set) or the increment ($inc, always a number); null for $unset.
  boost::json::value value;
};

/// A parsed update. No two ops touch the same path or a path and one of its ancestors, so the
/// ops commute and each can be checked against the record before any is applied.
struct update_spec {
  std::vector<update_op> ops;
};

/// Parses a PATCH body such as {"$set":{"a.b":1},"$unset":{"c":true},"$inc":{"n":2}}.
/// Errors (all 400):
///   - body not an object → `request.not_object`;
///   - a key other than $set/$unset/$inc → `update.unknown_operator` {"operator"};
///   - an operator's value not an object → `update.invalid` {"operator"};
///   - an $inc value not a number → `update.invalid` {"path"};
///   - no ops at all (including {"$set":{}}) → `update.empty`;
///   - a path that is or lies under "id" or "_ver" → `update.forbidden_field` {"path"};
///   - a malformed dotted path → `request.invalid_field` {"field"};
///   - the same path twice, or a path and its ancestor ("a" and "a.b"), in any operators →
///     `update.conflict` {"path", "conflictsWith"}. (The $unset value is ignored, as in Mongo.)
///   - a path of more than max_document_depth segments, or a $set value that would nest past
///     it where the path puts it → `record.too_deep`; a value outside `limits` otherwise → the
///     codes of check_document (its details' "path" is then inside the value).
/// Checked before anything is built, so `{"$set":{"a.a.a…":1}}` with 100,000 segments costs a
/// split of its text and nothing more.
result<update_spec> parse_update(const boost::json::value& body,
                                 const document_limits& limits = {});

/// Applies `spec` to `doc`. $set and $inc create missing intermediate objects; $inc of a missing
/// field sets it to the increment; $unset of a missing path is a no-op. A numeric segment on an
/// existing array addresses an element ($set past the end pads with null, $unset sets the element
/// to null, as Mongo does). Integer $inc stays integral: int64 + int64 is int64 unless it
/// overflows (then double); with a uint64 operand the exact sum is int64 if it fits, else uint64
/// if it fits, else double; any double operand gives a double.
/// Errors (400, details {"path"}): `update.type_mismatch` for $inc of a non-number, or a
/// $set/$inc path that has to go through a scalar (or through an array with a non-index
/// segment); `update.index_out_of_range` for an index more than max_array_padding past an
/// array's end (found by fuzzing: `{"$set":{"a.999999999":1}}` padded a billion nulls);
/// `record.invalid_number` for an $inc whose sum is past the largest double.
/// Atomic: on error `doc` is unchanged. The caller checks the result against its limits (an
/// object may have gained a member past max_members, the record grown past max_bytes).
result<void> apply_update(const update_spec& spec, boost::json::object& doc);

/// How far past an array's end a $set/$inc index may reach (the gap is padded with null).
inline constexpr std::size_t max_array_padding = 1024;

}  // namespace weir::core

// weir::core json patch — RFC 6902 JSON Patch application, in the strict mode of the RFC (an
// unknown op fails the patch) and the lenient mode of seed 004 / AG-UI (an unknown op is dropped
// with a warning). Atomic in both: a patch that fails leaves the document exactly as it was.
// Unknown members on an operation are ignored, never an error. Written here rather than taken
// from a library because Weir's documents are Boost.JSON values: nlohmann's patch (the one in
// Debian) would convert every document twice per write.
#pragma once

#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "core/document_check.hpp"
#include "core/filter.hpp"  // json_equal: the filter's equality is RFC 6902 §4.6's for `test`
#include "core/result.hpp"

namespace weir::core {

enum class patch_mode { strict, lenient };

struct patch_outcome {
  /// Lenient mode: one line per operation dropped because its op is not RFC 6902's.
  std::vector<std::string> warnings;
};

/// What `patched` returns: the new document and the warnings of its patch.
struct patched_document {
  boost::json::value doc;
  patch_outcome outcome;
};

/// `doc` (taken by value: the caller's copy is the working copy) with `patch` applied; the same
/// errors as apply_patch. For callers that keep the original anyway, this costs one copy fewer.
result<patched_document> patched(boost::json::value doc, const boost::json::value& patch,
                                 patch_mode mode = patch_mode::strict,
                                 const document_limits& limits = {});

/// Checks `patch` without a document: its shape, its pointers and its values (against `limits`),
/// with the errors apply_patch gives for them. What the node that receives a write checks before
/// it forwards it.
result<void> check_patch(const boost::json::value& patch, patch_mode mode,
                         const document_limits& limits);

/// Applies `patch` to `doc`, atomically. Errors (details {index, op, path} where they apply):
/// patch.invalid (not an array of operation objects, a missing or mistyped member, an unknown
/// op in strict mode), patch.invalid_pointer, patch.path_not_found (a target, `from` or parent
/// that does not exist), patch.out_of_bounds (an array index past the end), patch.invalid_target
/// (a member name on an array, a token on a scalar, removing the whole document),
/// patch.move_into_child, patch.test_failed.
///
/// Bounded by `limits` while it applies, so that a small patch cannot make a huge document
/// (20 `copy` ops doubling an array make it a million times larger) or spend unbounded time:
///   - a pointer with more tokens than max_document_depth, or an op that would nest a value
///     deeper than max_document_depth → record.too_deep {index, path};
///   - the document growing past limits.max_bytes (a lower bound of its serialized size, kept
///     as the ops apply), or the values the ops copy, move or replace adding up to more than
///     four times limits.max_bytes (the work one patch may do) → record.too_large {index}.
/// The exact size of the result is the writer's to check, as for any write.
result<patch_outcome> apply_patch(boost::json::value& doc, const boost::json::value& patch,
                                  patch_mode mode = patch_mode::strict,
                                  const document_limits& limits = {});

}  // namespace weir::core

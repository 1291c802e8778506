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
                                 patch_mode mode = patch_mode::strict);

/// Applies `patch` to `doc`, atomically. Errors (details {index, op, path} where they apply):
/// patch.invalid (not an array of operation objects, a missing or mistyped member, an unknown
/// op in strict mode), patch.invalid_pointer, patch.path_not_found (a target, `from` or parent
/// that does not exist), patch.out_of_bounds (an array index past the end), patch.invalid_target
/// (a member name on an array, a token on a scalar, removing the whole document),
/// patch.move_into_child, patch.test_failed.
result<patch_outcome> apply_patch(boost::json::value& doc, const boost::json::value& patch,
                                  patch_mode mode = patch_mode::strict);

}  // namespace weir::core

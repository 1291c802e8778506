// weir::core::transfer_mode — how a hub subscription ships successive results (Arc hub §5), and
// which members each emission carries. The per-subscription baseline itself lives with the caller.
#pragma once

#include <string_view>

namespace weir::core {

/// The `transferMode` of a SubscriptionRequest. `legacy` is what an absent or unrecognised value
/// selects: full data plus a change set on every emission. `patch` is Weir's addition (arc-hub
/// decision 9): a single document's later emissions carry an RFC 6902 `patch` instead of
/// `data`; a collection asked for `patch` behaves as `delta`.
enum class transfer_mode { legacy, full, delta, patch };

/// Parses the `transferMode` text, case-insensitively (`"Delta"` is delta). Unknown text, including
/// the empty string, is legacy by the protocol's rule, never an error.
transfer_mode parse_transfer_mode(std::string_view text);

/// The wire spelling (`"full"`, `"delta"`, `"patch"`); legacy has none and yields `""`.
std::string_view to_string(transfer_mode mode);

/// Which QueryResult members one emission carries (§5).
struct emission_shape {
  bool data = true;         ///< `data` is written (the full snapshot, or the scalar/object)
  bool change_set = false;  ///< `changeSet` is written, computed against the subscription baseline
  bool patch = false;       ///< `patch` is written: an RFC 6902 patch from the baseline document
};

/// Decides the shape of one emission. `data_is_array` says whether the rendered data is a JSON
/// array (only arrays ever get change sets); `first_emission` is true for the first emission of a
/// subscription or of a new revision, when there is no baseline yet.
/// - non-array data: data, never a change set, in every mode; in `patch` mode data first, then
///   a patch without data (except when the document appeared or went: that is a new baseline,
///   which the caller sends as a first emission);
/// - full: data, no change set;
/// - delta (and patch, for arrays): data without change set first, then change set without data;
/// - legacy: data and change set every time (the first against an empty baseline).
emission_shape plan_emission(transfer_mode mode, bool data_is_array, bool first_emission);

}  // namespace weir::core

// weir::core::transfer_mode — how a hub subscription ships successive results (Arc hub §5), and
// which members each emission carries. The per-subscription baseline itself lives with the caller.
#pragma once

#include <string_view>

namespace weir::core {

/// The `transferMode` of a SubscriptionRequest. `legacy` is what an absent or unrecognised value
/// selects: full data plus a change set on every emission.
enum class transfer_mode { legacy, full, delta };

/// Parses the `transferMode` text, case-insensitively (`"Delta"` is delta). Unknown text, including
/// the empty string, is legacy by the protocol's rule, never an error.
transfer_mode parse_transfer_mode(std::string_view text);

/// The wire spelling (`"full"`, `"delta"`); legacy has none and yields `""`.
std::string_view to_string(transfer_mode mode);

/// Which QueryResult members one emission carries (§5).
struct emission_shape {
  bool data = true;         ///< `data` is written (the full snapshot, or the scalar/object)
  bool change_set = false;  ///< `changeSet` is written, computed against the subscription baseline
};

/// Decides the shape of one emission. `data_is_array` says whether the rendered data is a JSON
/// array (only arrays ever get change sets); `first_emission` is true for the first emission of a
/// subscription or of a new revision, when there is no baseline yet.
/// - non-array data: data, never a change set, in every mode;
/// - full: data, no change set;
/// - delta: data without change set first, then change set without data;
/// - legacy: data and change set every time (the first against an empty baseline).
emission_shape plan_emission(transfer_mode mode, bool data_is_array, bool first_emission);

}  // namespace weir::core

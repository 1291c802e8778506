// Shared by the tests of passes and index builds over a large dataset (window_scan_test.cpp,
// named_filter_index_test.cpp): the seeded dataset, the metric that counts passes, and a wait
// for the loader threads' builds.
#pragma once

#include <cstdint>
#include <string>

#include "apps/node.hpp"

namespace weir::test {

/// Records r0…r39999 of t/<object>/items, {"n": i, "tag": "early"}, the last ten (n ≥ 39990)
/// "late", written through the batch API 10,000 at a time.
inline constexpr int seeded_records = 40000;
inline constexpr int late_from = 39990;
void seed_tagged_records(std::uint16_t port, const std::string& object = "c");

/// weir_dataset_passes_total{kind=...} on /metrics ("index" or "filter").
double dataset_passes(std::uint16_t port, const std::string& kind);

/// Until no index build runs on `node`'s loader threads (its index is then in the unit's
/// mailbox, ahead of any later request); fails the test after 30 s.
void wait_for_index_builds(app::node& node);

}  // namespace weir::test

// weir::core::window_delta — how one write changed a window (the rows a query shows, in order):
// which rows left and why, which came in or changed and where they now stand. Built once per
// write per window on the owner of the data; a gateway that holds the old window turns it into
// the new one with it (apply_window_delta), and encoders turn it into protocol frames.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/change_ops.hpp"
#include "core/record.hpp"

namespace weir::core {

/// Why a row left a window (windowed-subscribe §6).
enum class removal_reason : std::uint8_t {
  deleted,       ///< the record (or its object) is gone
  filtered_out,  ///< it no longer matches the filter
  displaced,     ///< it still matches but no longer falls inside the window
};

std::string_view to_string(removal_reason r);

struct window_removal {
  record_ptr rec;  ///< the version the window showed
  removal_reason reason = removal_reason::displaced;
};

struct window_upsert {
  std::size_t index = 0;  ///< its place in the window after the write
  record_ptr rec;
  bool added = false;  ///< new to the window (else: a new version of a row it showed)
  /// The write's ops on this record; null for a row that only moved in (a backfill or a shift),
  /// which the protocol ships without ops.
  std::shared_ptr<const change_ops> ops;
};

struct window_delta {
  std::vector<window_removal> removed;  ///< in the window's old order
  std::vector<window_upsert> upserts;   ///< ascending `index`
  std::optional<std::uint64_t> total;   ///< the matches in all, when the window counts them

  bool empty() const { return removed.empty() && upserts.empty(); }
};

/// Applies `d` to `rows` (the window before the write): drops the removed rows and the old
/// versions of updated ones, then puts every upsert at its index. Rows that did not change keep
/// their relative order, which is what makes indexes in the new window enough.
void apply_window_delta(std::vector<record_ptr>& rows, const window_delta& d);

}  // namespace weir::core

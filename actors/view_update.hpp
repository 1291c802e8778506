// weir::actors view updates — what the owner of a unit tells the actor that encodes a query
// (and, through a watch, a gateway's copy of it): the query's rows once, then one update per
// durable write that changed them. A bounded query (a window: offset and limit) gets its window
// and window deltas, computed on the owner against its indexes, so a gateway holds only the
// window; an unbounded one gets every match and each write's matching changes. CAF-free: the
// cluster layer serializes these.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/change_ops.hpp"
#include "core/record.hpp"
#include "core/window_delta.hpp"

namespace weir::actors {

/// One record's change as an unbounded query sees it.
struct view_change {
  core::record_ptr before;    ///< the old version if it matched, else null
  core::record_ptr after;     ///< the new version if it matches, else null
  core::doc_ptr before_doc;   ///< parsed `before`, when the owner had it (may be null)
  core::doc_ptr after_doc;    ///< parsed `after`, when the owner had it (may be null)
  bool after_exists = false;  ///< the record still exists (it was filtered out, not deleted)
  std::shared_ptr<const core::change_ops> ops;
};

/// A query's rows as of the unit's durable write `seq`.
struct view_snapshot {
  std::uint64_t seq = 0;
  /// Bounded: the window, in order. Unbounded: every match, in any order.
  std::vector<core::record_ptr> rows;
  std::optional<std::uint64_t> total;  ///< the number of matches, when the query counts them
};

/// What the durable write `seq` did to a query's rows.
struct view_update {
  std::uint64_t seq = 0;
  std::string version_id;
  /// The object was deleted (its records went with it): windowed events carry versionId "",
  /// and per-object windowed streams close with `object_deleted` after this update.
  bool object_deleted = false;
  /// The property document went with its object (the `objects` collection's side of a delete):
  /// windowed events carry versionId "" (windowed-subscribe §6 "Object deletion").
  bool synthetic = false;
  std::shared_ptr<const core::window_delta> delta;          ///< bounded queries
  std::shared_ptr<const std::vector<view_change>> changes;  ///< unbounded queries
  std::optional<std::uint64_t> total;
  /// When the write reached this node (steady clock, ns): staged by the owner's shard, or the
  /// update's arrival from the owner on a member that serves another's unit (steady clocks of
  /// two machines are not comparable). Frames carry it so sessions can time write→frame.
  std::int64_t origin_ns = 0;
};

}  // namespace weir::actors

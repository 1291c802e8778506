// weir::core::window_view — one bounded window kept exact as writes arrive: the records of a
// dataset that match a filter, in one order, at ranks [offset, offset + limit). It reads a shared
// order_index over every record of the dataset (all windows with the same sort share one), and
// holds only its own rows plus one look-ahead row.
//
// Exactness (windowed-subscribe, Decision 2): when a held row leaves, the next match is read from
// the index, so after every write the window equals a fresh query with the same filter, sort,
// offset and limit. Rows entering or leaving the ranks before the window shift it, also exactly.
// Cost per write: O(log N) per change plus the scan for a replacement row, which is one step
// with no filter and ~1/selectivity records (each parsed once) with one; plus O(window) to diff
// the window once per write. Scans read only the ranks where matches can be (core/match_spans)
// when the filter bounds the index's first key (or fixes it and bounds the second).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/filter.hpp"
#include "core/first_matches.hpp"
#include "core/match_spans.hpp"
#include "core/order_index.hpp"
#include "core/window_delta.hpp"

namespace weir::core {

/// One record's change within a write, with what windows need, read once by the writer.
struct record_step {
  record_ptr before;                                ///< null: created
  record_ptr after;                                 ///< null: deleted
  const boost::json::object* before_doc = nullptr;  ///< set when `before` is
  const boost::json::object* after_doc = nullptr;   ///< set when `after` is
  const sort_position* before_pos = nullptr;        ///< in the index's order; set with `before`
  const sort_position* after_pos = nullptr;         ///< in the index's order; set with `after`
  std::shared_ptr<const change_ops> ops;

  const std::string& id() const { return after ? after->id : before->id; }
};

/// The changes of one write in one dataset, by record id: what decides a removal's reason and
/// which rows get the write's ops.
using write_steps = std::unordered_map<std::string_view, const record_step*>;

class window_view {
 public:
  using index = order_index<record_ptr>;

  /// `limit` > 0. `count` keeps the number of matches (Arc paging, includeTotal).
  window_view(const index& idx, filter where, std::uint64_t offset, std::uint64_t limit,
              bool count);

  /// Computes the window from the index (at creation; the index must be current).
  /// `known_matches`: the number of matches, when the dataset knows it (another window with
  /// the same filter, a kept count, a pass, an index's ranks); it must be exact: the walk then
  /// stops once the window and its look-ahead are full, or at the last match
  /// (O(offset + limit matches)), instead of counting every record (O(N) filter evaluations),
  /// and a count too small would leave matches out for good.
  /// `max_reads`: the most index entries the walk may read. Past it with the window and its
  /// look-ahead full (and the count known, or not wanted) the window stands; otherwise the walk
  /// gives up and returns false, and the window must not be used until filled again (the shard
  /// then finds the rows on a loader thread, first_matches, rather than hold the unit's writes
  /// for the rest of the walk).
  bool fill(std::optional<std::uint64_t> known_matches = std::nullopt,
            std::size_t max_reads = std::numeric_limits<std::size_t>::max());

  /// Computes the window from matches found by a pass over the dataset, brought up to date
  /// (first_matches, over this window's filter and the index's order; the index must be current).
  /// Reads the index only when the rows found end before the window's (writes since the pass
  /// took some out, or the offset lies past what the pass kept): then from the pass's bound to
  /// the window's last row, or to the last match (the count is exact). The total is
  /// `found.count()`.
  void fill(const first_matches& found);

  /// Applies one record's change; the index already reflects it (and every earlier change of
  /// the write). Returns false when the change cannot concern this window (neither side
  /// matches), which is the common case for other filters.
  bool apply(const record_step& s);

  /// After the last change of a write: what the write did to the visible rows, or nullopt when
  /// they did not change (a total that changed alone gives an empty delta with `total` set).
  std::optional<window_delta> end_write(const write_steps& steps);

  /// The visible rows, in order.
  std::vector<record_ptr> visible() const;

  std::optional<std::uint64_t> total() const {
    return count_ ? std::optional<std::uint64_t>{matches_} : std::nullopt;
  }
  std::uint64_t offset() const { return offset_; }
  std::uint64_t limit() const { return limit_; }
  const filter& where() const { return where_; }
  /// Rows held (the visible ones and the look-ahead).
  std::size_t held() const { return held_.size(); }

 private:
  struct held_row {
    record_ptr rec;
    sort_position pos;
  };

  bool matches(const record& r) const;
  bool matches(const boost::json::object& doc) const { return match_all_ || where_.matches(doc); }
  held_row make_row(const record_ptr& r) const;
  /// Index of the held row with `pos`'s id, or held_.size().
  std::size_t find_held(const sort_position& pos) const;
  void insert_held(held_row row);
  /// The walk of fill() from rank `from`, `skipped` matches of the offset and `found` matches
  /// already behind it.
  bool walk_fill(std::size_t from, std::uint64_t skipped, std::uint64_t found,
                 std::optional<std::uint64_t> known_matches, std::size_t max_reads);
  /// Appends matches after `from` (exclusive; the index's start when null) until the window and
  /// its look-ahead are full or the index ends.
  void backfill(const sort_position* from);
  /// Calls `visit(iterator)` on each entry that may match at rank `from` or later, in order,
  /// until it returns false; true when the entries ran out first.
  template <class Visit>
  bool walk_forward(std::size_t from, Visit&& visit) const;
  /// Same, backwards, over the ranks before `before`.
  template <class Visit>
  void walk_backward(std::size_t before, Visit&& visit) const;
  /// The runs of ranks where matches can be, in index order (the whole index without a plan).
  std::vector<rank_span> candidate_spans() const;
  void remember_before();

  const index& idx_;
  filter where_;
  bool match_all_;
  std::optional<span_plan> plan_;  // what the filter admits at the index's first key(s)
  std::uint64_t offset_;
  std::uint64_t limit_;
  bool count_;
  std::uint64_t matches_ = 0;

  std::vector<held_row> held_;  // matches at ranks [offset, offset + limit], in order
  bool complete_ = false;       // no match after held_.back() (or none at all past the prefix)
  std::uint64_t prefix_ = 0;    // matches before held_.front(): offset_, or all when held_ empty

  bool in_write_ = false;
  std::vector<record_ptr> before_;  // the visible rows when the write began
  std::uint64_t matches_before_ = 0;
};

}  // namespace weir::core

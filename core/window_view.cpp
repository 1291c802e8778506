// Exact window maintenance over a shared order index (see window_view.hpp).
//
// Invariant between writes: held_ is exactly the matches at ranks [offset, offset + held_.size())
// in index order, held_.size() <= limit + 1, complete_ says no match follows held_.back() (false:
// one may, not known until read), and prefix_ counts the matches before held_.front() (offset_,
// unless held_ is empty, when it counts every match: there are no more than offset_ of them).
#include "core/window_view.hpp"

#include <algorithm>
#include <limits>

namespace weir::core {

std::string_view to_string(removal_reason r) {
  switch (r) {
    case removal_reason::deleted:
      return "deleted";
    case removal_reason::filtered_out:
      return "filtered-out";
    case removal_reason::displaced:
      return "displaced";
  }
  return "displaced";
}

void apply_window_delta(std::vector<record_ptr>& rows, const window_delta& d) {
  if (d.empty()) {
    return;
  }
  std::unordered_map<std::string_view, bool> gone;
  for (const auto& r : d.removed) {
    gone.emplace(r.rec->id, true);
  }
  for (const auto& u : d.upserts) {
    if (!u.added) {
      gone.emplace(u.rec->id, true);
    }
  }
  std::vector<record_ptr> kept;
  kept.reserve(rows.size() + d.upserts.size());
  for (auto& r : rows) {
    if (!gone.count(r->id)) {
      kept.push_back(std::move(r));
    }
  }
  for (const auto& u : d.upserts) {
    auto at = std::min(u.index, kept.size());
    kept.insert(kept.begin() + static_cast<std::ptrdiff_t>(at), u.rec);
  }
  rows = std::move(kept);
}

window_view::window_view(const index& idx, filter where, std::uint64_t offset, std::uint64_t limit,
                         bool count)
    : idx_(idx),
      where_(std::move(where)),
      match_all_(where_.matches_all()),
      plan_(match_all_ ? std::nullopt : span_plan::make(where_, idx.spec())),
      offset_(offset),
      limit_(limit),
      count_(count) {}

bool window_view::matches(const record& r) const {
  return match_all_ || where_.matches(thread_doc_reader().read_only(r, where_.fields()));
}

window_view::held_row window_view::make_row(const record_ptr& r) const {
  return held_row{r, idx_.spec().position_of(thread_doc_reader().read(*r))};
}

bool window_view::fill(std::optional<std::uint64_t> known_matches, std::size_t max_reads) {
  held_.clear();
  complete_ = false;
  if (match_all_) {
    prefix_ = std::min<std::uint64_t>(offset_, idx_.size());
    matches_ = idx_.size();
    auto it = idx_.select(offset_);
    for (; it != idx_.end() && held_.size() < limit_ + 1; ++it) {
      held_.push_back(make_row(it->rec));
    }
    complete_ = it == idx_.end();
    return true;
  }
  const auto found = plan_ && plan_->exact() ? plan_->runs(idx_) : plan_runs{};
  if (plan_ && plan_->exact() && found.arrays.empty()) {
    // The matches are exactly the admitted runs: the window is read at its ranks, as with no
    // filter (an Arc page deep into a filtered query parses only its own rows).
    const auto& runs = found.admitted;
    matches_ = 0;
    for (const auto& run : runs) {
      matches_ += run.size();
    }
    prefix_ = std::min<std::uint64_t>(offset_, matches_);
    std::uint64_t skip = prefix_;
    std::uint64_t read = prefix_;
    for (const auto& run : runs) {
      if (skip >= run.size()) {
        skip -= run.size();
        continue;
      }
      std::size_t r = run.first + static_cast<std::size_t>(skip);
      skip = 0;
      for (auto it = idx_.select(r); r < run.last && held_.size() < limit_ + 1; ++r, ++it) {
        held_.push_back(make_row(it->rec));
        ++read;
      }
      if (held_.size() == limit_ + 1) {
        break;
      }
    }
    complete_ = read == matches_;
    return true;
  }
  if (count_ && !known_matches && plan_) {
    known_matches = count_by_ranks(idx_, where_, max_array_reads_for_count);
  }
  return walk_fill(0, 0, 0, known_matches, max_reads);
}

bool window_view::walk_fill(std::size_t from, std::uint64_t skipped, std::uint64_t found,
                            std::optional<std::uint64_t> known_matches, std::size_t max_reads) {
  bool more = false;
  bool over = false;
  std::size_t reads = 0;
  auto settled = [&] {
    // With the count known, the walk ends once the window and its look-ahead are full or every
    // match was seen: what follows is known without reading it.
    return known_matches && (found >= *known_matches || held_.size() == limit_ + 1);
  };
  if (!settled()) {
    walk_forward(from, [&](const index::iterator& it) {
      if (++reads > max_reads) {
        over = true;
        return false;
      }
      if (!matches(it.rec())) {
        return true;
      }
      ++found;
      if (skipped < offset_) {
        ++skipped;
      } else if (held_.size() < limit_ + 1) {
        held_.push_back(make_row(it->rec));
      } else {
        more = true;
        if (!count_) {
          return false;  // the total is not wanted: stop at the first match past the look-ahead
        }
      }
      return !settled();
    });
  }
  if (over && (held_.size() < limit_ + 1 || (count_ && !known_matches))) {
    // Gave up before the rows (or the count) were found: nothing of this walk stands.
    held_.clear();
    prefix_ = 0;
    matches_ = 0;
    complete_ = false;
    return false;
  }
  prefix_ = skipped;
  if (known_matches) {
    complete_ = found >= *known_matches;
    matches_ = *known_matches;
  } else {
    // Past the budget with the window full, whether a match follows is not known: false is
    // safe, apply() reads on from the last row when it needs one.
    complete_ = !more && !over;
    matches_ = found;
  }
  return true;
}

void window_view::fill(const first_matches& found) {
  held_.clear();
  const auto& rows = found.rows();
  const auto skipped = std::min<std::uint64_t>(offset_, rows.size());
  auto i = static_cast<std::size_t>(skipped);
  for (; i < rows.size() && held_.size() < limit_ + 1; ++i) {
    held_.push_back(held_row{rows[i].rec, rows[i].pos});
  }
  matches_ = found.count();
  prefix_ = skipped;
  if (held_.size() == limit_ + 1 || !found.bound()) {
    // Full, or every match is in `rows`: nothing follows when `rows` ran out here with every
    // match in it.
    complete_ = !found.bound() && i == rows.size();
    return;
  }
  // Writes since the pass took matches out of `rows`: the rest follow its bound in the index.
  // The bound's record may have moved since (then it is not at the bound and is read again).
  auto [it, start] = idx_.lower_bound(*found.bound());
  if (it != idx_.end() && it.rec().id == found.bound()->id &&
      idx_.spec().compare(*found.bound(), thread_doc_reader().read(it.rec())) == 0) {
    ++start;
  }
  // Every match at or before the bound is in `rows`, and the count is exact: the walk stops at
  // the window's last row, or at the last match.
  walk_fill(start, skipped, rows.size(), found.count(), std::numeric_limits<std::size_t>::max());
}

std::size_t window_view::find_held(const sort_position& pos) const {
  const auto& spec = idx_.spec();
  auto it = std::lower_bound(
      held_.begin(), held_.end(), pos,
      [&](const held_row& h, const auto& p) { return spec.compare(h.pos, p) < 0; });
  if (it != held_.end() && it->pos.id == pos.id) {
    return static_cast<std::size_t>(it - held_.begin());
  }
  return held_.size();
}

void window_view::insert_held(held_row row) {
  const auto& spec = idx_.spec();
  auto it = std::upper_bound(
      held_.begin(), held_.end(), row.pos,
      [&](const auto& p, const held_row& h) { return spec.compare(p, h.pos) < 0; });
  held_.insert(it, std::move(row));
}

std::vector<rank_span> window_view::candidate_spans() const {
  if (!plan_) {
    return {rank_span{0, idx_.size()}};
  }
  return plan_->spans(idx_);
}

template <class Visit>
bool window_view::walk_forward(std::size_t from, Visit&& visit) const {
  for (const auto& s : candidate_spans()) {
    if (s.last <= from) {
      continue;
    }
    std::size_t r = std::max(s.first, from);
    auto it = idx_.select(r);
    for (; r < s.last; ++r, ++it) {
      if (!visit(it)) {
        return false;
      }
    }
  }
  return true;
}

template <class Visit>
void window_view::walk_backward(std::size_t before, Visit&& visit) const {
  auto spans = candidate_spans();
  for (auto s = spans.rbegin(); s != spans.rend(); ++s) {
    if (s->first >= before) {
      continue;
    }
    std::size_t r = std::min(s->last, before);
    auto it = idx_.select(r - 1);
    for (; r > s->first; --r, --it) {
      if (!visit(it)) {
        return;
      }
    }
  }
}

void window_view::backfill(const sort_position* from) {
  std::size_t start = 0;
  if (from) {
    auto [it, rank] = idx_.lower_bound(*from);
    start = rank;
    if (it != idx_.end() && it.rec().id == from->id) {
      ++start;  // `from` itself is still there: start after it
    }
  }
  if (held_.size() >= limit_ + 1) {
    return;
  }
  complete_ = walk_forward(start, [&](const index::iterator& it) {
    if (matches(it.rec())) {
      held_.push_back(make_row(it->rec));
    }
    return held_.size() < limit_ + 1;
  });
}

void window_view::remember_before() {
  if (!in_write_) {
    in_write_ = true;
    before_ = visible();
    matches_before_ = matches_;
  }
}

bool window_view::apply(const record_step& s) {
  const bool mb = s.before && matches(*s.before_doc);
  const bool ma = s.after && matches(*s.after_doc);
  if (!mb && !ma) {
    return false;
  }
  remember_before();
  if (mb) {
    --matches_;
  }
  if (ma) {
    ++matches_;
  }
  const auto& spec = idx_.spec();
  if (held_.empty()) {
    // Every match lies before the window (prefix_ of them, at most offset_).
    if (mb) {
      --prefix_;
    }
    if (ma) {
      ++prefix_;
    }
    if (prefix_ > offset_) {
      // One match more than the offset: the last match is the window's only row.
      walk_backward(idx_.size(), [&](const index::iterator& it) {
        if (!matches(it.rec())) {
          return true;
        }
        held_.push_back(make_row(it->rec));
        return false;
      });
      prefix_ = offset_;
      complete_ = true;
    }
    return true;
  }
  const sort_position k0 = held_.front().pos;  // where the window started before this change
  int shift = 0;                               // matches gained (+) or lost (-) before k0
  if (mb) {
    if (auto i = find_held(*s.before_pos); i < held_.size()) {
      held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (spec.compare(*s.before_pos, k0) < 0) {
      --shift;
    }
    // else: it lay past the look-ahead, where nothing is held.
  }
  if (ma) {
    if (spec.compare(*s.after_pos, k0) < 0) {
      ++shift;
    } else if (!held_.empty() && spec.compare(*s.after_pos, held_.back().pos) < 0) {
      insert_held(held_row{s.after, *s.after_pos});
    } else if (complete_) {
      held_.push_back(held_row{s.after, *s.after_pos});  // nothing followed the last held row
    }
    // else: past the look-ahead; the backfill below reads it from the index if it is needed.
  }
  std::optional<sort_position> resume;  // scan from after this row when held_ ends up empty
  if (shift > 0) {
    // A match joined the ranks before the window: the last match before k0 is now at `offset`.
    walk_backward(idx_.lower_bound(k0).second, [&](const index::iterator& it) {
      if (!matches(it.rec())) {
        return true;
      }
      held_.insert(held_.begin(), make_row(it->rec));
      return false;
    });
  } else if (shift < 0) {
    // A match left the ranks before the window: its first row slides into them.
    resume = std::move(held_.front().pos);
    held_.erase(held_.begin());
  }
  while (held_.size() > limit_ + 1) {
    held_.pop_back();
    complete_ = false;
  }
  if (held_.size() < limit_ + 1 && !complete_) {
    if (!held_.empty()) {
      auto from = held_.back().pos;
      backfill(&from);
    } else if (resume) {
      backfill(&*resume);
    } else {
      // The window's old first row went and nothing is held: start at its old place.
      complete_ = walk_forward(idx_.lower_bound(k0).second, [&](const index::iterator& it) {
        if (matches(it.rec())) {
          held_.push_back(make_row(it->rec));
        }
        return held_.size() < limit_ + 1;
      });
    }
  }
  if (held_.empty()) {
    prefix_ = std::min<std::uint64_t>(prefix_, offset_);
  }
  return true;
}

std::vector<record_ptr> window_view::visible() const {
  std::vector<record_ptr> out;
  auto n = std::min<std::size_t>(held_.size(), limit_);
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(held_[i].rec);
  }
  return out;
}

std::optional<window_delta> window_view::end_write(const write_steps& steps) {
  if (!in_write_) {
    return std::nullopt;
  }
  in_write_ = false;
  auto before = std::move(before_);
  before_.clear();
  auto n = std::min<std::size_t>(held_.size(), limit_);
  std::unordered_map<std::string_view, std::size_t> old_at;
  old_at.reserve(before.size());
  for (std::size_t j = 0; j < before.size(); ++j) {
    old_at.emplace(before[j]->id, j);
  }
  std::vector<bool> still(before.size(), false);
  window_delta d;
  auto ops_of = [&](const std::string& id) -> std::shared_ptr<const change_ops> {
    auto it = steps.find(id);
    return it == steps.end() ? nullptr : it->second->ops;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = held_[i].rec;
    auto it = old_at.find(r->id);
    if (it == old_at.end()) {
      d.upserts.push_back(window_upsert{i, r, true, ops_of(r->id)});
      continue;
    }
    still[it->second] = true;
    if (before[it->second] != r) {
      d.upserts.push_back(window_upsert{i, r, false, ops_of(r->id)});
    }
  }
  for (std::size_t j = 0; j < before.size(); ++j) {
    if (still[j]) {
      continue;
    }
    auto reason = removal_reason::displaced;
    if (auto it = steps.find(before[j]->id); it != steps.end()) {
      const auto* s = it->second;
      if (!s->after) {
        reason = removal_reason::deleted;
      } else if (!matches(*s->after_doc)) {
        reason = removal_reason::filtered_out;
      }
    }
    d.removed.push_back(window_removal{before[j], reason});
  }
  if (count_) {
    d.total = matches_;
  }
  if (d.empty() && matches_ == matches_before_) {
    return std::nullopt;
  }
  return d;
}

}  // namespace weir::core

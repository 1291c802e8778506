// Exact window maintenance over a shared order index (see window_view.hpp).
//
// Invariant between writes: held_ is exactly the matches at ranks [offset, offset + held_.size())
// in index order, held_.size() <= limit + 1, complete_ says no match follows held_.back(), and
// prefix_ counts the matches before held_.front() (offset_, unless held_ is empty, when it counts
// every match: there are no more than offset_ of them).
#include "core/window_view.hpp"

#include <algorithm>

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
      offset_(offset),
      limit_(limit),
      count_(count) {}

bool window_view::matches(const record& r) const {
  return match_all_ || where_.matches(thread_doc_reader().read(r));
}

window_view::held_row window_view::make_row(const record_ptr& r) const {
  return held_row{r, idx_.spec().position_of(thread_doc_reader().read(*r))};
}

void window_view::fill(std::optional<std::uint64_t> known_matches) {
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
    return;
  }
  std::uint64_t skipped = 0;
  std::uint64_t found = 0;
  bool more = false;
  for (auto it = idx_.begin(); it != idx_.end(); ++it) {
    if (!matches(it.rec())) {
      continue;
    }
    ++found;
    if (skipped < offset_) {
      ++skipped;
    } else if (held_.size() < limit_ + 1) {
      held_.push_back(make_row(it->rec));
    } else {
      more = true;
      if (!count_ || known_matches) {
        break;  // the total is not wanted, or known: stop at the first match past the look-ahead
      }
    }
  }
  prefix_ = skipped;
  complete_ = !more;
  matches_ = known_matches && more ? *known_matches : found;
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

void window_view::backfill(const sort_position* from) {
  auto it = idx_.begin();
  if (from) {
    it = idx_.lower_bound(*from).first;
    if (it != idx_.end() && it.rec().id == from->id) {
      ++it;  // `from` itself is still there: start after it
    }
  }
  while (held_.size() < limit_ + 1) {
    if (it == idx_.end()) {
      complete_ = true;
      return;
    }
    if (matches(it.rec())) {
      held_.push_back(make_row(it->rec));
    }
    ++it;
  }
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
      auto it = idx_.end();
      do {
        --it;
      } while (it != idx_.end() && !matches(it.rec()));
      if (it != idx_.end()) {
        held_.push_back(make_row(it->rec));
      }
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
    auto it = idx_.lower_bound(k0).first;
    for (--it; it != idx_.end(); --it) {
      if (matches(it.rec())) {
        held_.insert(held_.begin(), make_row(it->rec));
        break;
      }
    }
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
      auto it = idx_.lower_bound(k0).first;
      while (held_.size() < limit_ + 1) {
        if (it == idx_.end()) {
          complete_ = true;
          break;
        }
        if (matches(it.rec())) {
          held_.push_back(make_row(it->rec));
        }
        ++it;
      }
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

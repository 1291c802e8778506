// The first matches of a filter in one order, from one pass (see first_matches.hpp).
#include "core/first_matches.hpp"

#include <algorithm>

namespace weir::core {

first_matches first_matches::scan(const std::vector<record_ptr>& records, filter where,
                                  sort_spec order, std::size_t want) {
  first_matches out{std::move(where), std::move(order)};
  const auto& spec = out.order_;
  // A max-heap of the `want` first matches seen so far: its front is the one a better match
  // replaces, and a match sorting after it is passed over without reading its position.
  auto later = [&](const row& a, const row& b) { return spec.compare(a.pos, b.pos) < 0; };
  auto& heap = out.rows_;
  heap.reserve(std::min(want, records.size()));
  auto& reader = thread_doc_reader();
  // Only what the filter, the sort and the id tie-break read is parsed.
  std::vector<std::string> fields = out.where_.fields();
  auto note = [&](const std::string& f) {
    if (std::find(fields.begin(), fields.end(), f) == fields.end()) {
      fields.push_back(f);
    }
  };
  for (const auto& p : spec.paths()) {
    if (!p.empty()) {
      note(p.segments().front());
    }
  }
  note("id");
  for (const auto& r : records) {
    const auto& doc = reader.read_only(*r, fields);
    if (!out.where_.matches(doc)) {
      continue;
    }
    ++out.count_;
    if (heap.size() == want) {
      if (spec.compare(heap.front().pos, doc) < 0) {
        continue;
      }
      std::pop_heap(heap.begin(), heap.end(), later);
      heap.back() = row{r, spec.position_of(doc)};
    } else {
      heap.push_back(row{r, spec.position_of(doc)});
    }
    std::push_heap(heap.begin(), heap.end(), later);
  }
  std::sort_heap(heap.begin(), heap.end(), later);
  if (static_cast<std::uint64_t>(out.count_) > heap.size()) {
    out.bound_ = heap.back().pos;
  }
  return out;
}

bool first_matches::within(const sort_position& pos) const {
  return !bound_ || order_.compare(pos, *bound_) <= 0;
}

void first_matches::apply(const record* before, const record_ptr& after) {
  auto& reader = thread_doc_reader();
  auto before_first = [&](const sort_position& p) {
    return std::lower_bound(rows_.begin(), rows_.end(), p, [&](const row& a, const auto& b) {
      return order_.compare(a.pos, b) < 0;
    });
  };
  if (before) {
    const auto& doc = reader.read(*before);
    if (where_.matches(doc)) {
      --count_;
      auto pos = order_.position_of(doc);
      if (within(pos)) {
        if (auto it = before_first(pos); it != rows_.end() && it->pos.id == pos.id) {
          rows_.erase(it);
        }
      }
    }
  }
  if (after) {
    const auto& doc = reader.read(*after);
    if (where_.matches(doc)) {
      ++count_;
      auto pos = order_.position_of(doc);
      if (within(pos)) {
        auto at = before_first(pos);
        rows_.insert(at, row{after, std::move(pos)});
      }
    }
  }
}

void first_matches::clear() {
  rows_.clear();
  bound_.reset();
  count_ = 0;
}

}  // namespace weir::core

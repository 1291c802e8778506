// Bounded collection of a captured transaction's row keys (captured_rows.hpp).
#include "store/captured_rows.hpp"

#include <algorithm>

namespace weir::store {

void captured_rows::add(captured_row row) {
  if (everything_) {
    return;
  }
  group_key key{std::move(row.space), std::move(row.object), std::move(row.dataset)};
  auto it = groups_.find(key);
  if (it == groups_.end()) {
    if (groups_.size() >= bounds_.datasets) {
      // Too many datasets to name: every held unit is read again, and nothing is kept.
      add_everything();
      return;
    }
    it = groups_.emplace(std::move(key), group{}).first;
  }
  auto& g = it->second;
  if (g.whole) {
    return;
  }
  if (g.sorted) {
    add_to_sorted(g, std::move(row.id));
    return;
  }
  if (g.ids.size() >= bounds_.per_dataset || keys_ >= bounds_.total) {
    // At a bound, repeats go first (a row updated many times in one transaction is one row):
    // only distinct rows past it make the dataset whole.
    auto before = g.ids.size();
    std::sort(g.ids.begin(), g.ids.end());
    g.ids.erase(std::unique(g.ids.begin(), g.ids.end()), g.ids.end());
    keys_ -= before - g.ids.size();
    g.sorted = true;
    add_to_sorted(g, std::move(row.id));
    return;
  }
  if (keys_ >= bounds_.total) {
    make_whole(g);
    return;
  }
  g.ids.push_back(std::move(row.id));
  ++keys_;
}

void captured_rows::add_everything() {
  groups_.clear();
  keys_ = 0;
  everything_ = true;
}

// Past its first time at the bound a group stays sorted and distinct: a repeat is found, a new
// id is inserted in place (at most per_dataset of them), so repeats cost a binary search.
void captured_rows::add_to_sorted(group& g, std::string id) {
  auto at = std::lower_bound(g.ids.begin(), g.ids.end(), id);
  if (at != g.ids.end() && *at == id) {
    return;
  }
  if (g.ids.size() >= bounds_.per_dataset || keys_ >= bounds_.total) {
    make_whole(g);
    return;
  }
  g.ids.insert(at, std::move(id));
  ++keys_;
}

void captured_rows::make_whole(group& g) {
  keys_ -= g.ids.size();
  g.ids = {};  // frees them
  g.whole = true;
}

captured_txn captured_rows::take() {
  captured_txn out;
  out.everything = everything_;
  for (auto& [key, g] : groups_) {
    auto& [space, object, dataset] = key;
    if (g.whole) {
      out.whole.push_back({space, object, dataset});
      continue;
    }
    std::sort(g.ids.begin(), g.ids.end());
    g.ids.erase(std::unique(g.ids.begin(), g.ids.end()), g.ids.end());
    for (auto& id : g.ids) {
      out.rows.push_back({space, object, dataset, std::move(id)});
    }
  }
  clear();
  return out;
}

void captured_rows::clear() {
  groups_.clear();
  keys_ = 0;
  everything_ = false;
}

}  // namespace weir::store

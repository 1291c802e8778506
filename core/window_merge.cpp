// Merging per-source windows (see window_merge.hpp).
#include "core/window_merge.hpp"

#include <boost/json/serialize.hpp>

namespace weir::core {

std::string merged_id_prefix(std::string_view object) {
  std::string out;
  out.reserve(object.size() + 1);
  for (char c : object) {
    if (c == '%') {
      out += "%25";
    } else if (c == '/') {
      out += "%2F";
    } else {
      out.push_back(c);
    }
  }
  out.push_back('/');
  return out;
}

record_ptr with_object_prefix(const record& r, std::string_view object) {
  auto doc = parse_doc(r);
  std::string id = merged_id_prefix(object);
  id.append(r.id);
  doc["id"] = id;
  return make_record(doc);
}

window_merge::window_merge(sort_spec spec, std::uint64_t offset, std::uint64_t limit, bool count)
    : spec_(std::move(spec)),
      offset_(offset),
      limit_(limit),
      count_(count),
      rows_(row_less{&spec_}) {}

void window_merge::remember() {
  if (!in_event_) {
    in_event_ = true;
    before_ = visible();
    total_before_ = total();
  }
}

void window_merge::insert(const std::string& name, source_state& s, const record_ptr& r) {
  auto pos = spec_.position_of(thread_doc_reader().read(*r));
  auto it = rows_.insert(row{std::move(pos), r, &name}).first;
  s.rows[r->id] = it;
}

void window_merge::erase(source_state& s, const std::string& id, removal_reason why) {
  auto it = s.rows.find(id);
  if (it == s.rows.end()) {
    return;
  }
  rows_.erase(it->second);
  s.rows.erase(it);
  reasons_[id] = why;
}

void window_merge::set_source(const std::string& source, const std::vector<record_ptr>& rows,
                              std::optional<std::uint64_t> total) {
  remember();
  auto& [name, s] = *sources_.try_emplace(source).first;
  for (auto& [id, it] : s.rows) {
    rows_.erase(it);
    reasons_[id] = removal_reason::displaced;
  }
  s.rows.clear();
  for (const auto& r : rows) {
    insert(name, s, r);
  }
  s.total = total;
}

void window_merge::apply_source(const std::string& source, const window_delta& d) {
  remember();
  auto& [name, s] = *sources_.try_emplace(source).first;
  for (const auto& r : d.removed) {
    erase(s, r.rec->id, r.reason);
  }
  for (const auto& u : d.upserts) {
    if (auto it = s.rows.find(u.rec->id); it != s.rows.end()) {
      rows_.erase(it->second);
      s.rows.erase(it);
    }
    insert(name, s, u.rec);
    if (u.ops) {
      ops_[u.rec->id] = u.ops;
    }
  }
  if (d.total) {
    s.total = d.total;
  }
}

void window_merge::drop_source(const std::string& source) {
  auto it = sources_.find(source);
  if (it == sources_.end()) {
    return;
  }
  remember();
  for (auto& [id, row_it] : it->second.rows) {
    rows_.erase(row_it);
    reasons_[id] = removal_reason::deleted;
  }
  sources_.erase(it);
}

std::vector<record_ptr> window_merge::visible() const {
  std::vector<record_ptr> out;
  std::uint64_t i = 0;
  const std::string* last_id = nullptr;
  for (auto it = rows_.begin(); it != rows_.end(); ++it) {
    // The same record held by two sources at once sorts side by side: it shows once.
    if (last_id && *last_id == it->rec->id) {
      continue;
    }
    last_id = &it->rec->id;
    if (i++ < offset_) {
      continue;
    }
    if (limit_ && out.size() >= limit_) {
      break;
    }
    out.push_back(it->rec);
  }
  return out;
}

std::optional<std::uint64_t> window_merge::total() const {
  if (!count_) {
    return std::nullopt;
  }
  std::uint64_t t = 0;
  for (const auto& [name, s] : sources_) {
    t += s.total.value_or(0);
  }
  return t;
}

std::optional<window_delta> window_merge::take_delta() {
  if (!in_event_) {
    return std::nullopt;
  }
  in_event_ = false;
  auto after = visible();
  std::unordered_map<std::string_view, std::size_t> old_at;
  for (std::size_t j = 0; j < before_.size(); ++j) {
    old_at.emplace(before_[j]->id, j);
  }
  std::vector<bool> still(before_.size(), false);
  window_delta d;
  for (std::size_t i = 0; i < after.size(); ++i) {
    const auto& r = after[i];
    auto ops = ops_.find(r->id);
    auto ops_ptr = ops == ops_.end() ? nullptr : ops->second;
    auto it = old_at.find(r->id);
    if (it == old_at.end()) {
      d.upserts.push_back(window_upsert{i, r, true, ops_ptr});
      continue;
    }
    still[it->second] = true;
    if (before_[it->second] != r && before_[it->second]->json != r->json) {
      d.upserts.push_back(window_upsert{i, r, false, ops_ptr});
    }
  }
  for (std::size_t j = 0; j < before_.size(); ++j) {
    if (!still[j]) {
      auto it = reasons_.find(before_[j]->id);
      auto why = it == reasons_.end() ? removal_reason::displaced : it->second;
      // A row that left its source only to stay elsewhere in it is not gone: only the
      // source's own reason counts for rows the source removed.
      d.removed.push_back(window_removal{before_[j], why});
    }
  }
  auto t = total();
  d.total = t;
  before_.clear();
  reasons_.clear();
  ops_.clear();
  if (d.empty() && t == total_before_) {
    return std::nullopt;
  }
  return d;
}

}  // namespace weir::core

// Per-connection revision/tombstone state of Arc hub §4 (after .NET
// ObservableQuerySubscriptionState): one map of ids, plus an ordered tombstone index so that expiry
// and the cap touch only what they remove.
#include "core/revision_table.hpp"

namespace weir::core {

revision_table::revision_table(revision_options opts) : opts_(opts) {}

subscribe_outcome revision_table::on_subscribe(std::string_view query_id,
                                               std::optional<std::uint64_t> revision,
                                               clock::time_point now) {
  cleanup(now);
  auto it = entries_.find(query_id);
  if (revision) {
    if (it != entries_.end() && it->second.aware && *revision <= it->second.revision) {
      return subscribe_outcome::ignore;
    }
    if (it == entries_.end()) {
      it = entries_.emplace(std::string(query_id), entry{}).first;
    }
    untombstone(it);
    it->second.aware = true;
    it->second.revision = *revision;
    return subscribe_outcome::start;
  }
  if (it != entries_.end() && it->second.aware) {
    return subscribe_outcome::ignore;
  }
  if (it == entries_.end()) {
    entries_.emplace(std::string(query_id), entry{});
  }
  return subscribe_outcome::start;
}

unsubscribe_outcome revision_table::on_unsubscribe(std::string_view query_id,
                                                   std::optional<std::uint64_t> revision,
                                                   clock::time_point now) {
  cleanup(now);
  auto it = entries_.find(query_id);
  if (revision) {
    if (it != entries_.end() && it->second.aware) {
      if (*revision < it->second.revision) {
        return unsubscribe_outcome::ignore;
      }
      if (*revision == it->second.revision && it->second.tombstoned) {
        return unsubscribe_outcome::ignore;
      }
    }
    if (it == entries_.end()) {
      it = entries_.emplace(std::string(query_id), entry{}).first;
    }
    it->second.aware = true;
    tombstone(it, *revision, now);
    enforce_cap();
    return unsubscribe_outcome::cancel;
  }
  if (it == entries_.end() || it->second.aware) {
    return unsubscribe_outcome::ignore;
  }
  erase(it);
  return unsubscribe_outcome::cancel;
}

void revision_table::on_terminated(std::string_view query_id, clock::time_point now) {
  cleanup(now);
  auto it = entries_.find(query_id);
  if (it == entries_.end()) {
    return;
  }
  if (!it->second.aware) {
    erase(it);
    return;
  }
  if (!it->second.tombstoned) {
    tombstone(it, it->second.revision, now);
    enforce_cap();
  }
}

bool revision_table::is_active(std::string_view query_id) const {
  const auto it = entries_.find(query_id);
  return it != entries_.end() && !it->second.tombstoned;
}

bool revision_table::is_tombstoned(std::string_view query_id) const {
  const auto it = entries_.find(query_id);
  return it != entries_.end() && it->second.tombstoned;
}

bool revision_table::is_current(std::string_view query_id,
                                std::optional<std::uint64_t> revision) const {
  const auto it = entries_.find(query_id);
  if (it == entries_.end() || it->second.tombstoned) {
    return false;
  }
  if (!it->second.aware) {
    return !revision.has_value();
  }
  return revision.has_value() && *revision == it->second.revision;
}

std::optional<std::uint64_t> revision_table::current_revision(std::string_view query_id) const {
  const auto it = entries_.find(query_id);
  if (it == entries_.end() || !it->second.aware) {
    return std::nullopt;
  }
  return it->second.revision;
}

std::size_t revision_table::active_count() const {
  return entries_.size() - tombstones_.size();
}

std::size_t revision_table::tombstone_count() const {
  return tombstones_.size();
}

void revision_table::expire(clock::time_point now) {
  while (!tombstones_.empty()) {
    const auto first = tombstones_.begin();
    if (now - first->first < opts_.tombstone_ttl) {
      break;
    }
    entries_.erase(first->second);
    tombstones_.erase(first);
  }
}

void revision_table::tombstone(entry_map::iterator it, std::uint64_t revision,
                               clock::time_point now) {
  untombstone(it);
  it->second.revision = revision;
  it->second.tombstoned = true;
  it->second.tombstoned_at = now;
  tombstones_.emplace(now, it->first);
}

void revision_table::untombstone(entry_map::iterator it) {
  if (it->second.tombstoned) {
    tombstones_.erase({it->second.tombstoned_at, it->first});
    it->second.tombstoned = false;
  }
}

void revision_table::erase(entry_map::iterator it) {
  untombstone(it);
  entries_.erase(it);
}

void revision_table::enforce_cap() {
  while (tombstones_.size() > opts_.max_tombstones) {
    const auto first = tombstones_.begin();
    entries_.erase(first->second);
    tombstones_.erase(first);
  }
}

void revision_table::cleanup(clock::time_point now) {
  expire(now);
  enforce_cap();
}

}  // namespace weir::core

// weir::core::window_merge — one window over several sources (the objects of a space, or the
// members of a cluster), each of which keeps its own exact window of the first K = offset +
// limit matches (all of them when unbounded). The union of the sources' first K rows holds the
// merged first K rows, so the merged window [offset, offset + limit) is exact as long as every
// source's is: the space-wide dataset endpoint is served this way.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/sort_spec.hpp"
#include "core/window_delta.hpp"

namespace weir::core {

/// A copy of `r` whose "id" is `<object>/<id>` (rows of the space-wide dataset endpoint). In
/// the object id, '%' becomes "%25" and '/' becomes "%2F", so the first '/' always ends it and
/// two objects can never produce the same merged id; ids without those characters are unchanged.
record_ptr with_object_prefix(const record& r, std::string_view object);

/// The object id part of a merged id, escaped as with_object_prefix does.
std::string merged_id_prefix(std::string_view object);

class window_merge {
 public:
  /// `limit` 0: unbounded. `count`: keep the sum of the sources' totals.
  window_merge(sort_spec spec, std::uint64_t offset, std::uint64_t limit, bool count);

  /// The first K a source must keep for this merge to be exact (0: all).
  std::uint64_t source_limit() const { return limit_ ? offset_ + limit_ : 0; }

  /// Replaces every row of `source` (its window, in any order) and its total.
  void set_source(const std::string& source, const std::vector<record_ptr>& rows,
                  std::optional<std::uint64_t> total);

  /// Applies a change of `source`'s window. Rows in `d` must already carry merged ids.
  void apply_source(const std::string& source, const window_delta& d);

  /// Forgets `source` and its rows (they leave as deleted).
  void drop_source(const std::string& source);

  bool has_source(const std::string& source) const { return sources_.count(source) > 0; }

  /// After the calls for one source event: what they did to the merged window, or nullopt.
  std::optional<window_delta> take_delta();

  std::vector<record_ptr> visible() const;
  std::optional<std::uint64_t> total() const;
  std::size_t held() const { return rows_.size(); }

 private:
  // Rows order by position, then by source: two sources may briefly hold the same record (an
  // object moving between members), and each must keep its own entry.
  struct row {
    sort_position pos;
    record_ptr rec;
    const std::string* source;  // the key in sources_ (map keys do not move)
  };
  struct row_less {
    const sort_spec* spec;
    bool operator()(const row& a, const row& b) const {
      if (auto c = spec->compare(a.pos, b.pos); c != 0) {
        return c < 0;
      }
      return *a.source < *b.source;
    }
  };
  using row_set = std::set<row, row_less>;
  struct source_state {
    std::unordered_map<std::string, row_set::iterator> rows;  // by merged id
    std::optional<std::uint64_t> total;
  };

  void remember();
  void insert(const std::string& name, source_state& s, const record_ptr& r);
  void erase(source_state& s, const std::string& id, removal_reason why);

  sort_spec spec_;
  std::uint64_t offset_;
  std::uint64_t limit_;
  bool count_;
  row_set rows_;
  std::map<std::string, source_state> sources_;

  bool in_event_ = false;
  std::vector<record_ptr> before_;
  std::optional<std::uint64_t> total_before_;
  std::unordered_map<std::string, removal_reason> reasons_;
  std::unordered_map<std::string, std::shared_ptr<const change_ops>> ops_;
};

}  // namespace weir::core

// Every match of a filter from one pass, brought up to date (see all_matches.hpp).
#include "core/all_matches.hpp"

#include <string_view>
#include <unordered_map>

namespace weir::core {

all_matches all_matches::scan(const std::vector<record_ptr>& records, filter where) {
  all_matches out{std::move(where)};
  auto& reader = thread_doc_reader();
  const auto& fields = out.where_.fields();  // nothing else is parsed
  for (const auto& r : records) {
    if (out.where_.matches(reader.read_only(*r, fields))) {
      out.rows_.push_back(r);
    }
  }
  return out;
}

void all_matches::catch_up(const std::vector<std::pair<record_ptr, record_ptr>>& journal) {
  if (journal.empty()) {
    return;
  }
  // Each record the changes touched ends as its last change left it (null: deleted); the ids
  // point into the journal's records, which outlive this call.
  std::unordered_map<std::string_view, const record_ptr*> last;
  last.reserve(journal.size());
  for (const auto& [before, after] : journal) {
    last[after ? std::string_view{after->id} : std::string_view{before->id}] = &after;
  }
  std::erase_if(rows_, [&](const record_ptr& r) { return last.count(r->id) > 0; });
  auto& reader = thread_doc_reader();
  for (const auto& [id, after] : last) {
    if (*after && where_.matches(reader.read(**after))) {
      rows_.push_back(*after);
    }
  }
}

}  // namespace weir::core

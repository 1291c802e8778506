// Assembly of QueryResult bodies from pre-encoded JSON parts.
#include "core/result_body.hpp"

#include <cstdio>

namespace weir::core {

void append_record_array(std::string& out, const std::vector<record_ptr>& rows) {
  out.push_back('[');
  bool first = true;
  for (const auto& r : rows) {
    if (!first) {
      out.push_back(',');
    }
    first = false;
    out.append(r->json);
  }
  out.push_back(']');
}

void append_change_set(std::string& out, const std::vector<record_ptr>& added,
                       const std::vector<record_ptr>& replaced,
                       const std::vector<record_ptr>& removed) {
  out.append("{\"added\":");
  append_record_array(out, added);
  out.append(",\"replaced\":");
  append_record_array(out, replaced);
  out.append(",\"removed\":");
  append_record_array(out, removed);
  out.push_back('}');
}

std::string encode_result_body(std::optional<std::string_view> data_json,
                               std::optional<std::string_view> change_set_json,
                               const paging_info& paging,
                               std::optional<std::string_view> patch_json) {
  std::string out;
  out.reserve((data_json ? data_json->size() : 0) +
              (change_set_json ? change_set_json->size() : 0) +
              (patch_json ? patch_json->size() : 0) + 320);
  if (data_json) {
    out.append(",\"data\":");
    out.append(*data_json);
  }
  if (change_set_json) {
    out.append(",\"changeSet\":");
    out.append(*change_set_json);
  }
  if (patch_json) {
    out.append(",\"patch\":");
    out.append(*patch_json);
  }
  // Every emission the engine produces is a ready, authorized, valid, successful result; the
  // failure forms travel as Unauthorized / Error frames instead (arc-hub §5).
  out.append(
      ",\"isReady\":true,\"isAuthorized\":true,\"isValid\":true,\"hasExceptions\":false,"
      "\"isSuccess\":true,\"validationResults\":[],\"exceptionMessages\":[],"
      "\"exceptionStackTrace\":\"\",\"paging\":{\"page\":");
  std::uint64_t total_pages =
      paging.size == 0 ? 0 : (paging.total_items + paging.size - 1) / paging.size;
  char buf[96];
  int n = std::snprintf(
      buf, sizeof buf, "%llu,\"size\":%llu,\"totalItems\":%llu,\"totalPages\":%llu}}",
      static_cast<unsigned long long>(paging.page), static_cast<unsigned long long>(paging.size),
      static_cast<unsigned long long>(paging.total_items),
      static_cast<unsigned long long>(total_pages));
  out.append(buf, static_cast<std::size_t>(n));
  return out;
}

}  // namespace weir::core

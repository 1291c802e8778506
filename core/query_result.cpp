// QueryResult encoding of Arc hub §3, split so the expensive body is encoded once per emission.
// Member order follows .NET QueryResult (and §3's table); absent members are omitted, not null.
#include "core/query_result.hpp"

#include <boost/json/serialize.hpp>

#include "core/hub_codec.hpp"

namespace weir::core {

namespace {

void append_bool(std::string& out, bool b) {
  out += b ? "true" : "false";
}

}  // namespace

std::uint64_t total_pages(const paging_info& paging) {
  if (paging.size == 0) {
    return 0;
  }
  return paging.total_items / paging.size + (paging.total_items % paging.size != 0 ? 1 : 0);
}

std::string encode_query_result_body(const std::string* data_json, const change_set* cs,
                                     const paging_info& paging) {
  static const query_result_status success{};
  return encode_query_result_body(data_json, cs, paging, success);
}

std::string encode_query_result_body(const std::string* data_json, const change_set* cs,
                                     const paging_info& paging, const query_result_status& status) {
  const bool is_valid = status.validation_results.empty();
  const bool has_exceptions = !status.exception_messages.empty();
  const bool is_success = status.is_ready && status.is_authorized && is_valid && !has_exceptions;

  std::string out;
  out.reserve(320 + (data_json != nullptr ? data_json->size() : 0));
  if (data_json != nullptr) {
    out += ",\"data\":";
    out += *data_json;
  }
  if (cs != nullptr) {
    out += ",\"changeSet\":";
    append_change_set_json(out, *cs);
  }
  out += ",\"isReady\":";
  append_bool(out, status.is_ready);
  out += ",\"isAuthorized\":";
  append_bool(out, status.is_authorized);
  out += ",\"isValid\":";
  append_bool(out, is_valid);
  out += ",\"hasExceptions\":";
  append_bool(out, has_exceptions);
  out += ",\"isSuccess\":";
  append_bool(out, is_success);
  out += ",\"validationResults\":";
  out += boost::json::serialize(status.validation_results);
  out += ",\"exceptionMessages\":[";
  for (std::size_t i = 0; i < status.exception_messages.size(); ++i) {
    if (i != 0) {
      out += ',';
    }
    append_json_string(out, status.exception_messages[i]);
  }
  out += "],\"exceptionStackTrace\":";
  append_json_string(out, status.exception_stack_trace);
  out += ",\"paging\":{\"page\":";
  out += std::to_string(paging.page);
  out += ",\"size\":";
  out += std::to_string(paging.size);
  out += ",\"totalItems\":";
  out += std::to_string(paging.total_items);
  out += ",\"totalPages\":";
  out += std::to_string(total_pages(paging));
  out += "}}";
  return out;
}

std::string encode_query_result_prefix(std::string_view query_id,
                                       std::optional<std::uint64_t> revision,
                                       std::string_view correlation_id) {
  std::string out;
  out.reserve(96 + query_id.size() + correlation_id.size());
  out += "{\"type\":\"QueryResult\",\"queryId\":";
  append_json_string(out, query_id);
  if (revision) {
    out += ",\"revision\":";
    out += std::to_string(*revision);
  }
  out += ",\"payload\":{\"correlationId\":";
  append_json_string(out, correlation_id);
  return out;
}

std::string encode_bare_query_result(std::string_view correlation_id, std::string_view body) {
  std::string out;
  out.reserve(24 + correlation_id.size() + body.size());
  out += "{\"correlationId\":";
  append_json_string(out, correlation_id);
  out += body;
  return out;
}

}  // namespace weir::core

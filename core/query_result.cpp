// QueryResult encoding of Arc hub §3, split so the expensive body is encoded once per emission.
// Member order follows .NET QueryResult (and §3's table); absent members are omitted, not null.
#include "core/query_result.hpp"

#include <charconv>

#include <boost/json/serialize.hpp>

#include "core/hub_codec.hpp"

namespace weir::core {

namespace {

void append_bool(std::string& out, bool b) {
  out += b ? "true" : "false";
}

void append_number(std::string& out, std::uint64_t n) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, r.ptr);
}

// The status members of a ready, authorized, valid, successful result: every emission the engine
// produces, written as one piece.
constexpr std::string_view success_members =
    ",\"isReady\":true,\"isAuthorized\":true,\"isValid\":true,\"hasExceptions\":false,"
    "\"isSuccess\":true,\"validationResults\":[],\"exceptionMessages\":[],"
    "\"exceptionStackTrace\":\"\"";

void append_paging(std::string& out, const paging_info& paging) {
  out += ",\"paging\":{\"page\":";
  append_number(out, paging.page);
  out += ",\"size\":";
  append_number(out, paging.size);
  out += ",\"totalItems\":";
  append_number(out, paging.total_items);
  out += ",\"totalPages\":";
  append_number(out, total_pages(paging));
  out += "}}";
}

}  // namespace

std::uint64_t total_pages(const paging_info& paging) {
  if (paging.size == 0) {
    return 0;
  }
  return paging.total_items / paging.size + (paging.total_items % paging.size != 0 ? 1 : 0);
}

result_body_builder::result_body_builder(std::size_t expected_value_bytes) {
  out_.reserve(expected_value_bytes + 320);
}

std::string& result_body_builder::member(std::string_view name) {
  out_ += ",\"";
  out_ += name;
  out_ += "\":";
  return out_;
}

std::string result_body_builder::finish(const paging_info& paging) {
  out_ += success_members;
  append_paging(out_, paging);
  return std::move(out_);
}

std::string result_body_builder::finish(const paging_info& paging,
                                        const query_result_status& status) {
  const bool is_valid = status.validation_results.empty();
  const bool has_exceptions = !status.exception_messages.empty();
  const bool is_success = status.is_ready && status.is_authorized && is_valid && !has_exceptions;
  out_ += ",\"isReady\":";
  append_bool(out_, status.is_ready);
  out_ += ",\"isAuthorized\":";
  append_bool(out_, status.is_authorized);
  out_ += ",\"isValid\":";
  append_bool(out_, is_valid);
  out_ += ",\"hasExceptions\":";
  append_bool(out_, has_exceptions);
  out_ += ",\"isSuccess\":";
  append_bool(out_, is_success);
  out_ += ",\"validationResults\":";
  out_ += boost::json::serialize(status.validation_results);
  out_ += ",\"exceptionMessages\":[";
  for (std::size_t i = 0; i < status.exception_messages.size(); ++i) {
    if (i != 0) {
      out_ += ',';
    }
    append_json_string(out_, status.exception_messages[i]);
  }
  out_ += "],\"exceptionStackTrace\":";
  append_json_string(out_, status.exception_stack_trace);
  append_paging(out_, paging);
  return std::move(out_);
}

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
  result_body_builder b((data_json ? data_json->size() : 0) +
                        (change_set_json ? change_set_json->size() : 0) +
                        (patch_json ? patch_json->size() : 0));
  if (data_json) {
    b.member("data") += *data_json;
  }
  if (change_set_json) {
    b.member("changeSet") += *change_set_json;
  }
  if (patch_json) {
    b.member("patch") += *patch_json;
  }
  return b.finish(paging);
}

std::string encode_query_result_body(const std::string* data_json, const change_set* cs,
                                     const paging_info& paging) {
  static const query_result_status success{};
  return encode_query_result_body(data_json, cs, paging, success);
}

std::string encode_query_result_body(const std::string* data_json, const change_set* cs,
                                     const paging_info& paging, const query_result_status& status) {
  result_body_builder b(data_json != nullptr ? data_json->size() : 0);
  if (data_json != nullptr) {
    b.member("data") += *data_json;
  }
  if (cs != nullptr) {
    append_change_set_json(b.member("changeSet"), *cs);
  }
  return b.finish(paging, status);
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
    append_number(out, *revision);
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

// SSE control POST validation (arc-hub §8 steps 1–3 and 5) and `data:` framing (§7). The
// SubscriptionRequest, queryId and revision rules are hub_codec's, shared with the WS hub.
#include "core/sse_control.hpp"

#include <algorithm>
#include <cassert>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "core/document_check.hpp"

namespace weir::core {

namespace {

constexpr std::string_view media_type = "application/json";
constexpr std::string_view charset_parameter = "charset=utf-8";

error bad_request(std::string message) {
  return make_error(std::string(sse_bad_request_code), std::move(message));
}

// JavaScript's \s restricted to ASCII (header values are ASCII once a parser has them).
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

char to_lower_ascii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// True when `s` starts with `prefix`, ASCII case-insensitively.
bool istarts_with(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) {
    return false;
  }
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (to_lower_ascii(s[i]) != prefix[i]) {
      return false;
    }
  }
  return true;
}

std::string_view view(const boost::json::string& s) {
  return {s.data(), s.size()};
}

}  // namespace

bool sse_control_content_type_ok(std::optional<std::string_view> content_type) {
  if (!content_type) {
    return false;
  }
  std::string_view rest = *content_type;
  if (!istarts_with(rest, media_type)) {
    return false;
  }
  rest.remove_prefix(media_type.size());
  if (rest.empty()) {
    return true;
  }
  // (\s*;\s*charset=utf-8)$
  while (!rest.empty() && is_space(rest.front())) {
    rest.remove_prefix(1);
  }
  if (rest.empty() || rest.front() != ';') {
    return false;
  }
  rest.remove_prefix(1);
  while (!rest.empty() && is_space(rest.front())) {
    rest.remove_prefix(1);
  }
  return rest.size() == charset_parameter.size() && istarts_with(rest, charset_parameter);
}

std::size_t sse_control_body_limit(std::size_t max_body_bytes,
                                   std::size_t max_inbound_frame_bytes) {
  return std::min(max_body_bytes, max_inbound_frame_bytes);
}

result<sse_control_parse> parse_sse_control(sse_control_kind kind, std::string_view body) {
  boost::json::error_code ec;
  const boost::json::value root = boost::json::parse(body, ec);
  if (ec) {
    return bad_request("control body is not valid JSON");
  }
  if (!check_document(root, unbounded_sizes)) {
    return bad_request("control body holds a number JSON cannot carry or text that is not UTF-8");
  }
  const boost::json::object* obj = root.if_object();
  if (obj == nullptr) {
    return bad_request("control body is not a JSON object");
  }

  sse_control_parse out;
  sse_control& control = out.control;
  control.kind = kind;

  const boost::json::value* connection_id = obj->if_contains("connectionId");
  if (connection_id == nullptr || !connection_id->is_string() ||
      connection_id->get_string().empty()) {
    return bad_request("connectionId must be a non-empty string");
  }
  control.connection_id = std::string(view(connection_id->get_string()));

  const boost::json::value* query_id = obj->if_contains("queryId");
  if (query_id == nullptr || !query_id->is_string()) {
    return bad_request("queryId must be a string");
  }
  control.query_id = std::string(view(query_id->get_string()));

  if (kind == sse_control_kind::subscribe) {
    const boost::json::value* request = obj->if_contains("request");
    if (request == nullptr) {
      return bad_request("subscribe needs a request");
    }
    auto parsed = parse_subscription_request(*request);
    if (!parsed) {
      return bad_request("request is not a valid SubscriptionRequest");
    }
    control.request = std::move(parsed).value();
  }

  bool late_invalid = !valid_query_id(control.query_id);
  if (const boost::json::value* revision = obj->if_contains("revision");
      revision != nullptr && !revision->is_null()) {
    auto parsed = parse_revision(*revision);
    if (parsed) {
      control.revision = *parsed;
    } else {
      late_invalid = true;
    }
  }
  if (late_invalid) {
    out.late_error_status = 400u;
  }
  return out;
}

std::string encode_sse_data(std::string_view json) {
  assert(json.find_first_of("\r\n") == std::string_view::npos &&
         "SSE data must be single-line JSON");
  std::string out;
  out.reserve(json.size() + 8);
  out += "data: ";
  out += json;
  out += "\n\n";
  return out;
}

}  // namespace weir::core

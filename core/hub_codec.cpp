// Client-frame parsing (Arc hub §2.2, §2.3, §4 wire rule, §8 malformed input) and the small
// server frames of §2.1. Frames are written by hand: the field order is part of the contract and
// hand-writing avoids building a DOM for a handful of members.
#include "core/hub_codec.hpp"

#include <array>
#include <cmath>
#include <cstddef>

#include <boost/json/parse.hpp>

#include "core/document_check.hpp"

namespace weir::core {

namespace {

constexpr std::int64_t max_safe_int64 = 9007199254740991;  // 2^53 - 1
constexpr double max_safe_double = 9007199254740991.0;

constexpr std::size_t max_query_id_length = 256;
constexpr std::size_t max_query_name_length = 180;
constexpr std::size_t max_arguments = 128;
constexpr std::size_t max_argument_name_length = 128;
constexpr std::size_t max_argument_value_length = 4096;
constexpr std::size_t max_option_length = 256;
constexpr std::uint64_t max_page_size = 1000;

error malformed() {
  return make_error(std::string(hub_malformed_code), std::string(hub_error_text::malformed));
}

char to_lower_ascii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals_ascii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (to_lower_ascii(a[i]) != to_lower_ascii(b[i])) {
      return false;
    }
  }
  return true;
}

bool is_alpha(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// ^[A-Za-z][A-Za-z0-9_]*$
bool is_identifier(std::string_view s) {
  if (s.empty() || !is_alpha(s[0])) {
    return false;
  }
  for (char c : s.substr(1)) {
    if (!is_alpha(c) && !is_digit(c) && c != '_') {
      return false;
    }
  }
  return true;
}

// JavaScript's String.length for valid UTF-8 input (Boost.JSON has validated it): one unit per
// code point, two for code points above U+FFFF (4-byte sequences).
std::size_t utf16_length(std::string_view s) {
  std::size_t n = 0;
  for (char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    if ((b & 0xC0) != 0x80) {
      n += (b >= 0xF0) ? 2 : 1;
    }
  }
  return n;
}

std::string_view view(const boost::json::string& s) {
  return {s.data(), s.size()};
}

bool valid_query_name(std::string_view name) {
  if (utf16_length(name) > max_query_name_length) {
    return false;
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string_view part =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!is_identifier(part)) {
      return false;
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    start = dot + 1;
  }
}

bool reserved_argument(std::string_view name) {
  static constexpr std::array<std::string_view, 6> reserved = {
      "page",          "pagesize",           "sortby",
      "sortdirection", "waitforfirstresult", "waitforfirstresulttimeout"};
  for (std::string_view r : reserved) {
    if (iequals_ascii(name, r)) {
      return true;
    }
  }
  return false;
}

// JavaScript's Number.isSafeInteger over whatever kind Boost.JSON chose (`25.0` is 25).
std::optional<std::int64_t> safe_integer(const boost::json::value& v) {
  if (v.is_int64()) {
    const std::int64_t i = v.get_int64();
    if (i >= -max_safe_int64 && i <= max_safe_int64) {
      return i;
    }
    return std::nullopt;
  }
  if (v.is_uint64()) {
    const std::uint64_t u = v.get_uint64();
    if (u <= static_cast<std::uint64_t>(max_safe_int64)) {
      return static_cast<std::int64_t>(u);
    }
    return std::nullopt;
  }
  if (v.is_double()) {
    const double d = v.get_double();
    if (std::isfinite(d) && std::trunc(d) == d && d >= -max_safe_double && d <= max_safe_double) {
      return static_cast<std::int64_t>(d);
    }
  }
  return std::nullopt;
}

std::optional<std::uint64_t> non_negative_safe_integer(const boost::json::value& v) {
  const auto i = safe_integer(v);
  if (!i || *i < 0) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(*i);
}

// A bounded optional string member: absent/null → nullopt, a string within `max` → the text,
// anything else → failure (signalled through `ok`).
std::optional<std::string> bounded_string(const boost::json::value& v, bool& ok) {
  if (v.is_null()) {
    return std::nullopt;
  }
  const boost::json::string* s = v.if_string();
  if (s == nullptr || utf16_length(view(*s)) > max_option_length) {
    ok = false;
    return std::nullopt;
  }
  return std::string(view(*s));
}

result<std::vector<std::pair<std::string, std::string>>> parse_arguments(
    const boost::json::value& v) {
  std::vector<std::pair<std::string, std::string>> out;
  if (v.is_null()) {
    return out;
  }
  const boost::json::object* obj = v.if_object();
  if (obj == nullptr || obj->size() > max_arguments) {
    return malformed();
  }
  out.reserve(obj->size());
  for (const auto& member : *obj) {
    const std::string_view name = member.key();
    if (name.size() > max_argument_name_length || !is_identifier(name) || reserved_argument(name)) {
      return malformed();
    }
    const boost::json::value& value = member.value();
    if (value.is_null()) {
      continue;
    }
    const boost::json::string* s = value.if_string();
    if (s == nullptr || utf16_length(view(*s)) > max_argument_value_length) {
      return malformed();
    }
    out.emplace_back(std::string(name), std::string(view(*s)));
  }
  return out;
}

// Reads `queryId` and `revision` of a Subscribe/Unsubscribe frame into `frame`.
bool parse_target(const boost::json::object& obj, client_frame& frame) {
  const boost::json::value* id = obj.if_contains("queryId");
  if (id == nullptr || !id->is_string() || !valid_query_id(view(id->get_string()))) {
    return false;
  }
  frame.query_id = std::string(view(id->get_string()));
  const boost::json::value* rev = obj.if_contains("revision");
  if (rev != nullptr && !rev->is_null()) {
    auto parsed = parse_revision(*rev);
    if (!parsed) {
      return false;
    }
    frame.revision = *parsed;
  }
  return true;
}

void append_uint(std::string& out, std::uint64_t n) {
  out += std::to_string(n);
}
void append_int(std::string& out, std::int64_t n) {
  out += std::to_string(n);
}

std::string encode_timestamped(std::string_view type, std::int64_t timestamp_ms) {
  std::string out;
  out.reserve(48);
  out += "{\"type\":\"";
  out += type;
  out += "\",\"timestamp\":";
  append_int(out, timestamp_ms);
  out += '}';
  return out;
}

}  // namespace

bool subscription_request::descending() const {
  return sort_direction.has_value() && iequals_ascii(*sort_direction, "desc");
}

result<subscription_request> parse_subscription_request(const boost::json::value& v) {
  const boost::json::object* obj = v.if_object();
  if (obj == nullptr) {
    return malformed();
  }
  subscription_request req;
  bool have_name = false;
  bool ok = true;
  for (const auto& member : *obj) {
    const std::string_view key = member.key();
    const boost::json::value& value = member.value();
    if (key == "queryName") {
      const boost::json::string* s = value.if_string();
      if (s == nullptr || !valid_query_name(view(*s))) {
        return malformed();
      }
      req.query_name = std::string(view(*s));
      have_name = true;
    } else if (key == "arguments") {
      auto args = parse_arguments(value);
      if (!args) {
        return std::move(args).error();
      }
      req.arguments = std::move(args).value();
    } else if (key == "page" || key == "pageSize") {
      if (value.is_null()) {
        continue;
      }
      const auto n = non_negative_safe_integer(value);
      if (!n || (key == "pageSize" && *n > max_page_size)) {
        return malformed();
      }
      (key == "page" ? req.page : req.page_size) = *n;
    } else if (key == "sortBy") {
      req.sort_by = bounded_string(value, ok);
    } else if (key == "sortDirection") {
      req.sort_direction = bounded_string(value, ok);
    } else if (key == "transferMode") {
      const auto mode = bounded_string(value, ok);
      req.mode = mode ? parse_transfer_mode(*mode) : transfer_mode::legacy;
    } else {
      return malformed();
    }
    if (!ok) {
      return malformed();
    }
  }
  if (!have_name) {
    return malformed();
  }
  return req;
}

result<std::uint64_t> parse_revision(const boost::json::value& v) {
  if (v.is_int64()) {
    const std::int64_t i = v.get_int64();
    if (i >= 1 && i <= max_safe_int64) {
      return static_cast<std::uint64_t>(i);
    }
  } else if (v.is_uint64()) {
    const std::uint64_t u = v.get_uint64();
    if (u >= 1 && u <= static_cast<std::uint64_t>(max_safe_int64)) {
      return u;
    }
  }
  return malformed();
}

bool valid_query_id(std::string_view query_id) {
  if (query_id.empty() || query_id.size() > max_query_id_length) {
    return false;
  }
  for (char c : query_id) {
    if (!is_alpha(c) && !is_digit(c) && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

result<client_frame> parse_client_frame(std::string_view text) {
  boost::json::error_code ec;
  const boost::json::value root = boost::json::parse(text, ec);
  // A number JSON cannot carry (1e400) in a query's arguments would come back as `Infinity`.
  if (ec || !check_document(root, unbounded_sizes)) {
    return malformed();
  }
  const boost::json::object* obj = root.if_object();
  if (obj == nullptr) {
    return malformed();
  }
  const boost::json::value* type = obj->if_contains("type");
  if (type == nullptr || !type->is_string()) {
    return malformed();
  }
  const std::string_view type_text = view(type->get_string());
  client_frame frame;
  if (type_text == "Subscribe") {
    frame.type = client_frame_type::subscribe;
    if (!parse_target(*obj, frame)) {
      return malformed();
    }
    const boost::json::value* payload = obj->if_contains("payload");
    if (payload == nullptr) {
      return malformed();
    }
    auto req = parse_subscription_request(*payload);
    if (!req) {
      return std::move(req).error();
    }
    frame.request = std::move(req).value();
    return frame;
  }
  if (type_text == "Unsubscribe") {
    frame.type = client_frame_type::unsubscribe;
    if (!parse_target(*obj, frame)) {
      return malformed();
    }
    return frame;
  }
  if (type_text == "Ping") {
    frame.type = client_frame_type::ping;
    if (const boost::json::value* ts = obj->if_contains("timestamp")) {
      frame.timestamp = safe_integer(*ts);
    }
    return frame;
  }
  if (type_text == "Pong") {
    frame.type = client_frame_type::pong;
    return frame;
  }
  return malformed();
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0x0F];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

std::string encode_connected(std::string_view connection_id, std::int64_t keep_alive_ms) {
  std::string out;
  out.reserve(120 + connection_id.size());
  out += "{\"type\":\"Connected\",\"payload\":";
  append_json_string(out, connection_id);
  out += ",\"keepAliveIntervalMs\":";
  append_int(out, keep_alive_ms);
  out += ",\"supportsSubscriptionRevisions\":true}";
  return out;
}

std::string encode_ping(std::int64_t timestamp_ms) {
  return encode_timestamped("Ping", timestamp_ms);
}

std::string encode_pong(std::int64_t timestamp_ms) {
  return encode_timestamped("Pong", timestamp_ms);
}

std::string encode_error(std::optional<std::string_view> query_id,
                         std::optional<std::uint64_t> revision, std::string_view text) {
  std::string out;
  out.reserve(64 + text.size() + (query_id ? query_id->size() : 0));
  out += "{\"type\":\"Error\"";
  if (query_id) {
    out += ",\"queryId\":";
    append_json_string(out, *query_id);
  }
  if (revision) {
    out += ",\"revision\":";
    append_uint(out, *revision);
  }
  out += ",\"payload\":";
  append_json_string(out, text);
  out += '}';
  return out;
}

std::string encode_unauthorized(std::string_view query_id, std::optional<std::uint64_t> revision) {
  std::string out;
  out.reserve(64 + query_id.size());
  out += "{\"type\":\"Unauthorized\",\"queryId\":";
  append_json_string(out, query_id);
  if (revision) {
    out += ",\"revision\":";
    append_uint(out, *revision);
  }
  out += '}';
  return out;
}

}  // namespace weir::core

// The SSE hub Origin rule (arc-hub §8). Origins are compared as normalized strings, so the
// request's own origin, the inbound Origin and the configured list all go through one parser.
#include "core/origin.hpp"

#include <cstdint>

namespace weir::core {

namespace {

constexpr std::uint32_t max_port = 65535;

char to_lower_ascii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_alpha(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = to_lower_ascii(c);
  }
  return out;
}

// RFC 3986 scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
bool valid_scheme(std::string_view s) {
  if (s.empty() || !is_alpha(s[0])) {
    return false;
  }
  for (char c : s.substr(1)) {
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

// RFC 3986 reg-name (unreserved / sub-delims / '%'); '@', '/', '?', '#', ':' and spaces are not.
bool valid_reg_name(std::string_view s) {
  if (s.empty()) {
    return false;
  }
  for (char c : s) {
    const bool ok = is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
                    c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' || c == ')' ||
                    c == '*' || c == '+' || c == ',' || c == ';' || c == '=' || c == '%';
    if (!ok) {
      return false;
    }
  }
  return true;
}

// "[...]" with hex digits, ':' and '.' inside (IPv6, possibly with an embedded IPv4).
bool valid_ip_literal(std::string_view s) {
  if (s.size() < 3 || s.front() != '[' || s.back() != ']') {
    return false;
  }
  for (char c : s.substr(1, s.size() - 2)) {
    if (!is_hex(c) && c != ':' && c != '.') {
      return false;
    }
  }
  return true;
}

// 1+ digits up to 65535; leading zeros are dropped ("080" → "80").
std::optional<std::string> normalize_port(std::string_view s) {
  if (s.empty()) {
    return std::nullopt;
  }
  std::uint32_t value = 0;
  for (char c : s) {
    if (!is_digit(c)) {
      return std::nullopt;
    }
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
    if (value > max_port) {
      return std::nullopt;
    }
  }
  return std::to_string(value);
}

std::string_view default_port(std::string_view lowered_scheme) {
  if (lowered_scheme == "http") {
    return "80";
  }
  if (lowered_scheme == "https") {
    return "443";
  }
  return {};
}

// `host[:port]` → normalized `scheme://host[:port]`; `scheme` is already lowercased and valid.
std::optional<std::string> normalize_authority(std::string_view scheme,
                                               std::string_view authority) {
  std::string_view host = authority;
  std::optional<std::string_view> port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    host = authority.substr(0, close + 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return std::nullopt;
      }
      port = rest.substr(1);
    }
    if (!valid_ip_literal(host)) {
      return std::nullopt;
    }
  } else {
    const std::size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    if (!valid_reg_name(host)) {
      return std::nullopt;
    }
  }
  std::string out(scheme);
  out += "://";
  out += lower(host);
  if (port) {
    auto normalized = normalize_port(*port);
    if (!normalized) {
      return std::nullopt;
    }
    if (*normalized != default_port(scheme)) {
      out += ':';
      out += *normalized;
    }
  }
  return out;
}

std::optional<std::string> own_origin(std::string_view scheme, std::string_view host_header) {
  const std::string lowered = lower(scheme);
  if (lowered != "http" && lowered != "https") {
    return std::nullopt;
  }
  return normalize_authority(lowered, host_header);
}

}  // namespace

std::optional<std::string> normalize_origin(std::string_view origin) {
  const std::size_t sep = origin.find("://");
  if (sep == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view scheme = origin.substr(0, sep);
  if (!valid_scheme(scheme)) {
    return std::nullopt;
  }
  std::string_view authority = origin.substr(sep + 3);
  if (!authority.empty() && authority.back() == '/') {
    authority.remove_suffix(1);
  }
  return normalize_authority(lower(scheme), authority);
}

bool origin_allowed(std::string_view scheme, std::string_view host_header,
                    std::optional<std::string_view> origin, const origin_policy& policy) {
  if (!origin) {
    return true;
  }
  if (*origin == "null") {
    return policy.allow_null;
  }
  const auto normalized = normalize_origin(*origin);
  if (!normalized) {
    return false;
  }
  if (const auto own = own_origin(scheme, host_header); own && *own == *normalized) {
    return true;
  }
  for (const std::string& allowed : policy.allowed_origins) {
    if (const auto entry = normalize_origin(allowed); entry && *entry == *normalized) {
      return true;
    }
  }
  return false;
}

}  // namespace weir::core

// weir::core::ip_network — parsing with inet_pton, prefix matching on bytes.
#include "core/ip_network.hpp"

#include <arpa/inet.h>

#include <charconv>

#include "core/http_text.hpp"

namespace weir::core {

namespace {

std::optional<std::pair<bool, std::array<std::uint8_t, 16>>> parse_address(std::string_view s) {
  std::string text{s};
  // IPv4-mapped IPv6 peers ("::ffff:10.0.0.1") are matched as the IPv4 address they carry.
  if (text.starts_with("::ffff:") && text.find('.') != std::string::npos) {
    text = text.substr(7);
  }
  std::array<std::uint8_t, 16> bytes{};
  if (inet_pton(AF_INET, text.c_str(), bytes.data()) == 1) {
    return std::pair{false, bytes};
  }
  if (inet_pton(AF_INET6, text.c_str(), bytes.data()) == 1) {
    return std::pair{true, bytes};
  }
  return std::nullopt;
}

}  // namespace

std::optional<ip_network> ip_network::parse(std::string_view text) {
  auto slash = text.find('/');
  auto addr = parse_address(text.substr(0, slash));
  if (!addr) {
    return std::nullopt;
  }
  ip_network n;
  n.v6_ = addr->first;
  n.bytes_ = addr->second;
  unsigned max = n.v6_ ? 128 : 32;
  n.prefix_ = max;
  if (slash != std::string_view::npos) {
    auto p = text.substr(slash + 1);
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), n.prefix_);
    if (p.empty() || ec != std::errc{} || ptr != p.data() + p.size() || n.prefix_ > max) {
      return std::nullopt;
    }
  }
  return n;
}

bool ip_network::contains(std::string_view address) const {
  auto addr = parse_address(address);
  if (!addr || addr->first != v6_) {
    return false;
  }
  unsigned full = prefix_ / 8;
  for (unsigned i = 0; i < full; ++i) {
    if (addr->second[i] != bytes_[i]) {
      return false;
    }
  }
  if (unsigned rest = prefix_ % 8; rest != 0) {
    auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
    return (addr->second[full] & mask) == (bytes_[full] & mask);
  }
  return true;
}

bool is_trusted(const std::vector<ip_network>& networks, std::string_view address) {
  for (const auto& n : networks) {
    if (n.contains(address)) {
      return true;
    }
  }
  return false;
}

std::string client_address(const std::vector<ip_network>& trusted, std::string_view peer,
                           std::optional<std::string_view> forwarded_for) {
  if (!forwarded_for || !is_trusted(trusted, peer)) {
    return std::string{peer};
  }
  std::string_view chain = *forwarded_for;
  std::string_view candidate = peer;
  // Right to left: each hop was appended by the one after it; stop at the first untrusted one.
  while (!chain.empty()) {
    auto comma = chain.rfind(',');
    auto hop = trim_ows(comma == std::string_view::npos ? chain : chain.substr(comma + 1));
    chain = comma == std::string_view::npos ? std::string_view{} : chain.substr(0, comma);
    if (!parse_address(hop)) {
      break;  // garbage: believe nothing further left
    }
    candidate = hop;
    if (!is_trusted(trusted, hop)) {
      break;
    }
  }
  return std::string{candidate};
}

}  // namespace weir::core

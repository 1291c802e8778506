// weir::core::ip_network — an IPv4 or IPv6 address range ("10.0.0.0/8", "::1", "fd00::/8"), for
// `http.trustedProxies`, and the client address a request stands for behind trusted proxies.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::core {

class ip_network {
 public:
  /// "address" or "address/prefix"; nullopt when it is neither.
  static std::optional<ip_network> parse(std::string_view text);
  /// True when `address` (textual, as the socket or X-Forwarded-For gives it) is in the range.
  bool contains(std::string_view address) const;

 private:
  bool v6_ = false;
  std::array<std::uint8_t, 16> bytes_{};
  unsigned prefix_ = 0;
};

/// True when `address` is in one of `networks`.
bool is_trusted(const std::vector<ip_network>& networks, std::string_view address);

/// The address a request comes from: the peer's, or — when the peer is a trusted proxy — the
/// right-most address of X-Forwarded-For that is not itself a trusted proxy (RFC 7239 §5.2's
/// reasoning: only the hops appended by trusted proxies can be believed).
std::string client_address(const std::vector<ip_network>& trusted, std::string_view peer,
                           std::optional<std::string_view> forwarded_for);

}  // namespace weir::core

// weir::core origin — the browser Origin rule of the SSE hub (arc-hub §8 "Origin rule",
// Decision 4): same origin from the request's own scheme and Host, exact configured extras,
// `null` only when configured, no Origin allowed. Forwarded headers never take part.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::core {

/// Which browser origins besides the request's own may use the SSE hub.
struct origin_policy {
  /// Exact origins, `scheme://host[:port]`, compared after normalization (see origin_allowed).
  /// An entry that does not parse as an origin matches nothing.
  std::vector<std::string> allowed_origins;
  /// Admit `Origin: null` (sandboxed frames, file: pages...).
  bool allow_null = false;
};

/// True when a request carrying `origin` may use the hub.
/// - No Origin header (nullopt): a non-browser client, allowed.
/// - Exactly `null`: allowed only when policy.allow_null.
/// - Otherwise the Origin must parse as `scheme://host[:port]` (an optional single trailing '/'
///   is tolerated; a longer path, query, fragment, userinfo, empty host or bad port makes it
///   malformed, hence refused). It is normalized — scheme and host lowercased, leading zeros of
///   the port dropped, `:80` dropped for http and `:443` for https — and allowed when equal to
///   the request's own origin or to a normalized policy.allowed_origins entry.
/// The request's own origin is `scheme://host_header`, normalized the same way; `scheme` is the
/// transport's ("http" or "https", any case), or the one a trusted proxy reports (the gateway
/// decides which). With another scheme or an empty/unparsable Host, same-origin cannot hold and
/// only the allowed list counts.
bool origin_allowed(std::string_view scheme, std::string_view host_header,
                    std::optional<std::string_view> origin, const origin_policy& policy);

/// The normalized form of an origin (`https://a.example:8443`), or nullopt when `origin` is not a
/// well-formed serialized origin. Exposed so configuration can be checked at load time.
std::optional<std::string> normalize_origin(std::string_view origin);

}  // namespace weir::core

// weir::core::valid_utf8 — strict UTF-8 validation (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF). Every text Weir puts into JSON or a WebSocket text frame must pass it:
// ids from URL paths and gRPC fields, query arguments, header values echoed back, and the
// WebSocket frames a client sends (RFC 6455 §8.1).
#pragma once

#include <string_view>

namespace weir::core {

/// Whether `s` is well-formed UTF-8. Refuses rather than repairs: a caller that sent bytes that
/// are not text gets an error, never a silently altered id.
bool valid_utf8(std::string_view s);

}  // namespace weir::core

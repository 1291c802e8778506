// weir_load wire codecs — just enough HTTP/1.1, chunked coding, SSE and WebSocket (RFC 6455
// client side) to drive Weir and nchan over plain sockets without a per-connection library
// object: every parser works on the caller's buffer and keeps a few integers of state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::bench {

/// A parsed response head.
struct http_head {
  unsigned status = 0;
  bool chunked = false;
  std::optional<std::size_t> content_length;
  std::size_t size = 0;  ///< bytes of the head, the blank line included
};

/// Parses a response head at the start of `buf`; nullopt until the blank line has arrived.
std::optional<http_head> parse_http_head(std::string_view buf);

/// Incremental decoder of chunked transfer coding.
class chunked_decoder {
 public:
  /// Consumes what it can from `in` (erasing it), appending decoded bytes to `out`. Returns
  /// false on a coding error. Sets done() after the last chunk.
  bool feed(std::string& in, std::string& out);
  bool done() const { return done_; }

 private:
  std::size_t left_ = 0;  // bytes left in the current chunk
  bool need_crlf_ = false;
  bool done_ = false;
};

/// Takes the next complete SSE event from `buf` (erasing it); returns its `data:` lines joined
/// by '\n', or nullopt when no complete event is buffered. Events without data give "".
std::optional<std::string> next_sse_event(std::string& buf);

/// One WebSocket frame from the server.
struct ws_frame {
  std::uint8_t opcode = 0;
  bool fin = true;
  std::string_view payload;  ///< points into the buffer given to parse_ws_frame
  std::size_t size = 0;      ///< whole frame, header included
};

/// Parses an (unmasked) server frame at the start of `buf`; nullopt until it is complete.
std::optional<ws_frame> parse_ws_frame(std::string_view buf);

/// Encodes a masked client frame (RFC 6455 §5.3).
std::string encode_ws_frame(std::uint8_t opcode, std::string_view payload);

/// The integer after `"key":` in `text`, or -1.
std::int64_t json_int_after(std::string_view text, std::string_view quoted_key_colon);

/// The string value after `"key":"`, or "".
std::string_view json_string_after(std::string_view text, std::string_view quoted_key_colon_quote);

}  // namespace weir::bench

// weir::gateway stream refusals — the one answer a streaming session gives instead of its
// stream (the request's error, or a hub that is full): the response head every such refusal
// carries, and its write, after which the connection is half-closed. Shared by the SSE hub and
// windowed stream sessions, so their refusals carry the same headers and end the same way.
// Internal to gateway/ (Beast).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "gateway/beast.hpp"

namespace weir::gateway {

using refusal_response = http::response<http::string_body>;

/// A refusal: `status`, `Server: weir`, `Cache-Control: no-store`, the request's correlation id,
/// not kept alive; `body` (a JSON error envelope) with its Content-Type when not empty, else
/// `Content-Length: 0`. Add headers (Retry-After) before writing it.
inline std::shared_ptr<refusal_response> stream_refusal(unsigned status, unsigned version,
                                                        std::string_view correlation,
                                                        std::string body = {}) {
  auto res = std::make_shared<refusal_response>(static_cast<http::status>(status), version);
  res->set(http::field::server, "weir");
  res->set(http::field::cache_control, "no-store");
  res->set("X-Correlation-ID", correlation);
  if (!body.empty()) {
    res->set(http::field::content_type, "application/json");
    res->body() = std::move(body);
  }
  res->keep_alive(false);
  return res;
}

/// Writes `res` on `stream` (the session's own), then half-closes the connection. The write is
/// bounded (10 s), so a client that does not read cannot hold the session; `self` keeps the
/// session alive until it ends.
template <class Session>
void write_refusal(std::shared_ptr<Session> self, beast::tcp_stream& stream,
                   std::shared_ptr<refusal_response> res) {
  res->prepare_payload();
  stream.expires_after(std::chrono::seconds(10));
  http::async_write(stream, *res,
                    [self = std::move(self), res, &stream](beast::error_code ec, std::size_t) {
                      stream.socket().shutdown(tcp::socket::shutdown_send, ec);
                    });
}

}  // namespace weir::gateway

// weir::gateway stream refusals — the one answer a streaming session gives instead of its
// stream (the request's error, or a hub that is full): the response head every such refusal
// carries, and its write, after which the connection is half-closed and, after a short linger,
// closed. Shared by the SSE hub, windowed stream and WebSocket hub sessions (the last refuses
// an upgrade over its budget with it, before any read: its socket goes once the answer is
// written), so their refusals carry the same headers and end the same way. Internal to
// gateway/ (Beast).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/steady_timer.hpp>

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

/// How long a refused connection stays half-closed for its client to close it. A session that
/// already had its hang-up read pending (a windowed stream refused after it began) would
/// otherwise live, with its socket, for as long as a client that never closes keeps it open.
inline constexpr std::chrono::seconds refusal_linger{2};

/// Writes `res` on `stream` (the session's own), then half-closes the connection, and closes the
/// socket `refusal_linger` later if the session is still there (a pending read then ends). The
/// write is bounded (10 s), so a client that does not read cannot hold the session either;
/// `self` keeps the session alive until the write ends, the linger only watches it.
template <class Session>
void write_refusal(std::shared_ptr<Session> self, beast::tcp_stream& stream,
                   std::shared_ptr<refusal_response> res) {
  res->prepare_payload();
  stream.expires_after(std::chrono::seconds(10));
  http::async_write(
      stream, *res, [self = std::move(self), res, &stream](beast::error_code ec, std::size_t) {
        stream.socket().shutdown(tcp::socket::shutdown_send, ec);
        auto linger = std::make_shared<asio::steady_timer>(stream.get_executor(), refusal_linger);
        linger->async_wait(
            [linger, weak = std::weak_ptr<Session>{self}, &stream](beast::error_code) {
              if (auto alive = weak.lock()) {
                beast::error_code ignore;
                stream.socket().close(ignore);
              }
            });
      });
}

}  // namespace weir::gateway

// weir::gateway sse_head — the head of every event stream Weir answers (the SSE hub and the
// direct and AG-UI state streams it carries, windowed streams, the admin page's stream, and the
// HEAD probes of these), written once so that the streams cannot drift apart (they had:
// `X-Content-Type-Options` was on one only, and HTTP/1.0 framing on two). The media type is the
// one thing that differs, each protocol's own; and how such a stream ends. Internal to gateway/.
#pragma once

#include <memory>
#include <string_view>

#include <boost/asio/steady_timer.hpp>

#include "gateway/beast.hpp"

namespace weir::gateway {

/// The Arc hub's streams and Weir's others: seed 001 names the charset.
inline constexpr std::string_view sse_content_type = "text/event-stream; charset=utf-8";
/// Windowed streams: windowed-subscribe §4 names the bare media type (SSE is UTF-8 either way).
inline constexpr std::string_view windowed_sse_content_type = "text/event-stream";

/// A 200 event-stream head: `Content-Type` (`content_type`), `Cache-Control: no-cache`,
/// `X-Accel-Buffering: no` (proxies such as nginx must not buffer it),
/// `X-Content-Type-Options: nosniff`, and the request's `X-Correlation-ID`.
template <class Body>
void set_sse_head(http::response<Body>& res, unsigned version, std::string_view correlation_id,
                  std::string_view content_type = sse_content_type) {
  res.version(version);
  res.result(http::status::ok);
  res.set(http::field::server, "weir");
  res.set(http::field::content_type, content_type);
  res.set(http::field::cache_control, "no-cache");
  res.set("X-Accel-Buffering", "no");
  res.set("X-Content-Type-Options", "nosniff");
  res.set("X-Correlation-ID", correlation_id);
}

/// How the stream's body is framed: on HTTP/1.1 chunked, `Connection: keep-alive`; HTTP/1.0 has
/// no chunked coding, so there the body is the rest of the connection (no `Connection` header:
/// an HTTP/1.0 connection closes by default).
/// Returns whether the body is chunked.
template <class Body>
bool set_sse_framing(http::response<Body>& res) {
  if (res.version() >= 11) {
    res.set(http::field::connection, "keep-alive");
    res.chunked(true);
    return true;
  }
  res.keep_alive(false);
  return false;
}

/// Ends an event stream whose last event is out, in its framing: chunked, the terminating chunk
/// is written and then the connection closed; otherwise (HTTP/1.0) the connection is closed,
/// which ends the body. `deadline` is the session's close deadline: left armed while the
/// terminator is written, it is the one thing that ends that write when the client stopped
/// reading (its handler closes the socket), and is cancelled once the write is done. `writing`
/// is the session's flag for a write in flight; `self` keeps the session alive until the end.
/// Shared by the windowed and admin events sessions (the SSE hub's stream ends with its
/// connection).
template <class Session>
void end_event_stream(std::shared_ptr<Session> self, beast::tcp_stream& stream, bool chunked,
                      asio::steady_timer& deadline, bool& writing) {
  beast::error_code ec;
  if (!chunked) {
    deadline.cancel();
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream.socket().close(ec);
    return;
  }
  writing = true;
  auto last = std::make_shared<http::chunk_last<>>(http::make_chunk_last());
  asio::async_write(stream, *last,
                    [self = std::move(self), last, &stream, &deadline, &writing](
                        beast::error_code ec, std::size_t) {
                      writing = false;
                      deadline.cancel();
                      stream.socket().shutdown(tcp::socket::shutdown_both, ec);
                      stream.socket().close(ec);
                    });
}

}  // namespace weir::gateway

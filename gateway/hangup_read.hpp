// weir::gateway::read_until_hangup — the one read an event-stream session keeps pending: the
// client of an SSE stream sends nothing after its request, so a server learns that it left
// only when a read ends. What the client does send is discarded. Shared by the SSE hub, the
// windowed stream and the admin events sessions. Internal to gateway/ (Beast).
#pragma once

#include <array>
#include <cstddef>
#include <memory>

#include "gateway/beast.hpp"

namespace weir::gateway {

/// Reads and discards from `stream` until the connection ends, then calls `gone(*self)` once
/// (on the stream's executor). The pending read holds `self`, so the session lives as long as
/// its client; `stream` and `buf` are the session's own.
template <class Session, class Gone>
void read_until_hangup(std::shared_ptr<Session> self, beast::tcp_stream& stream,
                       std::array<char, 512>& buf, Gone gone) {
  stream.async_read_some(asio::buffer(buf), [self = std::move(self), &stream, &buf, gone](
                                                beast::error_code ec, std::size_t) mutable {
    if (ec) {
      gone(*self);
      return;
    }
    read_until_hangup(std::move(self), stream, buf, gone);
  });
}

}  // namespace weir::gateway

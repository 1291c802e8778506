// weir::gateway::write_now — a gather write tried at once, without the reactor: the hub
// sessions' common case is an idle socket with room in its send buffer, where a non-blocking
// sendmsg takes the whole batch and there is nothing to wait for. Going through async_write
// instead costs a reactor operation and a completion handler per batch, which the fan-out
// profile showed at about a tenth of the node's CPU per delivered frame (docs/performance.md).
// Only when the kernel takes less than all does the caller hand the rest to watched_write.
// Internal to gateway/.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <string>
#include <vector>

#include "gateway/beast.hpp"

namespace weir::gateway {

/// Writes as much of `bufs` as the socket takes now. Returns true when everything was written.
/// Otherwise `bufs` is trimmed to what is left and either `ec` holds the socket's error, or it is
/// clear and the rest must wait for the socket to drain (watched_write).
inline bool write_now(tcp::socket& sock, std::vector<asio::const_buffer>& bufs,
                      beast::error_code& ec) {
  ec = {};
  // sendmsg itself rather than socket::write_some, which passes at most 64 pieces per call: a
  // batch of 64 frames is a few hundred pieces (WS: header, head, body, tail; SSE: five per
  // frame), one syscall here.
  constexpr std::size_t max_iov = 1024;  // IOV_MAX on Linux
  std::array<iovec, max_iov> iov;
  std::size_t done = 0;  // pieces fully written
  std::size_t part = 0;  // bytes written of bufs[done]
  while (done < bufs.size()) {
    std::size_t count = 0;
    std::size_t want = 0;
    for (auto i = done; i < bufs.size() && count < max_iov; ++i, ++count) {
      auto skip = i == done ? part : 0;
      iov[count].iov_base = const_cast<char*>(static_cast<const char*>(bufs[i].data()) + skip);
      iov[count].iov_len = bufs[i].size() - skip;
      want += iov[count].iov_len;
    }
    msghdr msg{};
    msg.msg_iov = iov.data();
    msg.msg_iovlen = count;
    auto n = ::sendmsg(sock.native_handle(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        ec = beast::error_code{errno, boost::system::system_category()};
      }
      break;
    }
    auto left = static_cast<std::size_t>(n);
    while (done < bufs.size() && left >= bufs[done].size() - part) {
      left -= bufs[done].size() - part;
      part = 0;
      ++done;
    }
    part += left;
    if (static_cast<std::size_t>(n) < want) {
      break;  // the send buffer is full
    }
  }
  if (done == bufs.size()) {
    return true;
  }
  // Keep what is left; the first piece may start part-way.
  bufs.erase(bufs.begin(), bufs.begin() + static_cast<std::ptrdiff_t>(done));
  bufs.front() += part;
  return false;
}

/// What a session keeps of a batch the socket did not take at once, for watched_write: the pieces
/// left, where those that lay in the caller's scratch (frame headers, a chunk-size line) now
/// point into a copy of it. The frames' own bytes are not copied: shared bodies stay shared, and
/// the batch's frames stay queued until the write completes.
struct unsent_batch {
  std::vector<asio::const_buffer> pieces;
  std::string scratch;

  /// Keeps `left`; `scratch_begin`/`scratch_size` is the caller's short-lived region.
  void keep(const std::vector<asio::const_buffer>& left, const void* scratch_begin,
            std::size_t scratch_size) {
    auto* b = static_cast<const char*>(scratch_begin);
    scratch.assign(b, scratch_size);
    pieces.clear();
    for (const auto& p : left) {
      auto* d = static_cast<const char*>(p.data());
      if (d >= b && d < b + scratch_size) {
        pieces.emplace_back(scratch.data() + (d - b), p.size());
      } else {
        pieces.push_back(p);
      }
    }
  }

  /// Once written: a lagging client's copies are not kept after it caught up.
  void release() {
    std::vector<asio::const_buffer>{}.swap(pieces);
    std::string{}.swap(scratch);
  }
};

}  // namespace weir::gateway

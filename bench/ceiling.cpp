// weir_ceiling — the physical reference for fan-out on this machine: the least a server can do to
// deliver a published message to N subscribers. One thread, level-triggered epoll, no parsing
// beyond the request head and Content-Length, each message framed once (a WebSocket text frame
// and an SSE `data:` event), and what one wake-up published to a channel handed to every
// subscriber's socket with one send() of those shared bytes. It speaks nchan's URLs, so weir_load
// drives it exactly as it drives nginx + nchan
// (`--server ceiling`): subscribers `GET /sub/<channel>` (WebSocket upgrade or
// `Accept: text/event-stream`), publishers `POST /pub/<channel>` (keep-alive, pipelined).
//
// Hand-written on purpose, and only for bench/: it is the measuring stick, so nothing in it may
// cost what a library's generality costs. It stores nothing, authenticates nothing, checks
// nothing a benchmark does not need; it must never face a real network.
//
//   weir_ceiling --port 8080
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

constexpr std::size_t max_backlog_bytes = 16u << 20;  // a subscriber this far behind is dropped
constexpr std::size_t max_request_bytes = 1u << 20;

enum class kind { head, ws, sse, pub };

struct channel;

struct conn {
  int fd = -1;
  kind k = kind::head;
  std::string in;   // request bytes not yet handled (heads and publisher bodies only)
  std::string out;  // bytes the kernel did not take yet
  bool polling_out = false;
  channel* ch = nullptr;
  std::size_t slot = 0;  // position in its channel's list
};

struct channel {
  std::vector<conn*> ws, sse;
  std::string ws_pending, sse_pending;  // frames published in this epoll batch, framed once
  bool dirty = false;
};

int ep = -1;
std::unordered_map<std::string, channel> channels;
std::vector<conn*> graveyard;  // closed in this epoll batch; freed after it (events may name them)
std::vector<channel*> dirty;   // channels with frames published in this epoll batch
char scratch[256 * 1024];

bool iequals_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size()) {
    return false;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) {
      return false;
    }
  }
  return true;
}

/// The value of header `name` (lower case, with the colon) in `head`, trimmed; empty if absent.
std::string_view header(std::string_view head, std::string_view name) {
  std::size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    auto start = pos + 2;
    auto end = head.find("\r\n", start);
    auto line = head.substr(start, end == std::string_view::npos ? end : end - start);
    if (iequals_prefix(line, name)) {
      auto v = line.substr(name.size());
      while (!v.empty() && v.front() == ' ') {
        v.remove_prefix(1);
      }
      return v;
    }
    pos = end;
  }
  return {};
}

std::string ws_accept(std::string_view key) {
  std::string s{key};
  s += "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(s.data()), s.size(), digest);
  unsigned char out[64];
  int n = EVP_EncodeBlock(out, digest, SHA_DIGEST_LENGTH);
  return std::string{reinterpret_cast<char*>(out), static_cast<std::size_t>(n)};
}

void watch_out(conn* c, bool on) {
  if (c->polling_out == on) {
    return;
  }
  epoll_event ev{};
  ev.events = on ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
  ev.data.ptr = c;
  epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
  c->polling_out = on;
}

void close_conn(conn* c) {
  if (c->fd < 0) {
    return;
  }
  if (c->ch) {
    auto& list = c->k == kind::ws ? c->ch->ws : c->ch->sse;
    list[c->slot] = list.back();
    list[c->slot]->slot = c->slot;
    list.pop_back();
  }
  c->ch = nullptr;
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, nullptr);
  ::close(c->fd);
  c->fd = -1;
  graveyard.push_back(c);
}

/// Sends `data` after what is already queued; false when the connection had to be dropped.
bool send_bytes(conn* c, std::string_view data) {
  if (c->out.empty()) {
    auto n = ::send(c->fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      return false;
    }
    auto sent = n < 0 ? 0 : static_cast<std::size_t>(n);
    if (sent == data.size()) {
      return true;
    }
    data.remove_prefix(sent);
  }
  if (c->out.size() + data.size() > max_backlog_bytes) {
    return false;
  }
  c->out.append(data);
  watch_out(c, true);
  return true;
}

void flush(conn* c) {
  auto n = ::send(c->fd, c->out.data(), c->out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
    close_conn(c);
    return;
  }
  if (n > 0) {
    c->out.erase(0, static_cast<std::size_t>(n));
  }
  if (c->out.empty()) {
    std::string{}.swap(c->out);
    watch_out(c, false);
  }
}

/// Frames `body` once per transport into its channel's batch; deliver() sends the batch.
void publish(std::string_view name, std::string_view body) {
  auto it = channels.find(std::string{name});
  if (it == channels.end()) {
    return;
  }
  auto& ch = it->second;
  if (!ch.ws.empty()) {
    auto& frame = ch.ws_pending;
    frame += static_cast<char>(0x81);
    if (body.size() < 126) {
      frame += static_cast<char>(body.size());
    } else if (body.size() < 65536) {
      frame += static_cast<char>(126);
      frame += static_cast<char>(body.size() >> 8);
      frame += static_cast<char>(body.size() & 0xff);
    } else {
      frame += static_cast<char>(127);
      for (int i = 7; i >= 0; --i) {
        frame += static_cast<char>((static_cast<std::uint64_t>(body.size()) >> (8 * i)) & 0xff);
      }
    }
    frame.append(body);
  }
  if (!ch.sse.empty()) {
    ch.sse_pending += "data: ";
    ch.sse_pending.append(body);
    ch.sse_pending += "\n\n";
  }
  if (!ch.dirty && (!ch.ws.empty() || !ch.sse.empty())) {
    ch.dirty = true;
    dirty.push_back(&ch);
  }
}

/// Sends each channel's batch to every subscriber: one send() of the same bytes per subscriber,
/// however many messages the batch holds (what a server can do at best per wake-up).
void deliver() {
  std::vector<conn*> dropped;
  for (auto* ch : dirty) {
    for (auto* c : ch->ws) {
      if (!send_bytes(c, ch->ws_pending)) {
        dropped.push_back(c);
      }
    }
    for (auto* c : ch->sse) {
      if (!send_bytes(c, ch->sse_pending)) {
        dropped.push_back(c);
      }
    }
    ch->ws_pending.clear();
    ch->sse_pending.clear();
    ch->dirty = false;
  }
  dirty.clear();
  for (auto* c : dropped) {
    close_conn(c);
  }
}

void subscribe(conn* c, const std::string& name, kind k) {
  auto& ch = channels[name];
  auto& list = k == kind::ws ? ch.ws : ch.sse;
  c->k = k;
  c->ch = &ch;
  c->slot = list.size();
  list.push_back(c);
}

/// Handles every complete request in `c->in`; false when the connection must close.
bool handle_requests(conn* c) {
  std::string responses;
  for (;;) {
    auto end = c->in.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (c->in.size() > max_request_bytes) {
        return false;
      }
      break;
    }
    std::string_view head{c->in.data(), end + 2};
    auto sp1 = head.find(' ');
    auto sp2 = head.find(' ', sp1 + 1);
    if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) {
      return false;
    }
    auto method = head.substr(0, sp1);
    auto path = head.substr(sp1 + 1, sp2 - sp1 - 1);
    if (method == "POST" && path.rfind("/pub/", 0) == 0) {
      auto len = std::strtoull(std::string{header(head, "content-length:")}.c_str(), nullptr, 10);
      if (len > max_request_bytes) {
        return false;
      }
      if (c->in.size() < end + 4 + len) {
        break;  // the body is still on its way
      }
      c->k = kind::pub;
      publish(path.substr(5), std::string_view{c->in}.substr(end + 4, len));
      responses += "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
      c->in.erase(0, end + 4 + len);
      continue;
    }
    if (method == "GET" && path.rfind("/sub/", 0) == 0 && c->k == kind::head) {
      std::string name{path.substr(5)};
      if (auto key = header(head, "sec-websocket-key:"); !key.empty()) {
        responses +=
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: " +
            ws_accept(key) + "\r\n\r\n";
        subscribe(c, name, kind::ws);
      } else {
        responses +=
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            "Connection: close\r\n\r\n";
        subscribe(c, name, kind::sse);
      }
      std::string{}.swap(c->in);
      break;  // a subscriber sends nothing more that matters
    }
    responses += "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    c->in.erase(0, end + 4);
  }
  return responses.empty() || send_bytes(c, responses);
}

void on_readable(conn* c) {
  for (;;) {
    auto n = ::recv(c->fd, scratch, sizeof scratch, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    }
    if (n <= 0) {
      close_conn(c);
      return;
    }
    // Subscribers' bytes (WebSocket pongs, a close) are read and dropped; the peer's EOF ends it.
    if (c->k == kind::head || c->k == kind::pub) {
      c->in.append(scratch, static_cast<std::size_t>(n));
      if (!handle_requests(c)) {
        close_conn(c);
        return;
      }
    }
    if (static_cast<std::size_t>(n) < sizeof scratch) {
      break;
    }
  }
  if (c->in.empty() && c->in.capacity() > 0) {
    std::string{}.swap(c->in);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string_view{argv[i]} == "--port") {
      port = std::atoi(argv[i + 1]);
    }
  }
  if (port <= 0 || port > 65535) {
    std::fprintf(stderr, "usage: weir_ceiling --port N\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(lfd, 4096) != 0) {
    std::perror("weir_ceiling: bind/listen");
    return 1;
  }
  ep = epoll_create1(0);
  epoll_event lev{};
  lev.events = EPOLLIN;
  lev.data.ptr = nullptr;  // the listener
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &lev);
  std::vector<epoll_event> events(1024);
  for (;;) {
    int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), -1);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    for (int i = 0; i < n; ++i) {
      auto* c = static_cast<conn*>(events[static_cast<std::size_t>(i)].data.ptr);
      if (c == nullptr) {
        for (;;) {
          int fd = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK);
          if (fd < 0) {
            break;
          }
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          auto* nc = new conn;
          nc->fd = fd;
          epoll_event ev{};
          ev.events = EPOLLIN;
          ev.data.ptr = nc;
          epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
        }
        continue;
      }
      auto e = events[static_cast<std::size_t>(i)].events;
      if ((e & EPOLLOUT) && c->fd >= 0) {
        flush(c);
      }
      if ((e & (EPOLLIN | EPOLLERR | EPOLLHUP)) && c->fd >= 0) {
        on_readable(c);
      }
    }
    deliver();
    for (auto* c : graveyard) {
      delete c;
    }
    graveyard.clear();
  }
}

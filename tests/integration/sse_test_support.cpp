// SSE test support (see the header). Plain POSIX sockets: the tests need the exact bytes on the
// wire (chunk framing, `data:` lines, the last chunk), a choosable source address, and reads
// that can time out and resume without losing data.
#include "sse_test_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include <boost/json.hpp>

namespace weir::test {

namespace json = boost::json;
using clock_type = std::chrono::steady_clock;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return std::string{s};
}

sockaddr_in loopback(const std::string& address, std::uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  ::inet_pton(AF_INET, address.c_str(), &sa.sin_addr);
  return sa;
}

/// Parses the head in `c.pending()` once complete (consuming it); false on timeout/EOF.
bool read_head(raw_connection& c, clock_type::time_point deadline, raw_response& out) {
  for (;;) {
    auto end = c.pending().find("\r\n\r\n");
    if (end != std::string::npos) {
      out.head = c.pending().substr(0, end + 2);
      c.pending().erase(0, end + 4);
      break;
    }
    if (!c.fill(deadline)) {
      if (c.eof()) {
        // Data might have arrived together with the EOF.
        if (c.pending().find("\r\n\r\n") != std::string::npos) {
          continue;
        }
      }
      return false;
    }
  }
  auto line_end = out.head.find("\r\n");
  std::string status_line = out.head.substr(0, line_end);
  // "HTTP/1.1 200 OK"
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) {
    ADD_FAILURE() << "bad status line: " << status_line;
    return false;
  }
  out.status = static_cast<unsigned>(std::stoi(status_line.substr(9, 3)));
  std::size_t pos = line_end + 2;
  while (pos < out.head.size()) {
    auto e = out.head.find("\r\n", pos);
    std::string line = out.head.substr(pos, e - pos);
    pos = e + 2;
    auto colon = line.find(':');
    if (colon == std::string::npos) {
      ADD_FAILURE() << "bad header line: " << line;
      return false;
    }
    auto name = line.substr(0, colon);
    out.header_names.push_back(name);
    out.headers[lower(name)] = trim(std::string_view{line}.substr(colon + 1));
  }
  return true;
}

/// Decodes one complete chunk at the front of `in` into `out`. Returns 1 when one was
/// decoded, 0 when more bytes are needed, -1 on a coding error, 2 for the last chunk.
int decode_one_chunk(std::string& in, std::string& out) {
  auto eol = in.find("\r\n");
  if (eol == std::string::npos) {
    return in.size() > 32 ? -1 : 0;
  }
  std::string size_text = in.substr(0, eol);
  if (size_text.empty() || size_text.size() > 16) {
    return -1;
  }
  std::size_t size = 0;
  for (char ch : size_text) {
    if (!std::isxdigit(static_cast<unsigned char>(ch))) {
      return -1;  // chunk extensions are not expected from the hub either
    }
    size = size * 16 +
           static_cast<std::size_t>(std::isdigit(static_cast<unsigned char>(ch))
                                        ? ch - '0'
                                        : std::tolower(static_cast<unsigned char>(ch)) - 'a' + 10);
  }
  if (size == 0) {
    // last-chunk, then no trailers: CRLF.
    if (in.size() < eol + 4) {
      return 0;
    }
    if (in.compare(eol + 2, 2, "\r\n") != 0) {
      return -1;
    }
    in.erase(0, eol + 4);
    return 2;
  }
  if (in.size() < eol + 2 + size + 2) {
    return 0;
  }
  if (in.compare(eol + 2 + size, 2, "\r\n") != 0) {
    return -1;
  }
  out.append(in, eol + 2, size);
  in.erase(0, eol + 2 + size + 2);
  return 1;
}

/// Reads the body of a non-streaming response into out.body.
bool read_body(raw_connection& c, bool head_request, clock_type::time_point deadline,
               raw_response& out) {
  if (head_request || out.status / 100 == 1 || out.status == 204 || out.status == 304) {
    return true;
  }
  if (lower(out.header("transfer-encoding")) == "chunked") {
    for (;;) {
      int r = decode_one_chunk(c.pending(), out.body);
      if (r == 2) {
        return true;
      }
      if (r < 0) {
        ADD_FAILURE() << "bad chunked coding";
        return false;
      }
      if (r == 0 && !c.fill(deadline)) {
        return false;
      }
    }
  }
  if (out.has("content-length")) {
    auto n = static_cast<std::size_t>(std::stoull(out.header("content-length")));
    while (c.pending().size() < n) {
      if (!c.fill(deadline)) {
        return false;
      }
    }
    out.body = c.pending().substr(0, n);
    c.pending().erase(0, n);
    return true;
  }
  // Delimited by the end of the connection.
  while (c.fill(deadline)) {
  }
  out.body = std::move(c.pending());
  c.pending().clear();
  return c.eof();
}

}  // namespace

bool loopback_alias_usable(const std::string& address) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) {
    return false;
  }
  auto any = loopback("127.0.0.1", 0);
  bool ok = ::bind(listener, reinterpret_cast<sockaddr*>(&any), sizeof any) == 0 &&
            ::listen(listener, 1) == 0;
  socklen_t len = sizeof any;
  ok = ok && ::getsockname(listener, reinterpret_cast<sockaddr*>(&any), &len) == 0;
  if (ok) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    auto local = loopback(address, 0);
    ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0 &&
         ::connect(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) == 0;
    if (ok) {
      sockaddr_in peer{};
      socklen_t plen = sizeof peer;
      int a = ::accept(listener, reinterpret_cast<sockaddr*>(&peer), &plen);
      char text[INET_ADDRSTRLEN] = {};
      ok = a >= 0 && ::inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text) && address == text;
      if (a >= 0) {
        ::close(a);
      }
    }
    if (fd >= 0) {
      ::close(fd);
    }
  }
  ::close(listener);
  return ok;
}

raw_connection::raw_connection(std::uint16_t port, const std::string& local_address,
                               int receive_buffer) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) {
    ADD_FAILURE() << "socket: " << std::strerror(errno);
    return;
  }
  if (receive_buffer > 0) {
    // Before connecting, so the window the handshake announces is already the small one.
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  }
  auto local = loopback(local_address, 0);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    ADD_FAILURE() << "bind " << local_address << ": " << std::strerror(errno);
    close();
    return;
  }
  auto remote = loopback("127.0.0.1", port);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
    ADD_FAILURE() << "connect: " << std::strerror(errno);
    close();
  }
}

raw_connection::~raw_connection() {
  close();
}

void raw_connection::shutdown_send() {
  if (fd_ >= 0) {
    ::shutdown(fd_, SHUT_WR);
  }
}

void raw_connection::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void raw_connection::send_all(const std::string& bytes) {
  std::size_t sent = 0;
  while (fd_ >= 0 && sent < bytes.size()) {
    auto n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      ADD_FAILURE() << "send: " << std::strerror(errno);
      return;
    }
    sent += static_cast<std::size_t>(n);
  }
}

bool raw_connection::fill(clock_type::time_point deadline) {
  if (fd_ < 0 || eof_) {
    return false;
  }
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    if (left.count() < 0) {
      return false;
    }
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    if (r == 0) {
      if (clock_type::now() >= deadline) {
        return false;
      }
      continue;
    }
    char buf[16384];
    auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      eof_ = true;  // orderly EOF or a reset: either way the stream is over
      return false;
    }
    pending_.append(buf, static_cast<std::size_t>(n));
    return true;
  }
}

std::string raw_response::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string{} : it->second;
}

std::string build_request(std::uint16_t port, const std::string& method, const std::string& target,
                          const header_list& headers, const std::string& body, bool force_length) {
  std::string out = method + " " + target + " HTTP/1.1\r\n";
  bool has_host = false;
  for (auto& [k, v] : headers) {
    has_host = has_host || lower(k) == "host";
  }
  if (!has_host) {
    out += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  }
  for (auto& [k, v] : headers) {
    out += k + ": " + v + "\r\n";
  }
  if (!body.empty() || force_length) {
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  out += "\r\n";
  out += body;
  return out;
}

raw_response read_response(raw_connection& c, bool head_request,
                           std::chrono::milliseconds timeout) {
  raw_response out;
  auto deadline = clock_type::now() + timeout;
  if (!read_head(c, deadline, out)) {
    ADD_FAILURE() << "no response head within " << timeout.count() << " ms";
    return out;
  }
  out.ok = read_body(c, head_request, deadline, out);
  if (!out.ok) {
    ADD_FAILURE() << "incomplete response body";
  }
  return out;
}

raw_response http_exact(std::uint16_t port, const std::string& method, const std::string& target,
                        const std::string& body, const header_list& headers,
                        const std::string& local_address) {
  raw_connection c{port, local_address};
  if (!c.connected()) {
    return {};
  }
  bool has_connection = false;
  for (auto& [k, v] : headers) {
    has_connection = has_connection || lower(k) == "connection";
  }
  header_list h = headers;
  if (!has_connection) {
    h.emplace_back("Connection", "close");
  }
  c.send_all(build_request(port, method, target, h, body, method == "POST" || method == "PUT"));
  return read_response(c, method == "HEAD");
}

raw_response sse_control_post(std::uint16_t port, const std::string& action,
                              const std::string& body, const header_list& headers,
                              const std::string& local_address) {
  header_list h;
  bool has_type = false;
  for (auto& [k, v] : headers) {
    if (lower(k) == "content-type") {
      has_type = true;
      if (v.empty()) {
        continue;  // "send no Content-Type at all"
      }
    }
    h.emplace_back(k, v);
  }
  if (!has_type) {
    h.emplace_back("Content-Type", "application/json");
  }
  return http_exact(port, "POST", std::string{sse_hub_target} + "/" + action, body, h,
                    local_address);
}

std::string control_body(const std::string& connection_id, const std::string& query_id,
                         long long revision, const json::object& request) {
  json::object o{{"connectionId", connection_id}, {"queryId", query_id}};
  if (revision >= 0) {
    o["revision"] = revision;
  }
  if (!request.empty()) {
    o["request"] = request;
  }
  return json::serialize(o);
}

json::object subscription_request(const std::string& query_name, const json::object& arguments,
                                  const std::string& transfer_mode) {
  json::object r{{"queryName", query_name}, {"arguments", arguments}};
  if (!transfer_mode.empty()) {
    r["transferMode"] = transfer_mode;
  }
  return r;
}

sse_client::sse_client(std::uint16_t port) : sse_client(port, options{}) {}

sse_client::sse_client(std::uint16_t port, options opts) : conn_(port, opts.local_address) {
  if (!conn_.connected()) {
    return;
  }
  conn_.send_all(build_request(port, opts.method, opts.target, opts.headers, opts.body));
  auto deadline = clock_type::now() + 5s;
  if (!read_head(conn_, deadline, res_)) {
    ADD_FAILURE() << "no response head from " << opts.method << " " << opts.target;
    return;
  }
  chunked_ = lower(res_.header("transfer-encoding")) == "chunked";
  bool head = opts.method == "HEAD";
  if (res_.status != 200 || head) {
    res_.ok = read_body(conn_, head, deadline, res_);
    last_chunk_ = true;  // nothing streams on a refused request
    return;
  }
  res_.ok = true;
}

bool sse_client::decode_chunks() {
  if (!chunked_) {
    decoded_ += conn_.pending();
    conn_.pending().clear();
    return true;
  }
  while (!last_chunk_) {
    int r = decode_one_chunk(conn_.pending(), decoded_);
    if (r < 0) {
      ADD_FAILURE() << "bad chunked coding in: " << conn_.pending().substr(0, 64);
      return false;
    }
    if (r == 0) {
      return true;
    }
    if (r == 2) {
      last_chunk_ = true;
      if (!conn_.pending().empty()) {
        ADD_FAILURE() << "bytes after the last chunk: " << conn_.pending();
      }
    }
  }
  return true;
}

std::optional<std::string> sse_client::read_event(std::chrono::milliseconds timeout) {
  auto deadline = clock_type::now() + timeout;
  for (;;) {
    if (!decode_chunks()) {
      return std::nullopt;
    }
    auto end = decoded_.find("\n\n");
    if (end != std::string::npos) {
      std::string ev = decoded_.substr(0, end);
      decoded_.erase(0, end + 2);
      return ev;
    }
    if (ended()) {
      if (!decoded_.empty()) {
        ADD_FAILURE() << "stream ended inside an event: " << decoded_;
        decoded_.clear();
      }
      return std::nullopt;
    }
    if (!conn_.fill(deadline) && !conn_.eof()) {
      return std::nullopt;  // timed out; the connection stays usable
    }
  }
}

json::object sse_client::read_json(std::chrono::milliseconds timeout) {
  auto ev = read_event(timeout);
  if (!ev) {
    ADD_FAILURE() << (ended() ? "stream ended" : "no event") << " within " << timeout.count()
                  << " ms";
    return {};
  }
  // §7: exactly one `data: ` line of single-line JSON; no event:, id:, retry: or comments.
  if (ev->rfind("data: ", 0) != 0 || ev->find('\n') != std::string::npos ||
      ev->find('\r') != std::string::npos) {
    ADD_FAILURE() << "not a single `data: ` line: [" << *ev << "]";
    return {};
  }
  json::error_code ec;
  auto v = json::parse(std::string_view{*ev}.substr(6), ec);
  if (ec || !v.is_object()) {
    ADD_FAILURE() << "data is not a JSON object: " << *ev;
    return {};
  }
  // Compact serialization: the payload is exactly what a compact serializer writes back.
  EXPECT_EQ(json::serialize(v), ev->substr(6));
  return v.as_object();
}

std::vector<json::object> sse_client::read_through(
    const std::function<bool(const json::object&)>& pred, std::chrono::milliseconds timeout) {
  std::vector<json::object> out;
  auto deadline = clock_type::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    if (left.count() <= 0) {
      ADD_FAILURE() << "no matching event within " << timeout.count() << " ms";
      return out;
    }
    auto f = read_json(left);
    if (f.empty()) {
      return out;
    }
    out.push_back(f);
    if (pred(out.back())) {
      return out;
    }
  }
}

bool sse_client::silent_for(std::chrono::milliseconds quiet) {
  auto ev = read_event(quiet);
  if (ev) {
    ADD_FAILURE() << "unexpected event: " << *ev;
    return false;
  }
  return true;
}

std::string sse_client::expect_connected() {
  auto f = read_json();
  EXPECT_EQ(f["type"], "Connected") << json::serialize(f);
  auto* p = f.if_contains("payload");
  if (!p || !p->is_string()) {
    ADD_FAILURE() << "Connected without a string payload: " << json::serialize(f);
    return {};
  }
  return std::string{p->as_string()};
}

bool sse_client::wait_end(std::chrono::milliseconds timeout) {
  auto ev = read_event(timeout);
  if (ev) {
    ADD_FAILURE() << "event before the end of the stream: " << *ev;
    return false;
  }
  return ended();
}

bool looks_like_uuid(const std::string& s) {
  if (s.size() != 36) {
    return false;
  }
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace weir::test

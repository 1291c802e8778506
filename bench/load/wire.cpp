// Wire codecs of weir_load.
#include "wire.hpp"

#include <cstdlib>
#include <cstring>

namespace weir::bench {

namespace {
bool iequals_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size()) {
    return false;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    char a = line[i], b = name[i];
    if (a >= 'A' && a <= 'Z')
      a = static_cast<char>(a - 'A' + 'a');
    if (a != b)
      return false;
  }
  return true;
}
}  // namespace

std::optional<http_head> parse_http_head(std::string_view buf) {
  auto end = buf.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    return std::nullopt;
  }
  http_head h;
  h.size = end + 4;
  auto head = buf.substr(0, end + 2);
  auto sp = head.find(' ');
  if (sp != std::string_view::npos) {
    h.status = static_cast<unsigned>(std::atoi(std::string{head.substr(sp + 1, 3)}.c_str()));
  }
  std::size_t pos = head.find("\r\n") + 2;
  while (pos < head.size()) {
    auto eol = head.find("\r\n", pos);
    auto line = head.substr(pos, eol - pos);
    if (iequals_prefix(line, "content-length:")) {
      h.content_length = std::strtoull(std::string{line.substr(15)}.c_str(), nullptr, 10);
    } else if (iequals_prefix(line, "transfer-encoding:") &&
               line.find("chunked") != std::string_view::npos) {
      h.chunked = true;
    }
    pos = eol + 2;
  }
  return h;
}

bool chunked_decoder::feed(std::string& in, std::string& out) {
  std::size_t pos = 0;
  while (pos < in.size() && !done_) {
    if (need_crlf_) {
      if (in.size() - pos < 2)
        break;
      if (in[pos] != '\r' || in[pos + 1] != '\n')
        return false;
      pos += 2;
      need_crlf_ = false;
      continue;
    }
    if (left_ > 0) {
      auto n = std::min(left_, in.size() - pos);
      out.append(in, pos, n);
      pos += n;
      left_ -= n;
      if (left_ == 0)
        need_crlf_ = true;
      continue;
    }
    auto eol = in.find("\r\n", pos);
    if (eol == std::string::npos)
      break;
    char* end = nullptr;
    auto size = std::strtoull(in.c_str() + pos, &end, 16);
    if (end == in.c_str() + pos)
      return false;
    pos = eol + 2;
    if (size == 0) {
      done_ = true;  // trailers are not expected from either server
      break;
    }
    left_ = size;
  }
  in.erase(0, pos);
  return true;
}

std::optional<std::string> next_sse_event(std::string& buf) {
  auto end = buf.find("\n\n");
  if (end == std::string::npos) {
    return std::nullopt;
  }
  std::string data;
  std::size_t pos = 0;
  bool first = true;
  while (pos < end) {
    auto eol = buf.find('\n', pos);
    if (eol > end)
      eol = end;
    std::string_view line{buf.data() + pos, eol - pos};
    if (line.starts_with("data:")) {
      auto v = line.substr(5);
      if (v.starts_with(' '))
        v.remove_prefix(1);
      if (!first)
        data.push_back('\n');
      data.append(v);
      first = false;
    }
    pos = eol + 1;
  }
  buf.erase(0, end + 2);
  return data;
}

std::optional<ws_frame> parse_ws_frame(std::string_view buf) {
  if (buf.size() < 2)
    return std::nullopt;
  auto b0 = static_cast<std::uint8_t>(buf[0]);
  auto b1 = static_cast<std::uint8_t>(buf[1]);
  std::size_t hdr = 2;
  std::uint64_t len = b1 & 0x7f;
  if (len == 126) {
    if (buf.size() < 4)
      return std::nullopt;
    len = (static_cast<std::uint64_t>(static_cast<std::uint8_t>(buf[2])) << 8) |
          static_cast<std::uint8_t>(buf[3]);
    hdr = 4;
  } else if (len == 127) {
    if (buf.size() < 10)
      return std::nullopt;
    len = 0;
    for (int i = 0; i < 8; ++i)
      len = (len << 8) | static_cast<std::uint8_t>(buf[2 + i]);
    hdr = 10;
  }
  if (b1 & 0x80)
    hdr += 4;  // servers do not mask; tolerated anyway
  if (buf.size() < hdr + len)
    return std::nullopt;
  ws_frame f;
  f.fin = (b0 & 0x80) != 0;
  f.opcode = b0 & 0x0f;
  f.payload = buf.substr(hdr, len);
  f.size = hdr + len;
  return f;
}

std::string encode_ws_frame(std::uint8_t opcode, std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 14);
  out.push_back(static_cast<char>(0x80 | opcode));
  auto n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(0x80 | n));
  } else if (n < 65536) {
    out.push_back(static_cast<char>(0x80 | 126));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xff));
  } else {
    out.push_back(static_cast<char>(0x80 | 127));
    for (int i = 7; i >= 0; --i)
      out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  }
  const unsigned char mask[4] = {0x3a, 0x91, 0x5c, 0xe7};
  out.append(reinterpret_cast<const char*>(mask), 4);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(static_cast<char>(payload[i] ^ mask[i & 3]));
  }
  return out;
}

std::int64_t json_int_after(std::string_view text, std::string_view key) {
  auto p = text.find(key);
  if (p == std::string_view::npos)
    return -1;
  p += key.size();
  std::int64_t v = 0;
  bool any = false;
  while (p < text.size() && text[p] >= '0' && text[p] <= '9') {
    v = v * 10 + (text[p] - '0');
    ++p;
    any = true;
  }
  return any ? v : -1;
}

std::string_view json_string_after(std::string_view text, std::string_view key) {
  auto p = text.find(key);
  if (p == std::string_view::npos)
    return {};
  p += key.size();
  auto e = text.find('"', p);
  if (e == std::string_view::npos)
    return {};
  return text.substr(p, e - p);
}

}  // namespace weir::bench

// A subscriber of weir_load: connects (from its source address), upgrades or opens the event
// stream, subscribes (Weir: Subscribe frame or SSE control POST; nchan: the URL is the
// subscription), then checks every data frame's per-stream sequence number and records the
// write→receipt latency. Reads wait for readability and then drain the socket into one shared
// scratch buffer, so an idle connection holds no read buffer at all.
#include <array>

#include <boost/asio/write.hpp>

#include "load.hpp"
#include "proc_stats.hpp"
#include "wire.hpp"

namespace weir::bench {

namespace {
std::array<char, 256 * 1024> scratch;  // one thread: shared by every connection

constexpr std::string_view ws_key = "dGhlIHNhbXBsZSBub25jZQ==";

std::string subscribe_frame(int key) {
  return R"({"type":"Subscribe","queryId":"q","revision":1,"payload":{"queryName":"Bench.Items.ByObject","arguments":{"obj":")" +
         key_name(key) + R"("},"transferMode":"delta"}})";
}
}  // namespace

std::string make_record(int stream, std::uint64_t seq, std::int64_t ts, std::size_t size) {
  std::string r = "{\"s\":" + std::to_string(stream) + ",\"seq\":" + std::to_string(seq) +
                  ",\"ts\":" + std::to_string(ts) + ",\"pad\":\"";
  std::size_t tail = 2;
  if (r.size() + tail < size) {
    r.append(size - r.size() - tail, 'x');
  }
  r += "\"}";
  return r;
}

subscriber::subscriber(asio::io_context& ioc, const target& t, run_stats& st, int key,
                       asio::ip::address source, std::function<void(const std::string&)> control)
    : sock_(ioc),
      t_(t),
      st_(st),
      key_(key),
      source_(source),
      control_(std::move(control)),
      last_seq_(static_cast<std::size_t>(t.streams_per_key), 0) {}

void subscriber::start(std::function<void(bool)> on_settled) {
  on_settled_ = std::move(on_settled);
  started_ns_ = mono_ns();
  boost::system::error_code ec;
  sock_.open(t_.endpoint.protocol(), ec);
  if (!ec) {
    bind_source(sock_, source_, ec);
  }
  if (ec) {
    settle(false);
    return;
  }
  sock_.async_connect(t_.endpoint, [self = shared_from_this()](boost::system::error_code ec) {
    if (ec) {
      self->settle(false);
      return;
    }
    self->on_connected();
  });
}

void subscriber::on_connected() {
  boost::system::error_code ec;
  sock_.set_option(tcp::no_delay(true), ec);
  sock_.non_blocking(true, ec);
  std::string path;
  if (t_.server == server_kind::weir) {
    path = t_.via == transport::ws ? "/.cratis/queries/ws" : "/.cratis/queries/sse";
  } else {
    path = "/sub/" + key_name(key_);
  }
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (t_.via == transport::windowed) {
    // Every record of the key's object, unbounded: each write is one event.
    auto body = R"({"objectId":")" + key_name(key_) + R"(","dataset":"items"})";
    req =
        "POST /v1/spaces/bench/query/subscribe HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/json\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    send_ws(std::move(req));
    wait_readable();
    return;
  }
  if (t_.via == transport::ws) {
    req += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n";
    req += "Sec-WebSocket-Key: " + std::string{ws_key} + "\r\n";
  } else {
    req += "Accept: text/event-stream\r\n";
  }
  req += "\r\n";
  send_ws(std::move(req));
  wait_readable();
}

void subscriber::send_ws(std::string bytes) {
  auto buf = std::make_shared<std::string>(std::move(bytes));
  asio::async_write(sock_, asio::buffer(*buf),
                    [buf, self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                      if (ec) {
                        self->settle(false);
                      }
                    });
}

void subscriber::wait_readable() {
  sock_.async_wait(tcp::socket::wait_read,
                   [self = shared_from_this()](boost::system::error_code ec) {
                     if (ec) {
                       self->settle(false);
                       return;
                     }
                     self->on_readable();
                   });
}

void subscriber::on_readable() {
  for (;;) {
    boost::system::error_code ec;
    auto n = sock_.read_some(asio::buffer(scratch), ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      break;
    }
    if (ec || n == 0) {
      closed_ = true;
      if (!ready_) {
        settle(false);
      } else {
        ++st_.failed;  // a live subscription ended: the run reports it
      }
      return;
    }
    pend_.append(scratch.data(), n);
    process();
    if (closed_) {
      return;
    }
    if (n < scratch.size()) {
      break;
    }
  }
  // Nothing half-parsed: give the memory back (an idle connection then holds none).
  if (pend_.empty() && pend_.capacity() > 4096) {
    std::string{}.swap(pend_);
  }
  wait_readable();
}

void subscriber::process() {
  if (phase_ == phase::head) {
    auto h = parse_http_head(pend_);
    if (!h) {
      return;
    }
    bool ok = t_.via == transport::ws ? h->status == 101 : h->status == 200;
    if (!ok) {
      closed_ = true;
      settle(false);
      return;
    }
    chunked_ = h->chunked;
    pend_.erase(0, h->size);
    phase_ = phase::body;
    if (t_.server != server_kind::weir) {
      // The URL is the subscription: nchan (and the ceiling) deliver from the next published
      // message on.
      ready_ = true;
      settle(true);
    }
  }
  if (t_.via == transport::ws) {
    std::size_t pos = 0;
    while (auto f = parse_ws_frame(std::string_view{pend_}.substr(pos))) {
      pos += f->size;
      switch (f->opcode) {
        case 0x0:  // continuation
        case 0x1:
        case 0x2:
          if (!f->fin || !frag_.empty()) {
            frag_.append(f->payload);
            if (f->fin) {
              on_message(frag_);
              frag_.clear();
            }
          } else {
            on_message(f->payload);
          }
          break;
        case 0x8:
          closed_ = true;
          ++st_.failed;
          pend_.clear();
          return;
        case 0x9:
          send_ws(encode_ws_frame(0xA, f->payload));
          break;
        default:
          break;
      }
    }
    pend_.erase(0, pos);
    return;
  }
  if (chunked_) {
    if (!chunks_.feed(pend_, sse_)) {
      closed_ = true;
      ++st_.failed;
      return;
    }
  } else {
    sse_.append(pend_);
    pend_.clear();
  }
  while (auto ev = next_sse_event(sse_)) {
    if (!ev->empty()) {
      on_message(*ev);
    }
  }
}

void subscriber::on_message(std::string_view text) {
  if (t_.server != server_kind::weir) {
    on_data(text);
    return;
  }
  if (t_.via == transport::windowed) {
    // ready `{}`, snapshot `{"records":…}`, changes `[event,…]`, closed `{"reason":…}`.
    if (text.starts_with("{\"records\"")) {
      if (!ready_) {
        ready_ = true;
        settle(true);
      }
    } else if (text.starts_with("[")) {
      // One frame carries every event held at the time of the write: each is one delivery.
      // Each updated or added row carries `"doc":{…}` with the record's s, seq and ts.
      constexpr std::string_view doc = "\"doc\":{";
      auto pos = text.find(doc);
      while (pos != std::string_view::npos) {
        auto next = text.find(doc, pos + doc.size());
        on_data(text.substr(pos, next == std::string_view::npos ? next : next - pos));
        pos = next;
      }
    } else if (text.starts_with("{\"reason\"")) {
      closed_ = true;
      ++st_.failed;
    }
    return;
  }
  // Weir: the hub envelope. Only the type matters here; the fields of a data frame are found
  // by name in the change set's record.
  auto type = json_string_after(text, "\"type\":\"");
  if (type == "QueryResult") {
    if (!ready_) {
      ready_ = true;  // the snapshot (first emission) of the subscription
      settle(true);
      return;
    }
    on_data(text);
  } else if (type == "Connected") {
    if (t_.via == transport::ws) {
      send_ws(encode_ws_frame(0x1, subscribe_frame(key_)));
    } else {
      std::string id{json_string_after(text, "\"payload\":\"")};
      control_(
          R"({"connectionId":")" + id +
          R"(","queryId":"q","revision":1,"request":{"queryName":"Bench.Items.ByObject","arguments":{"obj":")" +
          key_name(key_) + R"("},"transferMode":"delta"}})");
    }
  } else if (type == "Error" || type == "Unauthorized") {
    ++st_.errors;
  }
}

void subscriber::on_data(std::string_view text) {
  auto now = mono_ns();
  if (st_.first_frame_ns == 0) {
    st_.first_frame_ns = now;
  }
  st_.last_frame_ns = now;
  ++st_.frames;
  st_.bytes += text.size();
  auto s = json_int_after(text, "\"s\":");
  auto seq = json_int_after(text, "\"seq\":");
  auto ts = json_int_after(text, "\"ts\":");
  if (s < 0 || seq < 0 || ts < 0 || static_cast<std::size_t>(s) >= last_seq_.size()) {
    ++st_.errors;
    return;
  }
  st_.latency.add(now - ts);
  auto& last = last_seq_[static_cast<std::size_t>(s)];
  auto n = static_cast<std::uint64_t>(seq);
  if (n <= last) {
    ++st_.out_of_order;
  } else {
    st_.gaps += n - last - 1;
    last = n;
  }
}

void subscriber::control_failed() {
  ++st_.errors;
  if (!ready_) {
    settle(false);
  }
}

void subscriber::settle(bool ok) {
  if (settled_) {
    return;
  }
  settled_ = true;
  if (ok) {
    ++st_.ready;
    st_.ready_time.add(mono_ns() - st_.epoch_ns);
  } else {
    ++st_.failed;
  }
  if (on_settled_) {
    auto cb = std::move(on_settled_);
    cb(ok);
  }
}

void subscriber::stop() {
  boost::system::error_code ec;
  sock_.close(ec);
}

}  // namespace weir::bench

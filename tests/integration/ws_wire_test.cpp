// The WebSocket hub's own RFC 6455 handling after the upgrade (the session owns the socket):
// WebSocket-level ping/pong, fragmented messages, a client-initiated close, protocol errors
// (1002), invalid UTF-8 (1007), several frames written back to back in one burst, and the bound
// on the frames one wake-up takes (1013).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <boost/json.hpp>

#include "sse_test_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

using namespace std::chrono_literals;

/// A hand-driven WebSocket client: exact bytes out, frames parsed from the raw stream.
class raw_ws {
 public:
  explicit raw_ws(std::uint16_t port) : c_(port) {
    c_.send_all(build_request(port, "GET", "/.cratis/queries/ws",
                              {{"Connection", "Upgrade"},
                               {"Upgrade", "websocket"},
                               {"Sec-WebSocket-Version", "13"},
                               {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}},
                              ""));
    auto r = read_response(c_, true);
    EXPECT_EQ(r.status, 101u);
  }

  void send_frame(std::uint8_t b0, std::string_view payload, bool mask = true) {
    c_.send_all(encode_frame(b0, payload, mask));
  }

  void send_raw(const std::string& bytes) { c_.send_all(bytes); }

  static std::string encode_frame(std::uint8_t b0, std::string_view payload, bool mask = true) {
    std::string f;
    f.push_back(static_cast<char>(b0));
    auto n = payload.size();
    std::uint8_t m = mask ? 0x80 : 0;
    if (n < 126) {
      f.push_back(static_cast<char>(m | n));
    } else {
      f.push_back(static_cast<char>(m | 126));
      f.push_back(static_cast<char>(n >> 8));
      f.push_back(static_cast<char>(n & 0xFF));
    }
    const char key[4] = {0x11, 0x22, 0x33, 0x44};
    if (mask) {
      f.append(key, 4);
    }
    for (std::size_t i = 0; i < n; ++i) {
      f.push_back(mask ? static_cast<char>(payload[i] ^ key[i & 3]) : payload[i]);
    }
    return f;
  }

  struct frame {
    std::uint8_t opcode = 0;
    std::string payload;
  };

  /// The next server frame, or nullopt on timeout/EOF.
  std::optional<frame> next(std::chrono::milliseconds timeout = 5s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto& b = c_.pending();
      if (b.size() >= 2) {
        auto op = static_cast<std::uint8_t>(b[0]) & 0x0F;
        std::size_t len = static_cast<std::uint8_t>(b[1]) & 0x7F;
        std::size_t hs = 2;
        if (len == 126 && b.size() >= 4) {
          len = (static_cast<std::uint8_t>(b[2]) << 8) | static_cast<std::uint8_t>(b[3]);
          hs = 4;
        } else if (len == 127 && b.size() >= 10) {
          len = 0;
          for (int i = 0; i < 8; ++i)
            len = (len << 8) | static_cast<std::uint8_t>(b[2 + i]);
          hs = 10;
        }
        if (len < 126 || hs > 2) {
          if (b.size() >= hs + len) {
            frame f{static_cast<std::uint8_t>(op), b.substr(hs, len)};
            b.erase(0, hs + len);
            return f;
          }
        }
      }
      if (!c_.fill(deadline)) {
        return std::nullopt;
      }
    }
  }

  /// Reads until a close frame; returns its code (0 if none arrived).
  int close_code(std::chrono::milliseconds timeout = 5s) {
    while (auto f = next(timeout)) {
      if (f->opcode == 0x8) {
        return f->payload.size() >= 2 ? (static_cast<std::uint8_t>(f->payload[0]) << 8) |
                                            static_cast<std::uint8_t>(f->payload[1])
                                      : 1005;
      }
    }
    return 0;
  }

  raw_connection& conn() { return c_; }

 private:
  raw_connection c_;
};

struct node_fixture {
  node_fixture() {
    node = start_node(dir.path());
    port = node ? node->http_port() : 0;
  }
  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

std::string text_of(const raw_ws::frame& f) {
  return f.payload;
}

TEST(WsWire, PingIsAnsweredWithPongCarryingItsPayload) {
  node_fixture n;
  ASSERT_TRUE(n.node);
  raw_ws c{n.port};
  auto connected = c.next();
  ASSERT_TRUE(connected);
  EXPECT_NE(text_of(*connected).find("\"Connected\""), std::string::npos);
  c.send_frame(0x89, "probe");
  auto pong = c.next();
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->opcode, 0xA);
  EXPECT_EQ(pong->payload, "probe");
}

TEST(WsWire, AClientThatPingsAndNeverReadsCannotGrowTheServersPongs) {
  // 200,000 Pings (26 MB) from a client that reads nothing: the server's socket buffers fill,
  // and from then on it keeps only the Pong to the latest Ping (RFC 6455 §5.5.3), instead of
  // 25 MB of Pongs for a client that may never read them.
  node_fixture n;
  ASSERT_TRUE(n.node);
  raw_ws c{n.port};
  ASSERT_TRUE(c.next());  // Connected
  constexpr int pings = 200000;
  for (int batch = 0; batch < pings / 1000; ++batch) {
    std::string burst;
    for (int i = batch * 1000; i < (batch + 1) * 1000; ++i) {
      auto payload = "ping-" + std::to_string(i);
      payload.resize(125, '.');
      burst += raw_ws::encode_frame(0x89, payload);
    }
    c.send_raw(burst);
  }
  int pongs = 0;
  std::string last;
  while (auto f = c.next(2s)) {
    ASSERT_EQ(f->opcode, 0xA);
    ++pongs;
    last = f->payload;
  }
  EXPECT_EQ(last.substr(0, last.find('.')), "ping-" + std::to_string(pings - 1));
  EXPECT_LT(pongs, pings / 2) << "every Pong was kept";
}

TEST(WsWire, FragmentedMessagesAreReassembled) {
  node_fixture n;
  ASSERT_TRUE(n.node);
  raw_ws c{n.port};
  ASSERT_TRUE(c.next());  // Connected
  std::string msg = R"({"type":"Ping","timestamp":42})";
  c.send_frame(0x01, msg.substr(0, 10));   // text, not final
  c.send_frame(0x89, "in-between");        // a control frame may interleave
  c.send_frame(0x00, msg.substr(10, 10));  // continuation
  c.send_frame(0x80, msg.substr(20));      // final continuation
  auto pong = c.next();
  ASSERT_TRUE(pong);
  EXPECT_EQ(pong->opcode, 0xA);
  auto arc_pong = c.next();
  ASSERT_TRUE(arc_pong);
  EXPECT_EQ(arc_pong->opcode, 0x1);
  EXPECT_EQ(boost::json::parse(arc_pong->payload).as_object().at("type").as_string(), "Pong");
}

TEST(WsWire, ClientCloseIsEchoedAndTheServerEndsTheConnection) {
  node_fixture n;
  ASSERT_TRUE(n.node);
  raw_ws c{n.port};
  ASSERT_TRUE(c.next());
  c.send_frame(0x88, std::string("\x0F\xA0", 2) + "bye");  // 4000
  EXPECT_EQ(c.close_code(), 4000);
  // Then EOF: nothing more, the server closed its side.
  EXPECT_FALSE(c.next(2s));
  EXPECT_TRUE(c.conn().eof());
}

TEST(WsWire, UnmaskedFrameIsAProtocolError) {
  node_fixture n;
  ASSERT_TRUE(n.node);
  raw_ws c{n.port};
  ASSERT_TRUE(c.next());
  c.send_frame(0x81, R"({"type":"Ping","timestamp":1})", false);
  EXPECT_EQ(c.close_code(), 1002);
  EXPECT_FALSE(c.next(2s));
  EXPECT_TRUE(c.conn().eof());
}

TEST(WsWire, ContinuationWithoutAStartIsAProtocolError) {
  node_fixture n;
  ASSERT_TRUE(n.node);
  raw_ws c{n.port};
  ASSERT_TRUE(c.next());
  c.send_frame(0x80, "orphan");
  EXPECT_EQ(c.close_code(), 1002);
}

TEST(WsWire, InvalidUtf8TextClosesWith1007) {
  node_fixture n;
  ASSERT_TRUE(n.node);
  raw_ws c{n.port};
  ASSERT_TRUE(c.next());
  c.send_frame(0x81, "\xC0\xAF");
  EXPECT_EQ(c.close_code(), 1007);
}

TEST(WsWire, ABurstOfFramesArrivesIntactAndInOrder) {
  node_fixture n;
  ASSERT_TRUE(n.node);
  raw_ws c{n.port};
  ASSERT_TRUE(c.next());
  // Many pings at once: their pongs are batched into few writes; each must be a whole frame.
  for (int i = 0; i < 200; ++i) {
    c.send_frame(0x81, R"({"type":"Ping","timestamp":)" + std::to_string(i) + "}");
  }
  for (int i = 0; i < 200; ++i) {
    auto f = c.next();
    ASSERT_TRUE(f) << i;
    ASSERT_EQ(f->opcode, 0x1);
    auto v = boost::json::parse(f->payload).as_object();
    EXPECT_EQ(v.at("type").as_string(), "Pong");
    EXPECT_EQ(v.at("timestamp").as_int64(), i);
  }
}

TEST(WsWire, MoreFramesAtOnceThanTheInboundBoundCloseWith1013) {
  // Frames are applied as they are read; one wake-up takes at most maxObservableInboundFrames
  // of them (arc-hub §9's inbound queue). 100 Pings in one write, against a bound of 10: the
  // connection closes with 1013 "Inbound queue full". Frames not yet written when the close is
  // decided are dropped (nothing follows a close), so at most the first 10 Pongs come first.
  temp_dir dir;
  auto node = start_node(dir.path(), "query:\n  maxObservableInboundFrames: 10\n");
  ASSERT_TRUE(node);
  raw_ws c{node->http_port()};
  ASSERT_TRUE(c.next());  // Connected
  std::string burst;
  for (int i = 0; i < 100; ++i) {
    burst += raw_ws::encode_frame(0x81, R"({"type":"Ping","timestamp":)" + std::to_string(i) + "}");
  }
  c.send_raw(burst);
  int pongs = 0;
  int code = 0;
  std::string reason;
  while (auto f = c.next()) {
    if (f->opcode == 0x8) {
      code = f->payload.size() >= 2 ? (static_cast<std::uint8_t>(f->payload[0]) << 8) |
                                          static_cast<std::uint8_t>(f->payload[1])
                                    : 1005;
      reason = f->payload.size() > 2 ? f->payload.substr(2) : "";
      break;
    }
    auto v = boost::json::parse(f->payload).as_object();
    EXPECT_EQ(v.at("type").as_string(), "Pong");
    EXPECT_EQ(v.at("timestamp").as_int64(), pongs);
    ++pongs;
  }
  EXPECT_EQ(code, 1013);
  EXPECT_EQ(reason, "Inbound queue full");
  EXPECT_LE(pongs, 10);
}

TEST(WsWire, FramesUpToTheInboundBoundAreAllAnswered) {
  temp_dir dir;
  auto node = start_node(dir.path(), "query:\n  maxObservableInboundFrames: 10\n");
  ASSERT_TRUE(node);
  raw_ws c{node->http_port()};
  ASSERT_TRUE(c.next());
  std::string burst;
  for (int i = 0; i < 10; ++i) {
    burst += raw_ws::encode_frame(0x81, R"({"type":"Ping","timestamp":)" + std::to_string(i) + "}");
  }
  // Three bursts, each within the bound: the count starts again with each wake-up.
  for (int round = 0; round < 3; ++round) {
    c.send_raw(burst);
    for (int i = 0; i < 10; ++i) {
      auto f = c.next();
      ASSERT_TRUE(f) << round << " " << i;
      ASSERT_EQ(f->opcode, 0x1) << f->payload;
      EXPECT_EQ(boost::json::parse(f->payload).as_object().at("timestamp").as_int64(), i);
    }
  }
}

}  // namespace
}  // namespace weir::test

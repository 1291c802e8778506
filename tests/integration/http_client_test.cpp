// apps/http_client (the tools' and tests' blocking HTTP client) against raw loopback peers: a
// peer that accepts and never answers is given up at the deadline, and a caller's
// `Connection: close` reaches the wire.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include "apps/http_client/http_client.hpp"

namespace weir::test {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

TEST(HttpClient, APeerThatNeverAnswersIsGivenUpAtTheDeadline) {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc, {asio::ip::make_address("127.0.0.1"), 0}};
  const auto port = std::to_string(acceptor.local_endpoint().port());
  // The kernel completes the handshake from the backlog; nothing ever reads or answers.
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(app::http_request("127.0.0.1", port, "GET", "/", {}, {}, 300ms), std::runtime_error);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(HttpClient, ACallersConnectionCloseReachesTheWire) {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc, {asio::ip::make_address("127.0.0.1"), 0}};
  const auto port = std::to_string(acceptor.local_endpoint().port());
  std::string head;
  std::thread peer{[&] {
    tcp::socket s{ioc};
    acceptor.accept(s);
    asio::streambuf buf;
    asio::read_until(s, buf, "\r\n\r\n");
    head.assign(asio::buffers_begin(buf.data()), asio::buffers_end(buf.data()));
    asio::write(s, asio::buffer(std::string{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}));
  }};
  auto r = app::http_request("127.0.0.1", port, "GET", "/x", {}, {{"Connection", "close"}}, 5s);
  peer.join();
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "ok");
  EXPECT_NE(head.find("Connection: close"), std::string::npos) << head;
}

}  // namespace
}  // namespace weir::test

// The blocking HTTP/1.1 client of Weir's tools (see http_client.hpp), on Beast.
#include "apps/http_client/http_client.hpp"

#include <cctype>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace weir::app {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

struct http_client::impl {
  asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buf;
  std::string host_field;
  std::chrono::milliseconds timeout{};

  /// Runs the operation just started to its end. The deadline is the stream's: Beast applies
  /// expires_after() to asynchronous operations only (a blocking read would wait forever on a
  /// peer that accepted and never answered), hence the async calls run to completion here.
  void run(const beast::error_code& ec) {
    ioc.restart();
    ioc.run();
    if (ec) {
      throw beast::system_error{ec};
    }
  }
};

http_client::http_client(const std::string& host, const std::string& port,
                         std::chrono::milliseconds timeout)
    : impl_(std::make_unique<impl>()) {
  impl_->timeout = timeout;
  impl_->host_field = host + ":" + port;
  tcp::resolver resolver{impl_->ioc};
  auto endpoints = resolver.resolve(host, port);
  impl_->stream.expires_after(timeout);
  beast::error_code ec;
  impl_->stream.async_connect(endpoints,
                              [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
  impl_->run(ec);
}

http_client::~http_client() {
  beast::error_code ec;
  impl_->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
}

http_reply http_client::request(std::string_view method, std::string_view target,
                                std::string_view body, const http_headers& headers) {
  auto& s = impl_->stream;
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, impl_->host_field);
  req.keep_alive(true);  // before the caller's headers: a `Connection: close` of theirs stands
  bool has_type = false;
  for (const auto& [k, v] : headers) {
    req.set(k, v);
    has_type = has_type || beast::iequals(k, "content-type");
  }
  if (!body.empty() && !has_type) {
    req.set(http::field::content_type, "application/json");
  }
  req.body() = std::string{body};
  req.prepare_payload();
  beast::error_code ec;
  s.expires_after(impl_->timeout);
  http::async_write(s, req, [&](beast::error_code e, std::size_t) { ec = e; });
  impl_->run(ec);
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  if (method == "HEAD") {
    parser.skip(true);
  }
  s.expires_after(impl_->timeout);
  http::async_read(s, impl_->buf, parser, [&](beast::error_code e, std::size_t) { ec = e; });
  impl_->run(ec);
  auto res = parser.release();
  http_reply out;
  out.status = res.result_int();
  out.body = std::move(res.body());
  for (const auto& f : res) {
    std::string name{f.name_string()};
    for (auto& c : name) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    out.headers[name] = std::string{f.value()};
  }
  return out;
}

http_reply http_request(const std::string& host, const std::string& port, std::string_view method,
                        std::string_view target, std::string_view body, const http_headers& headers,
                        std::chrono::milliseconds timeout) {
  http_client c{host, port, timeout};
  return c.request(method, target, body, headers);
}

}  // namespace weir::app

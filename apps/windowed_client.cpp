// `weir query-subscribe` / `weir query`: Beast HTTP, reading the event stream as it arrives.
#include "apps/windowed_client.hpp"

#include <iostream>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "apps/http_client/http_client.hpp"

namespace weir::app {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

bool split_url(const std::string& url, std::string& host, std::string& port) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    return false;
  }
  auto rest = url.substr(scheme.size());
  rest = rest.substr(0, rest.find('/'));
  auto colon = rest.rfind(':');
  host = colon == std::string::npos ? rest : rest.substr(0, colon);
  port = colon == std::string::npos ? "80" : rest.substr(colon + 1);
  return !host.empty();
}

/// Prints one SSE event (its text without the blank line) as {"event":…,"data":…}; comments
/// print nothing. Returns the event name.
std::string print_event(std::string_view text) {
  std::string event = "message";
  std::string data;
  bool has_data = false;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    auto line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.rfind("event:", 0) == 0) {
      event = std::string{line.substr(6)};
      event.erase(0, event.find_first_not_of(' '));
    } else if (line.rfind("data:", 0) == 0) {
      auto d = line.substr(5);
      if (!d.empty() && d.front() == ' ') {
        d.remove_prefix(1);
      }
      if (has_data) {
        data.push_back('\n');
      }
      data.append(d);
      has_data = true;
    }
    if (nl == std::string_view::npos) {
      break;
    }
    pos = nl + 1;
  }
  if (!has_data) {
    return {};
  }
  boost::system::error_code ec;
  auto v = json::parse(data, ec);
  json::object out{{"event", event}, {"data", ec ? json::value(data) : v}};
  std::cout << json::serialize(out) << '\n' << std::flush;
  return event;
}

}  // namespace

bool windowed_request_of(const windowed_options& o, bool subscribe, std::string& path,
                         std::string& body) {
  const char* cmd = subscribe ? "weir query-subscribe" : "weir query";
  if (o.space.empty()) {
    std::cerr << cmd << ": SPACE is required\n";
    return false;
  }
  json::object b;
  path = "/v1/spaces/" + o.space;
  if (o.properties) {
    if (!o.object.empty() || !o.dataset.empty()) {
      std::cerr << cmd << ": --properties takes no OBJECT and no --dataset\n";
      return false;
    }
    path += "/objects";
  } else if (o.dataset.empty()) {
    std::cerr << cmd
              << ": give --dataset NAME (with OBJECT: one object's; without: across "
                 "the space's objects) or --properties\n";
    return false;
  } else if (o.object.empty()) {
    path += "/datasets";
    b["dataset"] = o.dataset;
  } else {
    b["objectId"] = o.object;
    b["dataset"] = o.dataset;
  }
  path += subscribe ? "/query/subscribe" : "/query";
  for (auto [name, text] :
       {std::pair{"filter", &o.filter}, std::pair{"projection", &o.projection}}) {
    if (text->empty()) {
      continue;
    }
    boost::system::error_code ec;
    auto v = json::parse(*text, ec);
    if (ec) {
      std::cerr << cmd << ": --" << name << " is not JSON: " << ec.message() << "\n";
      return false;
    }
    b[name] = v;
  }
  if (!o.sort.empty()) {
    json::array s;
    for (auto& k : o.sort) {
      s.push_back(json::string{k});
    }
    b["sort"] = s;
  }
  if (o.limit) {
    b["limit"] = *o.limit;
  }
  if (o.offset) {
    b["offset"] = *o.offset;
  }
  if (o.total) {
    b["includeTotal"] = true;
  }
  if (subscribe && o.mailbox) {
    b["mailboxCapacity"] = *o.mailbox;
  }
  body = json::serialize(b);
  return true;
}

int run_query(const windowed_options& o) {
  std::string path, body, host, port;
  if (!windowed_request_of(o, false, path, body)) {
    return 2;
  }
  if (!split_url(o.url, host, port)) {
    std::cerr << "weir query: --url must look like http://host:port\n";
    return 2;
  }
  try {
    auto res = http_request(host, port, "POST", path, body);
    std::cout << res.body << '\n';
    return res.status == 200 ? 0 : 1;
  } catch (const beast::system_error& e) {
    std::cerr << "weir query: " << e.code().message() << '\n';
    return 1;
  }
}

int run_query_subscribe(const windowed_options& o) {
  std::string path, body, host, port;
  if (!windowed_request_of(o, true, path, body)) {
    return 2;
  }
  if (!split_url(o.url, host, port)) {
    std::cerr << "weir query-subscribe: --url must look like http://host:port\n";
    return 2;
  }
  try {
    asio::io_context ioc;
    tcp::resolver resolver{ioc};
    beast::tcp_stream stream{ioc};
    stream.connect(resolver.resolve(host, port));
    http::request<http::string_body> req{http::verb::post, path, 11};
    req.set(http::field::host, host + ":" + port);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "text/event-stream");
    req.body() = body;
    req.prepare_payload();
    http::write(stream, req);
    beast::flat_buffer buf;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    http::read_header(stream, buf, parser);
    if (parser.get().result_int() != 200) {
      // The error envelope: read it whole and print it.
      http::response_parser<http::string_body> whole{std::move(parser)};
      http::read(stream, buf, whole);
      std::cerr << "weir query-subscribe: " << whole.get().result_int() << " " << whole.get().body()
                << '\n';
      return 1;
    }
    std::string pending;
    long printed = 0;
    char chunk[16384];
    while (!parser.is_done()) {
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof chunk;
      beast::error_code ec;
      http::read_some(stream, buf, parser, ec);
      if (ec == http::error::need_buffer) {
        ec = {};
      }
      if (ec) {
        if (ec == http::error::end_of_stream || ec == asio::error::eof) {
          break;
        }
        throw beast::system_error{ec};
      }
      pending.append(chunk, sizeof chunk - parser.get().body().size);
      for (auto end = pending.find("\n\n"); end != std::string::npos; end = pending.find("\n\n")) {
        auto event = print_event(std::string_view{pending}.substr(0, end));
        pending.erase(0, end + 2);
        if (!event.empty() && ++printed == o.frames) {
          return 0;
        }
        if (event == "closed") {
          return 0;
        }
      }
    }
    return 0;
  } catch (const beast::system_error& e) {
    std::cerr << "weir query-subscribe: " << e.code().message() << '\n';
    return 1;
  }
}

}  // namespace weir::app

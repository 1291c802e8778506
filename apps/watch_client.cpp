// `weir watch`: connect, wait for Connected, subscribe with revision 1, print frames.
#include "apps/watch_client.hpp"

#include <cstdio>
#include <iostream>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

namespace weir::app {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

struct parsed_url {
  std::string host, port, target;
};

bool parse_ws_url(const std::string& url, parsed_url& out) {
  const std::string scheme = "ws://";
  if (url.rfind(scheme, 0) != 0) {
    return false;
  }
  auto rest = url.substr(scheme.size());
  auto slash = rest.find('/');
  auto hostport = rest.substr(0, slash);
  out.target = slash == std::string::npos ? "/.cratis/queries/ws" : rest.substr(slash);
  auto colon = hostport.rfind(':');
  if (colon == std::string::npos) {
    out.host = hostport;
    out.port = "80";
  } else {
    out.host = hostport.substr(0, colon);
    out.port = hostport.substr(colon + 1);
  }
  return !out.host.empty();
}

}  // namespace

int run_watch(const watch_options& opts) {
  parsed_url u;
  if (!parse_ws_url(opts.url, u)) {
    std::cerr << "weir watch: --url must look like ws://host:port/.cratis/queries/ws\n";
    return 2;
  }
  if (opts.query.empty()) {
    std::cerr << "weir watch: --query NAME is required (a `name` from the node's queries)\n";
    return 2;
  }
  int ws_reason_code = 0;
  std::string ws_reason_text;
  try {
    asio::io_context ioc;
    tcp::resolver resolver{ioc};
    websocket::stream<tcp::socket> ws{ioc};
    asio::connect(ws.next_layer(), resolver.resolve(u.host, u.port));
    ws.handshake(u.host + ":" + u.port, u.target);
    beast::flat_buffer buf;
    bool subscribed = false;
    long printed = 0;
    auto subscribe = [&] {
      boost::json::object args;
      for (auto& [k, v] : opts.arguments) {
        args[k] = v;
      }
      boost::json::object payload{{"queryName", opts.query}, {"arguments", args}};
      if (!opts.mode.empty()) {
        payload["transferMode"] = opts.mode;
      }
      boost::json::object frame{
          {"type", "Subscribe"}, {"queryId", opts.query_id}, {"revision", 1}, {"payload", payload}};
      ws.write(asio::buffer(boost::json::serialize(frame)));
      subscribed = true;
    };
    for (;;) {
      buf.clear();
      beast::error_code rec;
      ws.read(buf, rec);
      if (rec) {
        ws_reason_code = ws.reason().code;
        ws_reason_text = std::string{ws.reason().reason.c_str()};
        throw beast::system_error{rec};
      }
      auto text = beast::buffers_to_string(buf.data());
      std::cout << text << '\n' << std::flush;
      ++printed;
      if (!subscribed && text.find("\"Connected\"") != std::string::npos) {
        subscribe();
      }
      if (opts.frames >= 0 && printed >= opts.frames) {
        ws.close(websocket::close_code::normal);
        return 0;
      }
    }
  } catch (const beast::system_error& e) {
    if (e.code() == websocket::error::closed) {
      // A normal or going-away close ends the watch; anything else is the server refusing us.
      auto code = ws_reason_code;
      std::cerr << "weir watch: closed by the server (" << code
                << (ws_reason_text.empty() ? "" : " ") << ws_reason_text << ")\n";
      return code == 1000 || code == 1001 ? 0 : 1;
    }
    std::cerr << "weir watch: " << e.code().message() << '\n';
    return 1;
  }
}

}  // namespace weir::app

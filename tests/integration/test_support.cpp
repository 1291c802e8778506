// Integration test support (see the header).
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include "apps/config/node_config.hpp"
#include "apps/http_client/http_client.hpp"

namespace weir::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

temp_dir::temp_dir() {
  char tmpl[] = "/tmp/weir-test-XXXXXX";
  char* p = mkdtemp(tmpl);
  if (!p) {
    std::abort();
  }
  path_ = p;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string items_all_queries_yaml() {
  return R"(queries:
  - name: T.Items.All
    route: /api/t/items
    space: t
    object: "{obj}"
    dataset: items
    sort: ["n"]
    arguments: { obj: string }
)";
}

std::string default_queries_yaml() {
  return items_all_queries_yaml() + R"(  - name: T.Items.ByColor
    route: /api/t/items/by-color
    space: t
    object: "{obj}"
    dataset: items
    filter: { color: "{color}" }
    sort: ["n"]
    arguments: { obj: string, color: string }
  - name: T.Objects.One
    route: /api/t/objects/one
    space: t
    object: "{obj}"
    arguments: { obj: string }
  - name: T.Objects.All
    route: /api/t/objects
    space: t
    sort: ["name"]
)";
}

std::unique_ptr<app::node> start_node(const std::string& data_dir, const std::string& extra_yaml,
                                      std::optional<std::string> queries_yaml) {
  std::string yaml = "node: { http: \"127.0.0.1:0\", grpc: \"127.0.0.1:0\", dataDir: \"" +
                     data_dir + "\" }\n" + extra_yaml + "\n" +
                     queries_yaml.value_or(default_queries_yaml());
  auto cfg = config::load_config_text(yaml, "test.yaml");
  if (!cfg) {
    ADD_FAILURE() << "config: " << cfg.error().message;
    return nullptr;
  }
  auto n = app::node::start(std::move(cfg.value()));
  if (!n) {
    ADD_FAILURE() << "start: " << n.error().message;
    return nullptr;
  }
  return std::move(n.value());
}

boost::json::value http_response::json() const {
  return boost::json::parse(body);
}

http_response http(std::uint16_t port, const std::string& method, const std::string& target,
                   const std::string& body, const std::map<std::string, std::string>& headers) {
  auto r = app::http_request("127.0.0.1", std::to_string(port), method, target, body,
                             app::http_headers(headers.begin(), headers.end()), 10s);
  return http_response{r.status, std::move(r.body), std::move(r.headers)};
}

struct ws_client::impl {
  asio::io_context ioc;
  websocket::stream<beast::tcp_stream> ws{ioc};
  beast::flat_buffer buf;
  bool open = false;
  websocket::response_type upgrade;  // the answer to the upgrade request
  std::optional<std::pair<int, std::string>> close;
  // poll(): a read left pending across calls.
  bool reading = false;
  bool read_done = false;
  beast::error_code read_ec;
};

ws_client::ws_client(std::uint16_t port, const std::string& target,
                     const std::map<std::string, std::string>& headers)
    : impl_(std::make_unique<impl>()) {
  auto& s = beast::get_lowest_layer(impl_->ws);
  s.expires_after(10s);
  s.connect(tcp::endpoint{asio::ip::make_address("127.0.0.1"), port});
  impl_->ws.set_option(
      beast::websocket::stream_base::decorator([headers](beast::websocket::request_type& req) {
        for (const auto& [k, v] : headers) {
          req.set(k, v);
        }
      }));
  beast::error_code ec;
  impl_->ws.handshake(impl_->upgrade, "127.0.0.1:" + std::to_string(port), target, ec);
  if (ec) {
    if (impl_->upgrade.result_int() != 0 && impl_->upgrade.result_int() != 101) {
      return;  // refused with an HTTP answer (upgrade_status): not open
    }
    throw beast::system_error{ec};
  }
  s.expires_never();
  impl_->open = true;
}

ws_client::~ws_client() {
  if (impl_->open) {
    beast::error_code ec;
    beast::get_lowest_layer(impl_->ws).socket().close(ec);
  }
}

void ws_client::send(const std::string& text) {
  impl_->ws.text(true);
  impl_->ws.write(asio::buffer(text));
}

void ws_client::send_binary(const std::string& data) {
  impl_->ws.binary(true);
  impl_->ws.write(asio::buffer(data));
  impl_->ws.text(true);
}

unsigned ws_client::upgrade_status() const {
  return impl_->upgrade.result_int();
}

std::string ws_client::upgrade_header(const std::string& name) const {
  auto it = impl_->upgrade.find(name);
  return it == impl_->upgrade.end() ? std::string{} : std::string{it->value()};
}

std::optional<std::string> ws_client::read(std::chrono::milliseconds timeout) {
  if (!impl_->open) {
    return std::nullopt;
  }
  // Asynchronous read with a deadline: run the io_context until the read completes or the
  // timer fires, then cancel whichever is left.
  std::optional<std::string> out;
  bool done = false;
  beast::error_code rec;
  impl_->buf.clear();
  impl_->ws.async_read(impl_->buf, [&](beast::error_code ec, std::size_t) {
    done = true;
    rec = ec;
  });
  impl_->ioc.restart();
  impl_->ioc.run_for(timeout);
  if (!done) {
    // Timed out: cancel the read. Beast cannot resume a cancelled read, so the socket is
    // closed; callers that time out are asserting silence at the end of a test.
    beast::get_lowest_layer(impl_->ws).socket().cancel();
    impl_->ioc.restart();
    impl_->ioc.run();
    impl_->open = false;
    beast::error_code ec;
    beast::get_lowest_layer(impl_->ws).socket().close(ec);
    return std::nullopt;
  }
  if (rec) {
    impl_->open = false;
    if (rec == websocket::error::closed) {
      auto r = impl_->ws.reason();
      impl_->close = std::make_pair(static_cast<int>(r.code), std::string{r.reason.c_str()});
    }
    return std::nullopt;
  }
  return beast::buffers_to_string(impl_->buf.data());
}

std::optional<std::string> ws_client::poll(std::chrono::milliseconds timeout) {
  auto& i = *impl_;
  if (!i.open) {
    return std::nullopt;
  }
  if (!i.reading) {
    i.buf.clear();
    i.reading = true;
    i.read_done = false;
    i.ws.async_read(i.buf, [&i](beast::error_code ec, std::size_t) {
      i.read_done = true;
      i.read_ec = ec;
    });
  }
  i.ioc.restart();
  i.ioc.run_for(timeout);
  if (!i.read_done) {
    return std::nullopt;  // still reading: the next poll goes on with it
  }
  i.reading = false;
  if (i.read_ec) {
    i.open = false;
    if (i.read_ec == websocket::error::closed) {
      auto r = i.ws.reason();
      i.close = std::make_pair(static_cast<int>(r.code), std::string{r.reason.c_str()});
    }
    return std::nullopt;
  }
  return beast::buffers_to_string(i.buf.data());
}

boost::json::object ws_client::read_json(std::chrono::milliseconds timeout) {
  auto t = read(timeout);
  if (!t) {
    ADD_FAILURE() << "no frame within " << timeout.count() << " ms";
    return {};
  }
  auto v = boost::json::parse(*t);
  if (!v.is_object()) {
    ADD_FAILURE() << "frame is not an object: " << *t;
    return {};
  }
  return v.as_object();
}

boost::json::object ws_client::read_until(
    const std::function<bool(const boost::json::object&)>& pred,
    std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ADD_FAILURE() << "no matching frame within " << timeout.count() << " ms";
      return {};
    }
    auto t = read(left);
    if (!t) {
      ADD_FAILURE() << "no matching frame within " << timeout.count() << " ms";
      return {};
    }
    auto v = boost::json::parse(*t);
    if (v.is_object() && pred(v.as_object())) {
      return v.as_object();
    }
  }
}

bool ws_client::silent_for(std::chrono::milliseconds quiet) {
  auto t = read(quiet);
  if (t) {
    ADD_FAILURE() << "unexpected frame: " << *t;
    return false;
  }
  return true;
}

std::string ws_client::expect_connected() {
  auto f = read_json();
  EXPECT_EQ(f["type"], "Connected");
  if (!f.contains("payload") || !f["payload"].is_string()) {
    ADD_FAILURE() << "Connected without a string payload";
    return {};
  }
  return std::string{f["payload"].as_string()};
}

void ws_client::subscribe(const std::string& query_id, const std::string& query_name,
                          const boost::json::object& arguments, long long revision,
                          const std::string& transfer_mode, const boost::json::object& extra) {
  boost::json::object payload{{"queryName", query_name}, {"arguments", arguments}};
  if (!transfer_mode.empty()) {
    payload["transferMode"] = transfer_mode;
  }
  for (auto& kv : extra) {
    payload[kv.key()] = kv.value();
  }
  boost::json::object f{{"type", "Subscribe"}, {"queryId", query_id}, {"payload", payload}};
  if (revision >= 0) {
    f["revision"] = revision;
  }
  send(boost::json::serialize(f));
}

void ws_client::unsubscribe(const std::string& query_id, long long revision) {
  boost::json::object f{{"type", "Unsubscribe"}, {"queryId", query_id}};
  if (revision >= 0) {
    f["revision"] = revision;
  }
  send(boost::json::serialize(f));
}

std::optional<std::pair<int, std::string>> ws_client::close_status() const {
  return impl_->close;
}
bool ws_client::is_open() const {
  return impl_->open;
}

std::string put_record(std::uint16_t port, const std::string& space, const std::string& object,
                       const std::string& dataset, const std::string& id, const std::string& json) {
  auto r =
      http(port, "PUT",
           "/v1/spaces/" + space + "/objects/" + object + "/datasets/" + dataset + "/records/" + id,
           json);
  EXPECT_EQ(r.status, 200u) << r.body;
  if (r.status != 200) {
    return {};
  }
  return std::string{r.json().as_object()["versionId"].as_string()};
}

boost::json::value without_modified_at(boost::json::value doc) {
  if (auto* o = doc.if_object()) {
    auto* m = o->if_contains("modifiedAt");
    EXPECT_TRUE(m && m->is_int64()) << boost::json::serialize(doc);
    o->erase("modifiedAt");
  }
  return doc;
}

}  // namespace weir::test

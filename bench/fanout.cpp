// weir_fanout — a quick fan-out measurement: N WebSocket hub clients subscribe to one query key,
// a writer PATCHes records at a fixed rate, and every client counts frames and write→receipt
// latency. Event-driven (one io_context, no thread per connection). The full benchmark suite
// (several workloads, nchan side by side) is its own issue; this is the foundation's figure.
//
//   weir_fanout --port 8080 --clients 1000 --rate 200 --seconds 10
//
// It needs a node whose config has the query Bench.Items.All (object "fan", dataset "items"),
// e.g. `weir serve --config bench/fanout.yaml`.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "apps/http_client/http_client.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

std::int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct stats {
  std::atomic<std::uint64_t> frames{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> snapshots{0};
  std::vector<std::int64_t> latencies;  // io thread only
  bool measuring = false;
};

class client : public std::enable_shared_from_this<client> {
 public:
  client(asio::io_context& ioc, stats& st) : ws_(ioc), st_(st) {}

  void start(const tcp::endpoint& ep) {
    ws_.next_layer().async_connect(ep, [self = shared_from_this()](beast::error_code ec) {
      if (ec) {
        std::fprintf(stderr, "connect: %s\n", ec.message().c_str());
        return;
      }
      self->ws_.async_handshake("127.0.0.1", "/.cratis/queries/ws", [self](beast::error_code ec) {
        if (ec) {
          std::fprintf(stderr, "handshake: %s\n", ec.message().c_str());
          return;
        }
        self->read();
      });
    });
  }

 private:
  void read() {
    buf_.clear();
    ws_.async_read(buf_, [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      if (ec) {
        return;
      }
      self->on_frame(n);
      self->read();
    });
  }

  void on_frame(std::size_t n) {
    auto data = static_cast<const char*>(buf_.data().data());
    std::string_view text{data, buf_.size()};
    if (!subscribed_) {
      subscribed_ = true;
      auto sub = std::make_shared<std::string>(
          R"({"type":"Subscribe","queryId":"q","revision":1,"payload":{"queryName":"Bench.Items.All","arguments":{},"transferMode":"delta"}})");
      ws_.async_write(asio::buffer(*sub), [sub](beast::error_code, std::size_t) {});
      return;
    }
    if (text.find("\"changeSet\"") == std::string_view::npos) {
      st_.snapshots.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    st_.frames.fetch_add(1, std::memory_order_relaxed);
    st_.bytes.fetch_add(n, std::memory_order_relaxed);
    if (st_.measuring) {
      auto p = text.find("\"ts\":");
      if (p != std::string_view::npos) {
        auto sent = std::strtoll(data + p + 5, nullptr, 10);
        st_.latencies.push_back(mono_ns() - sent);
      }
    }
  }

  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buf_;
  stats& st_;
  bool subscribed_ = false;
};

std::int64_t pct(std::vector<std::int64_t>& v, double p) {
  if (v.empty()) {
    return 0;
  }
  auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

double cpu_seconds_of(int pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* f = std::fopen(path, "r");
  if (!f) {
    return 0;
  }
  char buf[1024];
  auto n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');
  unsigned long utime = 0, stime = 0;
  if (p) {
    std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

int main(int argc, char** argv) {
  int port = 8080, clients = 1000, rate = 200, seconds = 10, records = 10, server_pid = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (a == "--port")
      port = v;
    else if (a == "--clients")
      clients = v;
    else if (a == "--rate")
      rate = v;
    else if (a == "--seconds")
      seconds = v;
    else if (a == "--records")
      records = v;
    else if (a == "--server-pid")
      server_pid = v;
  }
  tcp::endpoint ep{asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)};
  // Seed the records so every write is a PATCH of an existing one.
  weir::app::http_client writer{"127.0.0.1", std::to_string(port)};
  std::string pad(100, 'x');
  for (int r = 0; r < records; ++r) {
    auto id = "r" + std::to_string(r);
    writer.request("PUT", "/v1/spaces/bench/objects/fan/datasets/items/records/" + id,
                   "{\"n\":" + std::to_string(r) + ",\"ts\":0,\"pad\":\"" + pad + "\"}");
  }
  stats st;
  asio::io_context ioc;
  std::vector<std::shared_ptr<client>> cs;
  for (int i = 0; i < clients; ++i) {
    cs.push_back(std::make_shared<client>(ioc, st));
    cs.back()->start(ep);
  }
  std::thread io{[&] {
    auto guard = asio::make_work_guard(ioc);
    ioc.run();
  }};
  auto wait_start = std::chrono::steady_clock::now();
  while (st.snapshots.load() < static_cast<std::uint64_t>(clients) &&
         std::chrono::steady_clock::now() - wait_start < std::chrono::seconds{60}) {
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  auto subscribed_in =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
  asio::post(ioc, [&] { st.measuring = true; });
  double cpu0 = server_pid ? cpu_seconds_of(server_pid) : 0;
  auto t0 = std::chrono::steady_clock::now();
  std::uint64_t writes = 0;
  auto period = std::chrono::nanoseconds{1000000000LL / std::max(1, rate)};
  auto next = t0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds{seconds}) {
    auto id = "r" + std::to_string(writes % static_cast<std::uint64_t>(records));
    writer.request("PATCH", "/v1/spaces/bench/objects/fan/datasets/items/records/" + id,
                   "{\"$set\":{\"ts\":" + std::to_string(mono_ns()) + "}}");
    ++writes;
    next += period;
    std::this_thread::sleep_until(next);
  }
  auto write_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::uint64_t expected = writes * static_cast<std::uint64_t>(clients);
  auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds{30};
  while (st.frames.load() < expected && std::chrono::steady_clock::now() < drain_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  auto total_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu1 = server_pid ? cpu_seconds_of(server_pid) : 0;
  std::vector<std::int64_t> lat;
  asio::post(ioc, [&] {
    st.measuring = false;
    lat = std::move(st.latencies);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds{200});
  ioc.stop();
  io.join();
  auto frames = st.frames.load();
  std::printf(
      "{\"workload\":\"fanout-ws\",\"clients\":%d,\"subscribed_s\":%.2f,\"writes\":%llu,"
      "\"writes_per_s\":%.1f,\"frames\":%llu,\"expected_frames\":%llu,\"frames_per_s\":%.0f,"
      "\"mbytes_per_s\":%.2f,\"latency_ms\":{\"p50\":%.2f,\"p99\":%.2f,\"p999\":%.2f,\"max\":%.2f},"
      "\"server_cpu_s\":%.2f}\n",
      clients, subscribed_in, static_cast<unsigned long long>(writes),
      static_cast<double>(writes) / write_secs, static_cast<unsigned long long>(frames),
      static_cast<unsigned long long>(expected), static_cast<double>(frames) / total_secs,
      static_cast<double>(st.bytes.load()) / total_secs / 1e6, pct(lat, 0.5) / 1e6,
      pct(lat, 0.99) / 1e6, pct(lat, 0.999) / 1e6,
      lat.empty() ? 0.0 : static_cast<double>(*std::max_element(lat.begin(), lat.end())) / 1e6,
      cpu1 - cpu0);
  return frames == expected ? 0 : 1;
}

// weir_window — the windowed-subscribe benchmark's client (bench/window drives it). It speaks
// only the public HTTP API and links nothing of the node:
//
//   weir_window load    --port P --count N [--batch 5000] [--payload 60] [--object room]
//       writes N records of about `payload` bytes into space "bench", dataset "msgs", through
//       the batch API; prints {"loaded":N,"seconds":…}.
//   weir_window open    --port P --body JSON [--scope object|objects|datasets]
//       opens a windowed subscription and prints {"ms_to_snapshot":…,"records":…} (the time from
//       sending the POST to the whole snapshot frame), then leaves.
//   weir_window latency --port P --body JSON --rate R --seconds S [--object room]
//       opens the subscription, then writes R records/s for S seconds on one keep-alive
//       connection, and matches each write to the `changes` frame that adds it; prints
//       {"writes":…,"matched":…,"p50_ms":…,"p90_ms":…,"p99_ms":…,"max_ms":…}.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/json/src.hpp>

#include "apps/http_client/http_client.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

namespace {

struct options {
  std::string host = "127.0.0.1";
  std::string port = "8080";
  std::string scope = "object";
  std::string body;
  std::string object = "room";
  long count = 0;
  long batch = 5000;
  long payload = 60;
  double rate = 100;
  double seconds = 5;
  double write_during_ms = 0;  ///< open: write to the object every this many ms meanwhile
};

std::string path_for(const std::string& scope, bool subscribe) {
  std::string p = "/v1/spaces/bench";
  if (scope == "objects" || scope == "datasets") {
    p += "/" + scope;
  }
  return p + (subscribe ? "/query/subscribe" : "/query");
}

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

/// A record of about `payload` bytes: {"id":…,"text":"…","_ver":{…}}.
json::object make_row(const std::string& id, long payload) {
  json::object r;
  r["id"] = id;
  auto fill = payload > 40 ? payload - 40 : 1;
  r["text"] = std::string(static_cast<std::size_t>(fill), 'x');
  return r;
}

/// A keep-alive connection for the writes and loads (Weir's tool client).
using connection = weir::app::http_client;

/// A windowed stream: sends the POST, then hands out SSE events as they arrive.
class stream {
 public:
  stream(const options& o, const std::string& body) : sock_(ioc_) {
    tcp::resolver resolver{ioc_};
    asio::connect(sock_, resolver.resolve(o.host, o.port));

    http::request<http::string_body> req{http::verb::post, path_for(o.scope, true), 11};
    req.set(http::field::host, o.host + ":" + o.port);
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    http::write(sock_, req);
    parser_.body_limit(boost::none);
    http::read_header(sock_, buf_, parser_);
    if (parser_.get().result_int() != 200) {
      throw std::runtime_error("subscribe answered " + std::to_string(parser_.get().result_int()));
    }
  }

  /// The next event's text ("event: …\ndata: …"); empty at the end of the stream.
  std::string next() {
    for (;;) {
      auto end = pending_.find("\n\n");
      if (end != std::string::npos) {
        auto ev = pending_.substr(0, end);
        pending_.erase(0, end + 2);
        if (!ev.empty() && ev.front() == ':') {
          continue;  // keepalive
        }
        return ev;
      }
      if (parser_.is_done()) {
        return {};
      }
      char chunk[65536];
      parser_.get().body().data = chunk;
      parser_.get().body().size = sizeof chunk;
      beast::error_code ec;
      http::read_some(sock_, buf_, parser_, ec);
      if (ec == http::error::need_buffer) {
        ec = {};
      }
      if (ec) {
        return {};
      }
      pending_.append(chunk, sizeof chunk - parser_.get().body().size);
    }
  }

  void close() {
    beast::error_code ec;
    sock_.close(ec);
  }

  /// Ends a read blocked in another thread (the stream gives up).
  void abort() { ::shutdown(sock_.native_handle(), SHUT_RDWR); }

 private:
  asio::io_context ioc_;
  tcp::socket sock_;
  beast::flat_buffer buf_;
  http::response_parser<http::buffer_body> parser_;
  std::string pending_;
};

int do_load(const options& o) {
  connection c{o.host, o.port};
  auto t0 = clock_type::now();
  long done = 0;
  while (done < o.count) {
    json::array up;
    auto n = std::min(o.batch, o.count - done);
    for (long i = 0; i < n; ++i) {
      up.push_back(make_row("r" + std::to_string(done + i), o.payload));
    }
    json::object body;
    body["upsert"] = std::move(up);
    auto res = c.request("POST", "/v1/spaces/bench/objects/" + o.object + "/datasets/msgs/records",
                         json::serialize(body));
    if (res.status != 200) {
      std::cerr << "weir_window load: " << res.status << " " << res.body << "\n";
      return 1;
    }
    done += n;
  }
  std::printf("{\"loaded\":%ld,\"seconds\":%.3f}\n", done, ms_since(t0) / 1000);
  return 0;
}

int do_open(const options& o) {
  // With --write-during: a write to the same object every few ms while the window opens, each
  // timed to its answer; the slowest says how long the open held the unit's writes.
  std::atomic<bool> opening{true};
  double max_write_ms = 0;
  long writes_during = 0;
  std::thread writer;
  if (o.write_during_ms > 0) {
    writer = std::thread{[&] {
      connection c{o.host, o.port};
      for (long i = 0; opening; ++i) {
        auto id = "open-w" + std::to_string(i);
        auto w0 = clock_type::now();
        auto res = c.request(
            "PUT", "/v1/spaces/bench/objects/" + o.object + "/datasets/msgs/records/" + id,
            json::serialize(make_row(id, o.payload)));
        if (res.status != 200) {
          std::cerr << "weir_window open: write " << res.status << "\n";
        }
        max_write_ms = std::max(max_write_ms, ms_since(w0));
        ++writes_during;
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(o.write_during_ms));
      }
    }};
    std::this_thread::sleep_for(std::chrono::milliseconds{20});  // its first write is answered
  }
  auto t0 = clock_type::now();
  stream s{o, o.body};
  auto ready = s.next();
  auto snap = s.next();
  auto ms = ms_since(t0);
  opening = false;
  if (writer.joinable()) {
    writer.join();
  }
  if (snap.rfind("event: snapshot", 0) != 0) {
    std::cerr << "weir_window open: no snapshot, got " << ready << " / " << snap << "\n";
    return 1;
  }
  auto data = json::parse(snap.substr(snap.find("data: ") + 6));
  std::printf(
      "{\"ms_to_snapshot\":%.3f,\"records\":%zu,\"writes_during\":%ld,"
      "\"max_write_ms\":%.3f}\n",
      ms, data.as_object().at("records").as_array().size(), writes_during, max_write_ms);
  s.close();
  return 0;
}

int do_latency(const options& o) {
  stream s{o, o.body};
  s.next();  // ready
  s.next();  // snapshot
  std::mutex mu;
  std::map<std::string, clock_type::time_point> sent;
  std::vector<double> lat;
  std::atomic<bool> writing{true};
  long writes = static_cast<long>(o.rate * o.seconds);
  std::thread writer{[&] {
    connection c{o.host, o.port};
    auto period = std::chrono::duration<double>(1.0 / o.rate);
    auto start = clock_type::now();
    for (long i = 0; i < writes; ++i) {
      auto due = start + std::chrono::duration_cast<clock_type::duration>(period * i);
      std::this_thread::sleep_until(due);
      auto id = "w" + std::to_string(i);
      {
        std::lock_guard lock{mu};
        sent[id] = clock_type::now();
      }
      auto res =
          c.request("PUT", "/v1/spaces/bench/objects/" + o.object + "/datasets/msgs/records/" + id,
                    json::serialize(make_row(id, o.payload)));
      if (res.status != 200) {
        std::cerr << "weir_window latency: write " << res.status << "\n";
      }
    }
    writing = false;
  }};
  // Frames for the last writes get a few seconds; then the stream is given up on.
  std::thread watchdog{[&] {
    while (writing) {
      std::this_thread::sleep_for(std::chrono::milliseconds{50});
    }
    auto until = clock_type::now() + std::chrono::seconds{10};
    while (clock_type::now() < until) {
      {
        std::lock_guard lock{mu};
        if (sent.empty()) {
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{50});
    }
    s.abort();  // the reader may be waiting for a frame that is not coming: end its read
  }};
  long matched = 0;
  auto deadline_after_writes = std::chrono::seconds{5};
  auto stop_at = clock_type::time_point::max();
  while (clock_type::now() < stop_at) {
    auto ev = s.next();
    if (ev.empty()) {
      break;
    }
    auto now = clock_type::now();
    if (ev.rfind("event: changes", 0) != 0) {
      continue;
    }
    auto data = json::parse(ev.substr(ev.find("data: ") + 6));
    for (auto& e : data.as_array()) {
      for (const char* list : {"added", "updated"}) {
        auto* added = e.as_object().if_contains(list);
        if (!added) {
          continue;
        }
        for (auto& a : added->as_array()) {
          std::string id{a.as_object().at("id").as_string()};
          std::lock_guard lock{mu};
          if (auto it = sent.find(id); it != sent.end()) {
            lat.push_back(std::chrono::duration<double, std::milli>(now - it->second).count());
            sent.erase(it);
            ++matched;
          }
        }
      }
    }
    if (!writing && stop_at == clock_type::time_point::max()) {
      stop_at = now + deadline_after_writes;
    }
    if (!writing && matched >= writes) {
      break;
    }
  }
  writer.join();
  watchdog.join();
  s.close();
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) {
    return lat.empty() ? 0.0
                       : lat[std::min(lat.size() - 1, static_cast<std::size_t>(p * lat.size()))];
  };
  std::printf(
      "{\"writes\":%ld,\"matched\":%ld,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,"
      "\"max_ms\":%.3f}\n",
      writes, matched, pct(0.5), pct(0.9), pct(0.99), lat.empty() ? 0.0 : lat.back());
  return matched == writes ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: weir_window load|open|latency --port P [options] (see bench/window.cpp)\n";
    return 2;
  }
  std::string cmd = argv[1];
  options o;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--port") {
      o.port = v;
    } else if (k == "--host") {
      o.host = v;
    } else if (k == "--body") {
      o.body = v;
    } else if (k == "--scope") {
      o.scope = v;
    } else if (k == "--object") {
      o.object = v;
    } else if (k == "--count") {
      o.count = std::stol(v);
    } else if (k == "--batch") {
      o.batch = std::stol(v);
    } else if (k == "--payload") {
      o.payload = std::stol(v);
    } else if (k == "--rate") {
      o.rate = std::stod(v);
    } else if (k == "--seconds") {
      o.seconds = std::stod(v);
    } else if (k == "--write-during") {
      o.write_during_ms = std::stod(v);
    } else {
      std::cerr << "weir_window: unknown option " << k << "\n";
      return 2;
    }
  }
  try {
    if (cmd == "load") {
      return do_load(o);
    }
    if (cmd == "open") {
      return do_open(o);
    }
    if (cmd == "latency") {
      return do_latency(o);
    }
  } catch (const std::exception& e) {
    std::cerr << "weir_window " << cmd << ": " << e.what() << "\n";
    return 1;
  }
  std::cerr << "weir_window: unknown command " << cmd << "\n";
  return 2;
}

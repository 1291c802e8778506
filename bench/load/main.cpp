// weir_load main: the workloads (fanout, manykeys, idle, storm), their measurement and
// their report (one JSON line per step on stdout, a human-readable row on stderr).
//
//   weir_load --server weir|nchan|ceiling --transport ws|sse --workload fanout|manykeys|idle|storm
//             --port P [--write-port P2] [--subscribers N] [--keys K] [--streams R] [--publishers
//             P]
//             [--rates 100,200,0] [--step-seconds S] [--payload BYTES] [--sources 4]
//             [--server-pid PID] [--hold-seconds S] [--window W] [--label TEXT] [--batch N]
//             [--writes-file PATH [--wait-ready N] | --passive --writes-file PATH]
//
// --batch N (Weir, manykeys): each publisher sends its writes as cross-unit batches
// (POST /v1/spaces/bench/batch) of up to N writes gathered in one tick, instead of one PUT each.
//
// Exit status 0 only when every subscriber got ready and every step delivered exactly
// subscribers × writes frames, none lost, none out of order.
//
// Several processes can share one fan-out (bench/cluster-scale): each creates PATH.ready-<label>
// once its subscribers have their snapshots. The writer (--writes-file without --passive) waits
// for N other markers (--wait-ready N), runs its steps and, once its writes are answered, writes
// "<acknowledged writes> <streams>" to PATH. A --passive process only subscribes: it waits for
// PATH, then for every subscriber to receive every write (--drain-seconds), and prints one JSON
// line. The records' ts is CLOCK_MONOTONIC, so latency holds across processes on one machine.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "load.hpp"
#include "options.hpp"
#include "proc_stats.hpp"

namespace weir::bench {
namespace {

using asio::awaitable;
using asio::use_awaitable;

const char* name_of(server_kind s) {
  return s == server_kind::weir ? "weir" : s == server_kind::nchan ? "nchan" : "ceiling";
}
const char* name_of(transport t) {
  return t == transport::ws ? "ws" : t == transport::sse ? "sse" : "windowed";
}

awaitable<void> sleep_ms(double ms) {
  asio::steady_timer t{co_await asio::this_coro::executor};
  t.expires_after(std::chrono::microseconds{static_cast<std::int64_t>(ms * 1000)});
  co_await t.async_wait(use_awaitable);
}

/// Polls `pred` every 2 ms; false when `seconds` pass first.
template <class Pred>
awaitable<bool> wait_until(Pred pred, double seconds) {
  auto deadline = mono_ns() + static_cast<std::int64_t>(seconds * 1e9);
  while (!pred()) {
    if (mono_ns() > deadline)
      co_return false;
    co_await sleep_ms(2);
  }
  co_return true;
}

class bench_run {
 public:
  bench_run(asio::io_context& ioc, options o) : ioc_(ioc), o_(std::move(o)) {
    t_.server = o_.server;
    t_.via = o_.via;
    t_.endpoint =
        tcp::endpoint{asio::ip::make_address(o_.host), static_cast<unsigned short>(o_.port)};
    // Writes may go to another node of a cluster than the subscribers (e.g. the data's owner).
    write_endpoint_ =
        tcp::endpoint{asio::ip::make_address(o_.host),
                      static_cast<unsigned short>(o_.write_port ? o_.write_port : o_.port)};
    for (int i = 0; i < o_.sources; ++i) {
      t_.sources.push_back(asio::ip::make_address("127.0.0." + std::to_string(1 + i)));
    }
    t_.streams_per_key = o_.streams;
    seq_.assign(static_cast<std::size_t>(o_.keys * o_.streams), 0);
    acked_.assign(static_cast<std::size_t>(o_.keys), 0);
    subs_per_key_.assign(static_cast<std::size_t>(o_.keys), 0);
  }

  awaitable<void> run() {
    if (!o_.passive)
      ok_ = co_await connect_publishers();
    if (ok_ && !o_.passive && o_.server == server_kind::weir &&
        (o_.workload == "fanout" || o_.workload == "manykeys")) {
      ok_ = co_await seed();
    }
    if (ok_ && o_.server == server_kind::weir && o_.via == transport::sse) {
      ok_ = co_await connect_control();
    }
    if (!ok_) {
      std::fprintf(stderr, "weir_load: cannot reach the server on %s:%d\n", o_.host.c_str(),
                   o_.port);
      ioc_.stop();
      co_return;
    }
    if (o_.workload == "idle") {
      co_await idle();
    } else if (o_.workload == "storm") {
      co_await storm();
    } else if (o_.passive) {
      co_await passive();
    } else {
      co_await steps();
    }
    for (auto& s : subs_)
      s->stop();
    ioc_.stop();
  }

  bool ok() const { return ok_; }

 private:
  awaitable<bool> connect_publishers() {
    int up = 0, done = 0;
    for (int i = 0; i < o_.publishers; ++i) {
      auto p = std::make_shared<http_pipe>(
          ioc_, write_endpoint_, t_.sources[static_cast<std::size_t>(i) % t_.sources.size()]);
      p->connect([&](bool ok) {
        ++done;
        up += ok;
      });
      pubs_.push_back(p);
    }
    co_await wait_until([&] { return done == o_.publishers; }, 10);
    co_return up == o_.publishers;
  }

  /// Weir's SSE hub binds an anonymous stream to the peer address that opened it (seed 001), so
  /// each source address gets its own control connections.
  awaitable<bool> connect_control() {
    int up = 0, done = 0, n = 2 * static_cast<int>(t_.sources.size());
    for (int i = 0; i < n; ++i) {
      auto p = std::make_shared<http_pipe>(
          ioc_, t_.endpoint, t_.sources[static_cast<std::size_t>(i) % t_.sources.size()]);
      p->connect([&](bool ok) {
        ++done;
        up += ok;
      });
      control_.push_back(p);
    }
    co_await wait_until([&] { return done == n; }, 10);
    co_return up == n;
  }

  std::string request_for(int key, int r, std::uint64_t seq) const {
    auto body = make_record(r, seq, mono_ns(), o_.payload);
    std::string head;
    if (o_.server == server_kind::weir) {
      head = "PUT /v1/spaces/bench/objects/" + key_name(key) + "/datasets/items/records/r" +
             std::to_string(r) + " HTTP/1.1\r\n";
    } else {
      head = "POST /pub/" + key_name(key) + " HTTP/1.1\r\n";
    }
    head += "Host: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n\r\n";
    return head + body;
  }

  /// One write on stream `g` (key g / streams, record g % streams), through the publisher that
  /// owns the stream, so a stream's writes reach the server in sequence order.
  void write(int g) {
    int key = g / o_.streams, r = g % o_.streams;
    owed_ += subs_per_key_[static_cast<std::size_t>(key)];
    auto seq = ++seq_[static_cast<std::size_t>(g)];
    if (o_.batch > 1) {
      auto& b = batches_[static_cast<std::size_t>(g % o_.publishers)];
      for (const auto& w : b) {
        if (w.g == g) {  // one write per record in a batch: send what is gathered first
          flush(g % o_.publishers);
          break;
        }
      }
      b.push_back({g, seq});
      if (static_cast<int>(b.size()) >= o_.batch)
        flush(g % o_.publishers);
      return;
    }
    auto& pipe = pubs_[static_cast<std::size_t>(g % o_.publishers)];
    ++sent_;
    pipe->send([this, key, r, seq] { return request_for(key, r, seq); },
               [this, key](unsigned status) {
                 if (status >= 200 && status < 300) {
                   ++acked_[static_cast<std::size_t>(key)];
                   ++acked_total_;
                 } else {
                   ++write_errors_;
                   owed_ -= subs_per_key_[static_cast<std::size_t>(key)];  // no frames will come
                 }
               });
  }

  struct batched {
    int g;
    std::uint64_t seq;
  };

  /// Sends publisher `p`'s gathered writes as one cross-unit batch, a write per key (its
  /// records in one upsert).
  void flush(int p) {
    auto& b = batches_[static_cast<std::size_t>(p)];
    if (b.empty())
      return;
    auto writes = std::make_shared<std::vector<batched>>(std::move(b));
    b.clear();
    sent_ += writes->size();
    pubs_[static_cast<std::size_t>(p)]->send(
        [this, writes] {
          std::map<int, std::string> by_key;
          for (const auto& w : *writes) {
            int key = w.g / o_.streams, r = w.g % o_.streams;
            auto rec = make_record(r, w.seq, mono_ns(), o_.payload);
            rec.insert(1, "\"id\":\"r" + std::to_string(r) + "\",");
            auto& upsert = by_key[key];
            upsert += (upsert.empty() ? "" : ",") + rec;
          }
          std::string body = "{\"writes\":[";
          bool first = true;
          for (const auto& [key, upsert] : by_key) {
            body += (first ? "" : ",") + std::string{"{\"objectId\":\""} + key_name(key) +
                    "\",\"dataset\":\"items\",\"upsert\":[" + upsert + "]}";
            first = false;
          }
          body += "]}";
          return "POST /v1/spaces/bench/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                 "application/json\r\nContent-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n" + body;
        },
        [this, writes](unsigned status) {
          // 200 answers the batch; a write in it that failed sends no frame, which the step
          // counts as lost.
          for (const auto& w : *writes) {
            int key = w.g / o_.streams;
            if (status >= 200 && status < 300) {
              ++acked_[static_cast<std::size_t>(key)];
              ++acked_total_;
            } else {
              ++write_errors_;
              owed_ -= subs_per_key_[static_cast<std::size_t>(key)];
            }
          }
        });
  }

  void flush_all() {
    for (int p = 0; p < o_.publishers && o_.batch > 1; ++p)
      flush(p);
  }

  int pick_stream(int publisher) {
    // Round-robin over this publisher's streams (fanout), or a random one (manykeys).
    int total = o_.keys * o_.streams;
    int per = (total - publisher + o_.publishers - 1) / o_.publishers;
    if (per <= 0)
      return -1;
    int i = o_.workload == "manykeys" ? static_cast<int>(rng_() % static_cast<unsigned>(per))
                                      : (rr_[static_cast<std::size_t>(publisher)]++ % per);
    return publisher + i * o_.publishers;
  }

  /// As fast as the server takes them, closed-loop on delivery: new writes go out while fewer
  /// than `window` writes per key are still owed to some subscriber. An open loop (writes as
  /// fast as they are acknowledged) would only measure how fast frames pile up in queues.
  void refill() {
    auto limit = static_cast<std::uint64_t>(o_.window) * static_cast<std::uint64_t>(o_.subscribers);
    while (owed_ < st_.frames + limit) {
      int p = next_pub_++ % o_.publishers;
      int g = pick_stream(p);
      if (g < 0)
        break;
      write(g);
    }
    flush_all();
  }

  awaitable<bool> seed() {
    // Every record exists before anyone subscribes, so each write is a replacement.
    for (int g = 0; g < o_.keys * o_.streams; ++g) {
      int key = g / o_.streams, r = g % o_.streams;
      pubs_[static_cast<std::size_t>(g % o_.publishers)]->send(
          [this, key, r] { return request_for(key, r, 0); },
          [this](unsigned status) {
            seeded_ += status >= 200 && status < 300 ? 1 : 0;
            ++seed_done_;
          });
    }
    co_await wait_until([&] { return seed_done_ == o_.keys * o_.streams; }, 60);
    co_return seeded_ == o_.keys* o_.streams;
  }

  /// Starts subscribers so that at most `concurrency` are connecting at once.
  awaitable<bool> connect_subscribers(int concurrency, double timeout_s) {
    st_.epoch_ns = mono_ns();
    int next = 0, in_flight = 0;
    auto launch = [&](auto& self) -> void {
      while (next < o_.subscribers && in_flight < concurrency) {
        int i = next++;
        int key = i % o_.keys;
        ++subs_per_key_[static_cast<std::size_t>(key)];
        auto source = t_.sources[static_cast<std::size_t>(i) % t_.sources.size()];
        std::weak_ptr<subscriber> weak;
        auto s = std::make_shared<subscriber>(
            ioc_, t_, st_, key, source, [this, i](const std::string& body) { control(i, body); });
        subs_.push_back(s);
        ++in_flight;
        s->start([&, self_ref = &self](bool) {
          --in_flight;
          (*self_ref)(*self_ref);
        });
      }
    };
    launch(launch);
    bool all = co_await wait_until(
        [&] { return st_.ready + st_.failed >= static_cast<std::uint64_t>(o_.subscribers); },
        timeout_s);
    connect_seconds_ = static_cast<double>(mono_ns() - st_.epoch_ns) / 1e9;
    co_return all&& st_.ready == static_cast<std::uint64_t>(o_.subscribers);
  }

  void control(int i, const std::string& body) {
    // Same source address as subscriber i (see connect_subscribers), one of its two pipes.
    auto sources = t_.sources.size();
    auto& pipe = control_[static_cast<std::size_t>(i) % sources +
                          sources * ((static_cast<std::size_t>(i) / sources) % 2)];
    std::string req =
        "POST /.cratis/queries/sse/subscribe HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/json\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    pipe->send([req] { return req; },
               [this, i](unsigned status) {
                 if (status != 200)
                   subs_[static_cast<std::size_t>(i)]->control_failed();
               });
  }

  std::uint64_t expected_frames() const {
    std::uint64_t e = 0;
    for (std::size_t k = 0; k < acked_.size(); ++k)
      e += acked_[k] * subs_per_key_[k];
    return e;
  }

  struct sample {
    double t, client_cpu, server_cpu;
  };
  sample now() const {
    return {static_cast<double>(mono_ns()) / 1e9, self_cpu_seconds(),
            process_cpu_seconds(o_.server_pid)};
  }

  /// The writer's step lines also carry what bench/cluster-scale sums over processes.
  std::string writer_json() const {
    if (o_.writes_file.empty())
      return "";
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  ",\"mode\":\"writer\",\"first_frame_ns\":%lld,\"last_frame_ns\":%lld,"
                  "\"server_rss_ready_mib\":%.1f",
                  static_cast<long long>(st_.first_frame_ns),
                  static_cast<long long>(st_.last_frame_ns),
                  static_cast<double>(rss_ready_) / (1 << 20));
    return buf;
  }

  std::string common_json() const {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "\"workload\":\"%s\",\"server\":\"%s\",\"transport\":\"%s\",\"label\":\"%s\","
                  "\"subscribers\":%d,\"keys\":%d,\"streams_per_key\":%d,\"payload_bytes\":%zu",
                  o_.workload.c_str(), name_of(o_.server), name_of(o_.via), o_.label.c_str(),
                  o_.subscribers, o_.keys, o_.streams, o_.payload);
    return buf;
  }

  awaitable<void> steps() {
    if (!co_await connect_subscribers(512, 120)) {
      report_not_ready();
      co_return;
    }
    if (!o_.writes_file.empty()) {
      rss_ready_ = process_rss_bytes(o_.server_pid);
      mark_ready();
      if (!co_await wait_until([&] { return ready_markers() >= o_.wait_ready + 1; }, 900)) {
        failures_ = true;
        std::fprintf(stderr, "weir_load: only %d of %d other generators got ready\n",
                     ready_markers() - 1, o_.wait_ready);
        co_return;
      }
      // The node closes a keep-alive connection after 60 s without a request, and the others
      // may take longer than that: write on fresh connections.
      for (auto& p : pubs_)
        p->close();
      pubs_.clear();
      if (!co_await connect_publishers()) {
        failures_ = true;
        std::fprintf(stderr, "weir_load: cannot reconnect the publishers\n");
        co_return;
      }
    }
    for (std::size_t i = 0; i < o_.rates.size(); ++i) {
      bool saturated = co_await step(o_.rates[i], i + 1 == o_.rates.size());
      if (saturated) {
        // Past saturation only the as-fast-as-possible step still says something new.
        if (o_.rates.back() == 0 && i + 1 < o_.rates.size() - 1)
          i = o_.rates.size() - 2;
        else if (o_.rates[i] != 0 && o_.rates.back() != 0)
          break;
      }
    }
    if (!o_.writes_file.empty() && !writes_file_done_)
      write_writes_file();  // the steps stopped early (saturated)
  }

  /// PATH.ready-<label>: this process's subscribers all have their snapshots.
  void mark_ready() {
    std::ofstream{o_.writes_file + ".ready-" + o_.label} << st_.ready << "\n";
    std::fprintf(stderr, "weir_load %s: ready, %llu subscribers\n", o_.label.c_str(),
                 static_cast<unsigned long long>(st_.ready));
  }

  int ready_markers() const {
    namespace fs = std::filesystem;
    fs::path p{o_.writes_file};
    auto prefix = p.filename().string() + ".ready-";
    auto dir = p.parent_path().empty() ? fs::path{"."} : p.parent_path();
    int n = 0;
    std::error_code ec;
    for (auto& e : fs::directory_iterator{dir, ec})
      n += e.path().filename().string().starts_with(prefix);
    return n;
  }

  /// "<acknowledged writes> <streams>", written whole (rename) so a reader never sees half.
  void write_writes_file() {
    writes_file_done_ = true;
    auto tmp = o_.writes_file + ".tmp";
    std::ofstream{tmp} << acked_total_ << " " << o_.streams << "\n";
    std::rename(tmp.c_str(), o_.writes_file.c_str());
  }

  bool read_writes_file(std::uint64_t& acked) const {
    std::ifstream in{o_.writes_file};
    std::uint64_t n = 0;
    int streams = 0;
    if (!(in >> n >> streams))
      return false;
    if (streams != o_.streams)
      usage("the writer wrote " + std::to_string(streams) + " streams, --streams differs");
    acked = n;
    return true;
  }

  /// Subscribes, waits for the writer's count, then for every frame of every write.
  awaitable<void> passive() {
    if (!co_await connect_subscribers(512, 600)) {
      report_not_ready();
      co_return;
    }
    auto rss_ready = process_rss_bytes(o_.server_pid);
    mark_ready();
    std::uint64_t writes = 0;
    std::optional<sample> s0;
    while (!read_writes_file(writes)) {
      if (!s0 && st_.frames > 0)
        s0 = now();  // CPU is measured from about the first frame on
      co_await sleep_ms(50);
    }
    auto expected = writes * static_cast<std::uint64_t>(o_.subscribers);
    co_await wait_until([&] { return st_.frames >= expected; }, o_.drain_seconds);
    auto s1 = now();
    if (!s0)
      s0 = s1;
    auto lost = expected > st_.frames ? expected - st_.frames : 0;
    double receive_s = static_cast<double>(st_.last_frame_ns - st_.first_frame_ns) / 1e9;
    double fps = receive_s > 0 ? static_cast<double>(st_.frames) / receive_s : 0;
    if (lost || st_.out_of_order || st_.gaps || st_.failed || st_.errors)
      failures_ = true;
    auto ms = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e6; };
    double cpu_s = s1.t - s0->t > 0 ? s1.t - s0->t : 1;
    std::printf(
        "{%s,\"mode\":\"passive\",\"writes\":%llu,\"frames\":%llu,\"expected_frames\":%llu,"
        "\"lost\":%llu,\"gaps\":%llu,\"out_of_order\":%llu,\"errors\":%llu,"
        "\"frames_per_s\":%.0f,\"receive_s\":%.3f,\"first_frame_ns\":%lld,"
        "\"last_frame_ns\":%lld,\"latency_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"p999\":%.3f,"
        "\"max\":%.3f},\"client_cpu_pct\":%.1f,\"server_cpu_pct\":%.1f,"
        "\"server_rss_ready_mib\":%.1f,\"server_rss_mib\":%.1f,\"subscribers_failed\":%llu}\n",
        common_json().c_str(), static_cast<unsigned long long>(writes),
        static_cast<unsigned long long>(st_.frames), static_cast<unsigned long long>(expected),
        static_cast<unsigned long long>(lost), static_cast<unsigned long long>(st_.gaps),
        static_cast<unsigned long long>(st_.out_of_order),
        static_cast<unsigned long long>(st_.errors), fps, receive_s,
        static_cast<long long>(st_.first_frame_ns), static_cast<long long>(st_.last_frame_ns),
        ms(st_.latency.percentile(0.5)), ms(st_.latency.percentile(0.99)),
        ms(st_.latency.percentile(0.999)), ms(st_.latency.max()),
        100 * (s1.client_cpu - s0->client_cpu) / cpu_s,
        100 * (s1.server_cpu - s0->server_cpu) / cpu_s, static_cast<double>(rss_ready) / (1 << 20),
        static_cast<double>(process_rss_bytes(o_.server_pid)) / (1 << 20),
        static_cast<unsigned long long>(st_.failed));
    std::fflush(stdout);
    std::fprintf(stderr,
                 "passive  %-5s %-3s %s subs=%-6d writes=%llu frames/s=%-9.0f p50=%.2fms "
                 "p99=%.2fms lost=%llu ooo=%llu\n",
                 name_of(o_.server), name_of(o_.via), o_.label.c_str(), o_.subscribers,
                 static_cast<unsigned long long>(writes), fps, ms(st_.latency.percentile(0.5)),
                 ms(st_.latency.percentile(0.99)), static_cast<unsigned long long>(lost),
                 static_cast<unsigned long long>(st_.out_of_order));
  }

  awaitable<bool> step(int rate, bool last) {
    st_.latency.clear();
    st_.first_frame_ns = st_.last_frame_ns = 0;
    auto frames0 = st_.frames, bytes0 = st_.bytes, ooo0 = st_.out_of_order, gaps0 = st_.gaps;
    auto expected0 = expected_frames();
    auto acked0 = acked_total_;
    auto errors0 = write_errors_;
    auto s0 = now();
    auto start = mono_ns();
    auto end = start + static_cast<std::int64_t>(o_.step_seconds * 1e9);
    std::uint64_t offered = 0, skipped = 0;
    if (rate == 0) {
      owed_ = st_.frames;  // frames already delivered are not owed
      while (mono_ns() < end) {
        refill();
        co_await sleep_ms(0.2);
      }
    } else {
      int next_pub = 0;
      while (mono_ns() < end) {
        auto due = static_cast<std::uint64_t>(static_cast<double>(mono_ns() - start) / 1e9 * rate);
        while (offered < due) {
          ++offered;
          int p = o_.workload == "manykeys"
                      ? static_cast<int>(rng_() % static_cast<unsigned>(o_.publishers))
                      : next_pub++ % o_.publishers;
          if (pubs_[static_cast<std::size_t>(p)]->pending() > 4096) {
            ++skipped;  // the server is not taking writes at this rate
            continue;
          }
          int g = pick_stream(p);
          if (g >= 0)
            write(g);
        }
        flush_all();
        co_await sleep_ms(1);
      }
    }
    auto write_end = mono_ns();
    // Every write answered, then every frame for them delivered (or the drain time passes).
    co_await wait_until(
        [&] {
          return std::all_of(pubs_.begin(), pubs_.end(), [](auto& p) { return p->pending() == 0; });
        },
        o_.drain_seconds);
    if (last && !o_.writes_file.empty())
      write_writes_file();  // the passive processes' expected count, before this one's drain
    auto expected = expected_frames() - expected0;
    bool drained =
        co_await wait_until([&] { return st_.frames - frames0 >= expected; }, o_.drain_seconds);
    auto drain_end = mono_ns();
    auto s1 = now();
    auto frames = st_.frames - frames0;
    auto writes = acked_total_ - acked0;
    double write_secs = static_cast<double>(write_end - start) / 1e9;
    double total_secs = static_cast<double>(drain_end - start) / 1e9;
    double drain_secs = static_cast<double>(drain_end - write_end) / 1e9;
    auto lost = expected > frames ? expected - frames : 0;
    auto ooo = st_.out_of_order - ooo0;
    auto gaps = st_.gaps - gaps0;
    double writes_per_s = static_cast<double>(writes) / write_secs;
    // Saturated: the server did not take the offered writes, or did not deliver them within a
    // second of the last one, or kept frames waiting over a second.
    bool saturated =
        !drained || drain_secs > 1.0 || skipped > 0 ||
        (rate > 0 && static_cast<double>(writes) < 0.9 * static_cast<double>(offered)) ||
        st_.latency.percentile(0.99) > 1'000'000'000;
    if (lost || ooo || gaps || write_errors_ != errors0 || st_.failed)
      failures_ = true;
    auto ms = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e6; };
    std::printf(
        "{%s,\"rate_offered\":%d,\"writes\":%llu,\"write_errors\":%llu,\"writes_per_s\":%.1f,"
        "\"frames\":%llu,\"expected_frames\":%llu,\"lost\":%llu,\"gaps\":%llu,\"out_of_order\":%"
        "llu,"
        "\"frames_per_s\":%.0f,\"mbytes_per_s\":%.2f,"
        "\"latency_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f},"
        "\"drain_s\":%.3f,\"saturated\":%s,\"client_cpu_pct\":%.1f,\"server_cpu_pct\":%.1f,"
        "\"server_rss_mib\":%.1f,\"subscribers_failed\":%llu%s}\n",
        common_json().c_str(), rate, static_cast<unsigned long long>(writes),
        static_cast<unsigned long long>(write_errors_ - errors0), writes_per_s,
        static_cast<unsigned long long>(frames), static_cast<unsigned long long>(expected),
        static_cast<unsigned long long>(lost), static_cast<unsigned long long>(gaps),
        static_cast<unsigned long long>(ooo), static_cast<double>(frames) / total_secs,
        static_cast<double>(st_.bytes - bytes0) / total_secs / 1e6, ms(st_.latency.percentile(0.5)),
        ms(st_.latency.percentile(0.99)), ms(st_.latency.percentile(0.999)), ms(st_.latency.max()),
        drain_secs, saturated ? "true" : "false",
        100 * (s1.client_cpu - s0.client_cpu) / (s1.t - s0.t),
        100 * (s1.server_cpu - s0.server_cpu) / (s1.t - s0.t),
        static_cast<double>(process_rss_bytes(o_.server_pid)) / (1 << 20),
        static_cast<unsigned long long>(st_.failed), writer_json().c_str());
    std::fflush(stdout);
    std::fprintf(stderr,
                 "%-8s %-5s %-3s subs=%-6d keys=%-5d rate=%-6s writes/s=%-8.0f frames/s=%-9.0f "
                 "p50=%.2fms p99=%.2fms p99.9=%.2fms lost=%llu ooo=%llu%s\n",
                 o_.workload.c_str(), name_of(o_.server), name_of(o_.via), o_.subscribers, o_.keys,
                 rate == 0 ? "max" : std::to_string(rate).c_str(), writes_per_s,
                 static_cast<double>(frames) / total_secs, ms(st_.latency.percentile(0.5)),
                 ms(st_.latency.percentile(0.99)), ms(st_.latency.percentile(0.999)),
                 static_cast<unsigned long long>(lost), static_cast<unsigned long long>(ooo),
                 saturated ? " (saturated)" : "");
    co_return saturated;
  }

  awaitable<void> idle() {
    co_await sleep_ms(500);
    auto rss0 = process_rss_bytes(o_.server_pid);
    auto sock0 = tcp_socket_memory_bytes();
    auto inuse0 = tcp_sockets_in_use();
    bool ready = co_await connect_subscribers(512, 300);
    co_await sleep_ms(o_.hold_seconds * 1000);
    auto s0 = now();
    co_await sleep_ms(1000);
    auto s1 = now();
    auto rss1 = process_rss_bytes(o_.server_pid);
    auto sock1 = tcp_socket_memory_bytes();
    auto inuse1 = tcp_sockets_in_use();
    if (!ready)
      failures_ = true;
    double n = static_cast<double>(st_.ready ? st_.ready : 1);
    std::printf(
        "{%s,\"connected\":%llu,\"failed\":%llu,\"connect_s\":%.2f,\"server_rss_mib\":%.1f,"
        "\"server_rss_bytes_per_conn\":%.0f,\"tcp_mem_bytes_per_conn\":%.0f,"
        "\"tcp_sockets_added\":%lld,\"idle_server_cpu_pct\":%.2f}\n",
        common_json().c_str(), static_cast<unsigned long long>(st_.ready),
        static_cast<unsigned long long>(st_.failed), connect_seconds_,
        static_cast<double>(rss1) / (1 << 20),
        (static_cast<double>(rss1) - static_cast<double>(rss0)) / n,
        (static_cast<double>(sock1) - static_cast<double>(sock0)) / n,
        static_cast<long long>(inuse1) - static_cast<long long>(inuse0),
        100 * (s1.server_cpu - s0.server_cpu) / (s1.t - s0.t));
    std::fflush(stdout);
    std::fprintf(
        stderr,
        "idle     %-5s %-3s connected=%llu/%d rss/conn=%.0f B tcp-mem/conn=%.0f B rss=%.1f MiB\n",
        name_of(o_.server), name_of(o_.via), static_cast<unsigned long long>(st_.ready),
        o_.subscribers, (static_cast<double>(rss1) - static_cast<double>(rss0)) / n,
        (static_cast<double>(sock1) - static_cast<double>(sock0)) / n,
        static_cast<double>(rss1) / (1 << 20));
  }

  awaitable<void> storm() {
    auto s0 = now();
    bool ready = co_await connect_subscribers(o_.subscribers, 120);
    auto s1 = now();
    if (!ready)
      failures_ = true;
    // Then every client leaves at once: what the server spends releasing S subscribers of one
    // key (its CPU from the closes until it has been idle for 300 ms, bounded at 60 s).
    co_await sleep_ms(300);
    auto d0 = now();
    auto split0 = process_cpu_split(o_.server_pid);
    for (auto& s : subs_)
      s->stop();
    auto last = d0;
    double quiet_since = d0.t;
    while (last.t - d0.t < 60) {
      co_await sleep_ms(50);
      auto cur = now();
      if (cur.server_cpu - last.server_cpu > 0.002)
        quiet_since = cur.t;
      last = cur;
      if (cur.t - quiet_since >= 0.3)
        break;
    }
    double disconnect_cpu = last.server_cpu - d0.server_cpu;
    auto split1 = process_cpu_split(o_.server_pid);
    double disconnect_s = quiet_since - d0.t;
    auto ms = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e6; };
    std::printf(
        "{%s,\"ready\":%llu,\"failed\":%llu,\"all_ready_s\":%.3f,"
        "\"ready_ms\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f},\"server_cpu_s\":%.2f,"
        "\"disconnect_server_cpu_s\":%.3f,\"disconnect_server_user_s\":%.2f,"
        "\"disconnect_server_system_s\":%.2f,\"disconnect_s\":%.3f}\n",
        common_json().c_str(), static_cast<unsigned long long>(st_.ready),
        static_cast<unsigned long long>(st_.failed), connect_seconds_,
        ms(st_.ready_time.percentile(0.5)), ms(st_.ready_time.percentile(0.99)),
        ms(st_.ready_time.max()), s1.server_cpu - s0.server_cpu, disconnect_cpu,
        split1.user - split0.user, split1.system - split0.system, disconnect_s);
    std::fflush(stdout);
    std::fprintf(stderr,
                 "storm    %-5s %-3s ready=%llu/%d all ready in %.2f s (p50 %.0f ms, p99 %.0f ms); "
                 "all left: server CPU %.3f s (user %.2f, system %.2f) over %.2f s\n",
                 name_of(o_.server), name_of(o_.via), static_cast<unsigned long long>(st_.ready),
                 o_.subscribers, connect_seconds_, ms(st_.ready_time.percentile(0.5)),
                 ms(st_.ready_time.percentile(0.99)), disconnect_cpu, split1.user - split0.user,
                 split1.system - split0.system, disconnect_s);
  }

  void report_not_ready() {
    failures_ = true;
    std::printf(
        "{%s,\"error\":\"not every subscriber got ready\",\"ready\":%llu,\"failed\":%llu}\n",
        common_json().c_str(), static_cast<unsigned long long>(st_.ready),
        static_cast<unsigned long long>(st_.failed));
    std::fprintf(stderr, "%s: only %llu of %d subscribers got ready (%llu failed)\n",
                 o_.workload.c_str(), static_cast<unsigned long long>(st_.ready), o_.subscribers,
                 static_cast<unsigned long long>(st_.failed));
  }

 public:
  bool failures() const { return failures_ || !ok_; }

 private:
  asio::io_context& ioc_;
  options o_;
  tcp::endpoint write_endpoint_;
  target t_;
  run_stats st_;
  std::vector<std::shared_ptr<http_pipe>> pubs_, control_;
  std::vector<std::shared_ptr<subscriber>> subs_;
  std::vector<std::uint64_t> seq_, acked_, subs_per_key_;
  std::vector<std::uint64_t> rr_ = std::vector<std::uint64_t>(1024, 0);
  std::vector<std::vector<batched>> batches_ = std::vector<std::vector<batched>>(1024);
  std::mt19937_64 rng_{42};
  std::uint64_t sent_ = 0, acked_total_ = 0, write_errors_ = 0;
  int seeded_ = 0, seed_done_ = 0;
  std::uint64_t owed_ = 0;  ///< frames the writes sent so far will cause (closed loop)
  int next_pub_ = 0;
  bool ok_ = true, failures_ = false;
  bool writes_file_done_ = false;
  std::uint64_t rss_ready_ = 0;  ///< the server's RSS once every subscriber was ready
  double connect_seconds_ = 0;
};

}  // namespace
}  // namespace weir::bench

int main(int argc, char** argv) {
  using namespace weir::bench;
  auto o = parse(argc, argv);
  if (o.publishers > 1024)
    usage("at most 1024 publishers");
  asio::io_context ioc{1};
  bench_run run{ioc, o};
  asio::co_spawn(ioc, run.run(), asio::detached);
  ioc.run();
  return run.failures() ? 1 : 0;
}

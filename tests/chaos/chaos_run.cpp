// One fault-injection run: nemesis, quiet points, checker, report (see chaos_run.hpp).
#include "chaos_run.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include <boost/json.hpp>

#include "chaos_cluster.hpp"
#include "chaos_streams.hpp"
#include "chaos_workload.hpp"
#include "test_support.hpp"

namespace weir::chaos {

namespace json = boost::json;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

struct scheduled {
  clock_type::time_point at;
  std::function<void()> action;
};

/// What member `i` answers for a fresh one-shot query of `object` (id → tok); false when it
/// did not answer 200.
bool fresh_query(chaos_cluster& c, int i, const std::string& object,
                 std::map<std::string, std::string>& out) {
  try {
    auto r = object == docs_object
                 ? test::http(c.http_port(i), "POST", "/v1/spaces/t/objects/query", "{}")
                 : test::http(c.http_port(i), "POST", "/v1/spaces/t/query",
                              R"({"objectId":")" + object + R"(","dataset":"items"})");
    if (r.status != 200) {
      return false;
    }
    out.clear();
    auto v = json::parse(r.body);
    for (const auto& rec : v.at("records").as_array()) {
      const auto& o = rec.as_object();
      const auto* t = o.if_contains("tok");
      out[std::string{o.at("id").as_string()}] =
          t && t->is_string() ? std::string{t->as_string()} : std::string{};
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::string chaos_report::text() const {
  std::ostringstream o;
  o << "seed " << seed << ", " << seconds << " s, " << quiet_points << " quiet points\n";
  o << "faults:";
  int total = 0;
  for (auto& [k, n] : faults) {
    o << " " << k << "=" << n;
    total += n;
  }
  o << " (" << total << ")\n";
  o << "writes acknowledged: " << acked << " (HTTP and gRPC records; gRPC " << grpc_acked
    << ", SQL " << sql_acked << "), $inc acknowledged " << incs_acked << ", refused " << refused
    << ", unknown " << unknown << "\n";
  o << "streams: " << streams_opened << " opened, " << streams_checked
    << " checked against fresh reads; endings:";
  for (auto& [k, n] : stream_endings) {
    o << " " << k << "=" << n;
  }
  o << "\nlongest unavailability after a fault (ms):";
  for (auto& [k, ms] : longest_unavailability_ms) {
    o << " " << k << "=" << ms;
  }
  o << "\nlongest recovery to /readyz 200 on every member: " << longest_recovery_ms << " ms\n";
  o << "divergences: " << divergences.size() << "\n";
  for (auto& d : divergences) {
    o << "  - " << d << "\n";
  }
  if (!divergences.empty()) {
    o << "fault log (replay with --seed " << seed << "):\n";
    for (auto& l : fault_log) {
      o << "  " << l << "\n";
    }
  }
  return o.str();
}

chaos_report run_chaos(const chaos_options& opts) {
  chaos_report rep;
  rep.seed = opts.seed;
  auto t0 = clock_type::now();
  auto stamp = [&] {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%8.2f s ",
                  std::chrono::duration<double>(clock_type::now() - t0).count());
    return std::string{buf};
  };
  auto note = [&](const std::string& line) {
    rep.fault_log.push_back(stamp() + line);
    if (opts.log) {
      *opts.log << rep.fault_log.back() << std::endl;
    }
  };
  chaos_cluster cluster{opts.members};
  if (!cluster.error().empty()) {
    rep.divergences.push_back("the cluster did not start: " + cluster.error());
    return rep;
  }
  if (!cluster.wait_ready(60s)) {
    rep.divergences.push_back("the cluster did not become ready");
    return rep;
  }
  chaos_workload work{cluster, opts.seed, opts.http_writers};
  work.start();
  std::vector<std::unique_ptr<chaos_stream>> streams;
  auto objects = workload_objects();
  objects.push_back(sql_object);
  std::uint64_t sseed = opts.seed * 977;
  using k = chaos_stream::kind;
  for (const auto& o : objects) {
    for (auto [kind, mode] :
         {std::pair{k::sse_hub, "full"}, std::pair{k::sse_hub, "delta"},
          std::pair{k::ws_hub, "delta"}, std::pair{k::ws_hub, ""}, std::pair{k::ws_hub, "patch"},
          std::pair{k::direct_sse, ""}, std::pair{k::windowed, ""}}) {
      streams.push_back(std::make_unique<chaos_stream>(cluster, kind, mode, o, ++sseed));
    }
  }
  streams.push_back(std::make_unique<chaos_stream>(cluster, k::windowed, "", space_wide, ++sseed));
  for (int d = 0; d < doc_objects; ++d) {
    streams.push_back(std::make_unique<chaos_stream>(cluster, k::ag_ui_state, "",
                                                     "d" + std::to_string(d), ++sseed));
  }

  std::mt19937_64 rng{opts.seed};
  auto uniform_ms = [&](int lo, int hi) {
    return std::chrono::milliseconds(lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo)));
  };
  std::vector<scheduled> pending;
  std::vector<std::pair<clock_type::time_point, std::string>> faults_at;
  std::vector<std::pair<clock_type::time_point, clock_type::time_point>> quiet;
  std::vector<std::pair<clock_type::time_point, std::unique_ptr<test::ws_client>>> slow;
  std::vector<bool> busy(static_cast<std::size_t>(cluster.size()), false);
  const std::vector<std::string> kinds{"kill",         "pause",        "term",
                                       "pg_fast",      "pg_immediate", "pg_terminate",
                                       "capture_kill", "slow_client"};
  auto deadline = t0 + opts.duration;

  auto serving_count = [&] {
    int n = 0;
    for (int i = 0; i < cluster.size(); ++i) {
      n += cluster.serving(i) && !busy[i] ? 1 : 0;
    }
    return n;
  };
  auto pick_member = [&]() -> int {
    std::vector<int> ok;
    for (int i = 0; i < cluster.size(); ++i) {
      if (cluster.serving(i) && !busy[i]) {
        ok.push_back(i);
      }
    }
    return ok.empty() ? -1 : ok[rng() % ok.size()];
  };
  // Starts member `i` again after `after` (a kill or drain fault's recovery).
  auto restart_later = [&](int i, std::chrono::milliseconds after) {
    pending.push_back({clock_type::now() + after, [&, i] {
                         bool ok = cluster.start(i);
                         note("start " + cluster.id(i) + (ok ? "" : " FAILED"));
                         busy[i] = false;
                       }});
  };
  auto inject = [&]() {
    // Every kind once first (in a seeded order), so that even a short run has them all.
    std::vector<std::string> fresh;
    for (const auto& k : kinds) {
      if (!rep.faults.count(k)) {
        fresh.push_back(k);
      }
    }
    const auto kind = fresh.empty() ? kinds[rng() % kinds.size()] : fresh[rng() % fresh.size()];
    bool member_fault = kind == "kill" || kind == "pause" || kind == "term";
    if (member_fault && serving_count() < 2) {
      return;  // keep one member serving: the faults are to be survived, not to end service
    }
    if (member_fault) {
      int i = pick_member();
      if (i < 0) {
        return;
      }
      busy[i] = true;
      if (kind == "kill") {
        cluster.kill(i);
        auto after = uniform_ms(500, 3000);
        note("kill " + cluster.id(i) + " (restart in " + std::to_string(after.count()) + " ms)");
        restart_later(i, after);
      } else if (kind == "pause") {
        cluster.pause(i);
        auto after = chaos_cluster::lease + uniform_ms(500, 2000);
        note("pause " + cluster.id(i) + " for " + std::to_string(after.count()) + " ms");
        pending.push_back({clock_type::now() + after, [&, i] {
                             cluster.resume(i);
                             note("resume " + cluster.id(i));
                             busy[i] = false;
                           }});
      } else {
        note("term " + cluster.id(i) + " (drain)");
        cluster.terminate(i);
        auto after = uniform_ms(500, 2000);
        note("drained " + cluster.id(i) + " (restart in " + std::to_string(after.count()) + " ms)");
        restart_later(i, after);
      }
    } else if (kind == "pg_fast" || kind == "pg_immediate") {
      note(kind + ": restarting PostgreSQL");
      bool ok = cluster.pg_restart(kind == "pg_immediate");
      note(std::string{"PostgreSQL "} + (ok ? "back" : "did NOT come back"));
    } else if (kind == "pg_terminate") {
      note("pg_terminate_backend: " + std::to_string(cluster.pg_terminate_sessions()) +
           " of Weir's sessions");
    } else if (kind == "capture_kill") {
      note(std::string{"change capture's session ended: "} +
           (cluster.pg_terminate_capture() ? "yes" : "none was reading"));
    } else {
      int i = pick_member();
      if (i < 0) {
        return;
      }
      try {
        auto c = std::make_unique<test::ws_client>(cluster.http_port(i));
        c->subscribe("slow", "T.Items.All", {{"obj", "o0"}}, 1, "full");
        auto until = clock_type::now() + uniform_ms(5000, 15000);
        slow.emplace_back(until, std::move(c));
        note("a client on " + cluster.id(i) + " subscribes and stops reading");
      } catch (const std::exception& e) {
        note(std::string{"slow client could not connect: "} + e.what());
      }
    }
    faults_at.emplace_back(clock_type::now(), kind);
    ++rep.faults[kind];
  };
  auto run_pending = [&](bool all) {
    auto now = clock_type::now();
    for (std::size_t k = 0; k < pending.size();) {
      if (all || pending[k].at <= now) {
        auto a = std::move(pending[k].action);
        pending.erase(pending.begin() + static_cast<long>(k));
        a();
      } else {
        ++k;
      }
    }
    std::erase_if(slow, [&](auto& s) { return all || s.first <= now; });
  };

  while (clock_type::now() < deadline) {
    auto phase_end = std::min(deadline, clock_type::now() + opts.phase);
    auto next_fault = clock_type::now() + uniform_ms(1000, 3000);
    while (clock_type::now() < phase_end) {
      if (clock_type::now() >= next_fault) {
        inject();
        next_fault = clock_type::now() + uniform_ms(1500, 4000);
      }
      run_pending(false);
      std::this_thread::sleep_for(20ms);
    }
    // Quiet point: every fault undone, every member ready, writes drained; then the checks.
    run_pending(true);
    cluster.heal();
    std::fill(busy.begin(), busy.end(), false);
    auto q0 = clock_type::now();
    auto ready = cluster.wait_ready(60s);
    if (!ready) {
      rep.divergences.push_back(
          "/readyz did not answer 200 on every member within 60 s of "
          "the last fault (quiet point " +
          std::to_string(rep.quiet_points + 1) + ")");
    } else {
      rep.longest_recovery_ms = std::max(rep.longest_recovery_ms, *ready);
    }
    work.pause();
    ++rep.quiet_points;
    note("quiet point " + std::to_string(rep.quiet_points) + ": ready after " +
         (ready ? std::to_string(*ready) + " ms" : std::string{"NEVER"}));
    for (auto& e : cluster.unexpected_exits()) {
      rep.divergences.push_back(e);
    }
    // Change capture delivers SQL rows within moments; give it a second before reading.
    std::this_thread::sleep_for(1s);
    work.check(rep.divergences);
    // Every member serves what PostgreSQL holds.
    auto read_back = objects;
    read_back.push_back(docs_object);
    for (const auto& o : read_back) {
      auto want = work.stored(o);
      for (int i = 0; i < cluster.size(); ++i) {
        std::map<std::string, std::string> got;
        auto until = clock_type::now() + 15s;
        bool ok = false;
        while (!(ok = fresh_query(cluster, i, o, got) && got == want) &&
               clock_type::now() < until) {
          std::this_thread::sleep_for(100ms);
        }
        if (!ok) {
          rep.divergences.push_back("member " + cluster.id(i) + " answers object " + o +
                                    " differently from PostgreSQL (" + std::to_string(got.size()) +
                                    " records vs " + std::to_string(want.size()) + ")");
        }
      }
    }
    auto expected = [&](const std::string& o) {
      if (o.rfind("state:", 0) == 0) {
        auto id = o.substr(6);
        auto docs = work.stored(docs_object);
        std::map<std::string, std::string> one;
        if (auto it = docs.find(id); it != docs.end()) {
          one[id] = it->second;
        }
        return one;
      }
      if (o != space_wide) {
        return work.stored(o);
      }
      std::map<std::string, std::string> all;  // the space's items, keyed "object/id"
      auto every = objects;
      every.push_back(counter_object);
      for (const auto& each : every) {
        for (auto& [id, tok] : work.stored(each)) {
          all[each + "/" + id] = tok;
        }
      }
      return all;
    };
    rep.streams_checked += check_streams(streams, expected, 20s, rep.divergences);
    quiet.emplace_back(q0, clock_type::now());
    work.resume();
  }
  work.stop();
  auto totals = work.counts();
  rep.acked = totals.acked;
  rep.refused = totals.refused;
  rep.unknown = totals.unknown;
  rep.sql_acked = totals.sql_acked;
  rep.grpc_acked = totals.grpc_acked;
  rep.incs_acked = totals.incs_acked;
  for (auto& s : streams) {
    rep.streams_opened += s->opened();
    for (auto& [k, n] : s->endings()) {
      rep.stream_endings[k] += n;
    }
  }
  streams.clear();
  // Unavailability: the longest gap between acknowledged writes that begins within 10 s after a
  // fault, outside quiet points.
  auto acks = work.ack_times();
  std::sort(acks.begin(), acks.end());
  for (std::size_t k = 1; k < acks.size(); ++k) {
    auto a = acks[k - 1], b = acks[k];
    bool in_quiet = std::any_of(quiet.begin(), quiet.end(),
                                [&](auto& q) { return a < q.second && b > q.first; });
    if (in_quiet) {
      continue;
    }
    for (auto& [t, kind] : faults_at) {
      if (t <= b && a - t < 10s) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(b - std::max(a, t)).count();
        auto& best = rep.longest_unavailability_ms[kind];
        best = std::max(best, static_cast<std::int64_t>(ms));
      }
    }
  }
  rep.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  return rep;
}

}  // namespace weir::chaos

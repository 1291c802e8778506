// weir_load's command line (options.hpp).
#include "options.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace weir::bench {

void usage(const std::string& why) {
  std::fprintf(stderr, "weir_load: %s (see bench/README.md)\n", why.c_str());
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--passive") {
      o.passive = true;
      continue;
    }
    if (i + 1 >= argc)
      usage("missing value for " + a);
    std::string v = argv[++i];
    auto num = [&] { return std::atoi(v.c_str()); };
    if (a == "--server") {
      if (v == "weir")
        o.server = server_kind::weir;
      else if (v == "nchan")
        o.server = server_kind::nchan;
      else if (v == "ceiling")
        o.server = server_kind::ceiling;
      else
        usage("--server is weir, nchan or ceiling");
    } else if (a == "--transport") {
      if (v == "ws")
        o.via = transport::ws;
      else if (v == "sse")
        o.via = transport::sse;
      else if (v == "windowed")
        o.via = transport::windowed;
      else
        usage("--transport is ws, sse or windowed (Weir only)");
    } else if (a == "--workload") {
      if (v != "fanout" && v != "manykeys" && v != "idle" && v != "storm")
        usage("--workload is fanout, manykeys, idle or storm");
      o.workload = v;
    } else if (a == "--host")
      o.host = v;
    else if (a == "--port")
      o.port = num();
    else if (a == "--write-port")
      o.write_port = num();
    else if (a == "--subscribers")
      o.subscribers = num();
    else if (a == "--keys")
      o.keys = num();
    else if (a == "--streams")
      o.streams = num();
    else if (a == "--publishers")
      o.publishers = num();
    else if (a == "--window")
      o.window = num();
    else if (a == "--batch")
      o.batch = num();
    else if (a == "--step-seconds")
      o.step_seconds = std::atof(v.c_str());
    else if (a == "--payload")
      o.payload = static_cast<std::size_t>(num());
    else if (a == "--sources")
      o.sources = num();
    else if (a == "--server-pid")
      o.server_pid = num();
    else if (a == "--hold-seconds")
      o.hold_seconds = std::atof(v.c_str());
    else if (a == "--drain-seconds")
      o.drain_seconds = std::atof(v.c_str());
    else if (a == "--label")
      o.label = v;
    else if (a == "--writes-file")
      o.writes_file = v;
    else if (a == "--wait-ready")
      o.wait_ready = num();
    else if (a == "--rates") {
      o.rates.clear();
      std::stringstream ss{v};
      std::string item;
      while (std::getline(ss, item, ','))
        o.rates.push_back(std::atoi(item.c_str()));
    } else
      usage("unknown option " + a);
  }
  if (o.streams < 0)
    o.streams = o.workload == "fanout" ? 8 : 1;
  if (o.batch < 1 || o.batch > 1000)
    usage("--batch is 1..1000 (the node's bound on writes per batch)");
  if (o.batch > 1 && (o.workload != "manykeys" || o.server != server_kind::weir))
    usage("--batch is for Weir's manykeys workload");
  if (o.subscribers < 1 || o.keys < 1 || o.streams < 1 || o.publishers < 1 || o.sources < 1)
    usage("counts must be positive");
  if (!o.writes_file.empty() && (o.workload != "fanout" || o.keys != 1))
    usage("--writes-file is for the fanout workload with one key");
  if ((o.passive || o.wait_ready > 0) && o.writes_file.empty())
    usage("--passive and --wait-ready need --writes-file");
  if (!o.writes_file.empty() && o.label.empty())
    o.label = "p" + std::to_string(::getpid());  // names the ready marker
  return o;
}

}  // namespace weir::bench

// weir_load's options: what the command line sets (see main.cpp's header for the flags) and
// their parsing, which refuses a combination the workloads cannot run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "load.hpp"

namespace weir::bench {

struct options {
  server_kind server = server_kind::weir;
  transport via = transport::ws;
  std::string workload = "fanout";
  std::string host = "127.0.0.1";
  int port = 8080;
  int write_port = 0;  // 0: the same as port
  int subscribers = 1000;
  int keys = 1;
  int streams = -1;  // per key; default: 8 for fanout, 1 otherwise
  int publishers = 8;
  int window = 32;  // writes per key owed to subscribers in the as-fast-as-possible step
  int batch = 1;    // > 1: writes go out as cross-unit batches of up to this many (manykeys)
  std::vector<int> rates{0};
  double step_seconds = 3;
  std::size_t payload = 150;
  int sources = 4;
  int server_pid = 0;
  double hold_seconds = 2;
  double drain_seconds = 10;
  std::string label;
  bool passive = false;     // subscribe only; the writes come from another process
  std::string writes_file;  // see the top of this file
  int wait_ready = 0;       // the writer: other processes' ready markers to wait for
};

/// Prints `why` (a bad option, or options that do not fit together) and exits with status 2.
[[noreturn]] void usage(const std::string& why);

/// The options of `argv`; usage() on a bad one.
options parse(int argc, char** argv);

}  // namespace weir::bench

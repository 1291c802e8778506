// weir::app watch — `weir watch`: a small Arc hub client that subscribes to one named query and
// prints every frame it receives as one JSON line (pipe it through jq).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace weir::app {

struct watch_options {
  std::string url = "ws://127.0.0.1:8080/.cratis/queries/ws";
  std::string query;
  std::vector<std::pair<std::string, std::string>> arguments;
  std::string mode;  ///< "", full, delta
  std::string query_id = "watch";
  long frames = -1;  ///< stop after this many frames (-1 = run until closed)
};

/// Runs until the server closes, `frames` frames were printed, or an error; returns an exit code.
int run_watch(const watch_options& opts);

}  // namespace weir::app

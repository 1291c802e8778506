// weir::app windowed client — `weir query-subscribe` and `weir query`: a windowed-subscribe
// client for the shell. The stream prints one JSON object per frame ({"event":…,"data":…}), so
// it pipes through jq; the snapshot query prints the answer as is.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace weir::app {

struct windowed_options {
  std::string url = "http://127.0.0.1:8080";
  std::string space;
  std::string object;   ///< with --dataset: one object's dataset
  std::string dataset;  ///< without an object: the dataset across the space's objects
  bool properties = false;  ///< the objects collection (one row per object)
  std::string filter;       ///< JSON text
  std::vector<std::string> sort;
  std::optional<long long> limit, offset, mailbox;
  bool total = false;
  std::string projection;  ///< JSON text
  long frames = -1;        ///< stop after this many frames (-1: until closed)
};

/// Builds the request body and the path; prints a message and returns false when the options
/// do not make one.
bool windowed_request_of(const windowed_options& o, bool subscribe, std::string& path,
                         std::string& body);

/// `weir query-subscribe`: runs until `closed`, the end of the stream, `frames` frames or an
/// error; returns an exit code (0 for a stream the server closed, 1 for an error answer).
int run_query_subscribe(const windowed_options& o);

/// `weir query`: prints the snapshot twin's answer; 0 on 200.
int run_query(const windowed_options& o);

}  // namespace weir::app

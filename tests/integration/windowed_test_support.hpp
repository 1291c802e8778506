// Windowed-subscribe test support: a client of one windowed stream (POST …/query/subscribe)
// that reads its frames (windowed-subscribe §4) with deadlines and rebuilds the window the way
// the seed's client does (replace on snapshot; set added/updated docs, drop removed ids), plus
// the snapshot twin (…/query) to compare it with.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include "sse_test_support.hpp"

namespace weir::test {

/// `/v1/spaces/<space>/query` (scope "object"), `…/objects/query`, `…/datasets/query`.
std::string windowed_path(const std::string& space, const std::string& scope, bool subscribe);

/// POST a windowed snapshot query; the response as is.
http_response windowed_query(std::uint16_t port, const std::string& space, const std::string& scope,
                             const std::string& body);

struct windowed_frame {
  std::string event;  ///< "ready", "snapshot", "changes", "closed"; "" for a comment
  boost::json::value data;
  std::string raw;  ///< the event's text as sent
};

class windowed_stream {
 public:
  windowed_stream(std::uint16_t port, const std::string& space, const std::string& scope,
                  const std::string& body, const header_list& headers = {});

  unsigned status() const { return client_->status(); }
  /// The JSON body of a refused subscription.
  boost::json::value error_body() const;
  const sse_client& client() const { return *client_; }

  /// The next frame; comments only when `comments`. nullopt on timeout or the end.
  std::optional<windowed_frame> next(std::chrono::milliseconds timeout = 5s, bool comments = false);
  /// Reads `ready` and `snapshot` (they must come first, in that order) and returns the
  /// snapshot's data.
  boost::json::object open(std::chrono::milliseconds timeout = 5s);
  /// Reads frames until the window holds exactly the documents of `expect` (id → doc), in any
  /// order; false on timeout. Every frame read is applied.
  bool wait_for(const std::map<std::string, boost::json::value>& expect,
                std::chrono::milliseconds timeout = 5s);
  /// Applies one frame to the window (snapshot replaces it, changes edit it).
  void apply(const windowed_frame& f);

  /// The window as the client rebuilt it: id → doc.
  const std::map<std::string, boost::json::value>& window() const { return window_; }
  /// The `closed` reason once one arrived.
  const std::optional<std::string>& closed_reason() const { return closed_; }
  /// Every event of every `changes` frame read so far.
  const std::vector<boost::json::object>& events() const { return events_; }

  void close() { client_->close(); }

 private:
  std::unique_ptr<sse_client> client_;
  std::map<std::string, boost::json::value> window_;
  std::optional<std::string> closed_;
  std::vector<boost::json::object> events_;
};

/// id → doc of a snapshot's `records` (or a `…/query` answer's).
std::map<std::string, boost::json::value> by_record_id(const boost::json::value& records);

}  // namespace weir::test

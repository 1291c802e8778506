// weir::app::http_client — a small blocking HTTP/1.1 client for Weir's own tools: the `weir`
// CLI's one-shot queries, the benchmarks' seeding and probes, and the integration tests. One
// implementation of what each of them had written with Beast by hand. Keep-alive on one
// connection, a deadline on every exchange. Beast stays in the .cpp: this header is what the
// tools include.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weir::app {

struct http_reply {
  unsigned status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  ///< lower-case names
};

using http_headers = std::vector<std::pair<std::string, std::string>>;

/// One connection to `host`:`port`, kept alive across requests. Failures to connect, to write
/// or to read within the deadline throw (boost::system::system_error, a std::runtime_error):
/// for a tool or a test they end the run, and the message names the cause.
class http_client {
 public:
  http_client(const std::string& host, const std::string& port,
              std::chrono::milliseconds timeout = std::chrono::seconds{30});
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  /// Sends one request and reads its answer. A body is sent as `application/json` unless
  /// `headers` names a Content-Type. A HEAD answer has no body. Answers up to 64 MiB.
  http_reply request(std::string_view method, std::string_view target, std::string_view body = {},
                     const http_headers& headers = {});

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// One request on a fresh connection, closed after the answer.
http_reply http_request(const std::string& host, const std::string& port, std::string_view method,
                        std::string_view target, std::string_view body = {},
                        const http_headers& headers = {},
                        std::chrono::milliseconds timeout = std::chrono::seconds{30});

}  // namespace weir::app

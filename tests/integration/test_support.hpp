// Integration test support: a real node on loopback ports in a temporary data directory, and
// small real clients (Beast WebSocket and HTTP) with deadlines, never sleeps.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/json/value.hpp>

#include "apps/node.hpp"

namespace weir::test {

using namespace std::chrono_literals;

/// A fresh directory under /tmp, removed at destruction.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The YAML of the queries most tests use (space "t"):
///   T.Items.All       (object {obj}, dataset items, sort ["n"], args obj)
///   T.Items.ByColor   (object {obj}, dataset items, filter {color:"{color}"}, sort ["n"])
///   T.Objects.One     (object {obj}, no dataset → single document)
///   T.Objects.All     (no object → the space's objects collection, sort ["name"])
std::string default_queries_yaml();
/// Only T.Items.All: no named query filters `items`, so the node keeps no index for one
/// (docs/configuration.md, Indexes a filter gets).
std::string items_all_queries_yaml();

/// Starts a node on free loopback ports. `extra_yaml` is appended to the config (e.g. a
/// `query:` section with limits); `queries_yaml` replaces the default queries when given.
std::unique_ptr<app::node> start_node(const std::string& data_dir,
                                      const std::string& extra_yaml = "",
                                      std::optional<std::string> queries_yaml = std::nullopt);

struct http_response {
  unsigned status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  boost::json::value json() const;             // parses body (throws on bad JSON: tests only)
};

/// One HTTP/1.1 request on a fresh connection.
http_response http(std::uint16_t port, const std::string& method, const std::string& target,
                   const std::string& body = "",
                   const std::map<std::string, std::string>& headers = {});

/// A WebSocket client on the Arc hub.
class ws_client {
 public:
  explicit ws_client(std::uint16_t port, const std::string& target = "/.cratis/queries/ws",
                     const std::map<std::string, std::string>& headers = {});
  ~ws_client();

  void send(const std::string& text);
  void send_binary(const std::string& data);

  /// Next text frame, or nullopt when none arrives before the deadline or the socket closed.
  std::optional<std::string> read(std::chrono::milliseconds timeout = 5s);
  /// Like read(), but a timeout leaves the read pending and the socket open: the next poll()
  /// goes on with it (is_open() tells a timeout from the end). Do not mix with read().
  std::optional<std::string> poll(std::chrono::milliseconds timeout);
  /// Next frame parsed as JSON (fails the test on timeout).
  boost::json::object read_json(std::chrono::milliseconds timeout = 5s);
  /// Reads frames until one satisfies `pred`; returns it (fails on timeout).
  boost::json::object read_until(const std::function<bool(const boost::json::object&)>& pred,
                                 std::chrono::milliseconds timeout = 5s);
  /// True when no frame arrives within `quiet`.
  bool silent_for(std::chrono::milliseconds quiet);

  /// Reads the Connected frame (must be first) and returns its connection id.
  std::string expect_connected();

  /// Sends {"type":"Subscribe",...}; `revision` < 0 omits it (legacy).
  void subscribe(const std::string& query_id, const std::string& query_name,
                 const boost::json::object& arguments = {}, long long revision = 1,
                 const std::string& transfer_mode = "", const boost::json::object& extra = {});
  void unsubscribe(const std::string& query_id, long long revision = 1);

  /// After the server closed: its close code and reason (nullopt while open).
  std::optional<std::pair<int, std::string>> close_status() const;
  /// The status that answered the upgrade: 101, or the refusal's (the client is then not open
  /// and reads nothing).
  unsigned upgrade_status() const;
  /// A header of the upgrade's answer ("" when absent).
  std::string upgrade_header(const std::string& name) const;
  bool is_open() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// A fixture with one node on free loopback ports, the default queries, for the test's life.
struct single_node : ::testing::Test {
  void SetUp() override {
    node = start_node(dir.path());
    ASSERT_TRUE(node);
    port = node->http_port();
  }
  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

/// A property document without its server-maintained `modifiedAt` (which must be an integer):
/// what tests compare against the fields they wrote.
boost::json::value without_modified_at(boost::json::value doc);

/// PUT a record and return its versionId (fails the test on error).
std::string put_record(std::uint16_t port, const std::string& space, const std::string& object,
                       const std::string& dataset, const std::string& id, const std::string& json);

}  // namespace weir::test

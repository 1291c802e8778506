// Test support for single-document patches: a random writer of one object's property document
// (PUTs that move, add, drop and change id-keyed items, RFC 6902 PATCHes, deletes), and a check
// that a `patch`-mode hub subscriber who applies every patch holds exactly what a `full`
// subscriber and a fresh query see, after every write.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "test_support.hpp"

namespace weir::test {

class random_document_writer {
 public:
  random_document_writer(std::uint16_t port, std::string object, std::uint32_t seed)
      : port_(port), object_(std::move(object)), rng_(seed) {}

  /// One random write through `port`; returns its versionId ("" when it failed the test).
  std::string step();
  /// Whether the document exists after the last write.
  bool exists() const { return exists_; }
  const std::string& object() const { return object_; }
  std::uint16_t port() const { return port_; }

 private:
  std::string put();
  std::string json_patch();
  std::string remove();
  int pick(int n) { return std::uniform_int_distribution<int>{0, n - 1}(rng_); }

  std::uint16_t port_;
  std::string object_;
  std::mt19937 rng_;
  boost::json::object doc_;  // what the last write left (without the server's stamps)
  bool exists_ = false;
  int next_item_ = 0;
};

/// Subscribes `qp` (patch) and `qf` (full) to T.Objects.One for the writer's object on `ws`,
/// runs `writes` random writes and, after each, waits until both show it and checks that the
/// patched copy equals the full one; at the end, that it equals a fresh HTTP snapshot on
/// `read_port`. Also checks that patches were sent, and smaller than the documents.
void expect_patch_follower_converges(ws_client& ws, std::uint16_t read_port,
                                     random_document_writer& writer, int writes);

}  // namespace weir::test

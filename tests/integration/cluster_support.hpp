// Cluster test support: three real `weir serve` processes on loopback ports forming one
// cluster (members a, b, c), with their health as each reports it and a way to pick objects by
// owner.
#pragma once

#include <array>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/rendezvous.hpp"
#include "process_support.hpp"
#include "test_support.hpp"

namespace weir::test {

class cluster3 {
 public:
  static constexpr int n = 3;

  /// The members' shared peer token (cluster.token), unless a test configures its own peer
  /// authentication.
  static constexpr const char* peer_token = "test-peer-token-0123456789abcdef0123456789";

  /// `cluster_yaml`: extra keys of the `cluster` section, each line indented by two spaces.
  /// `with_token`: members authenticate with peer_token (else `cluster_yaml` must say how).
  /// `top_yaml`: other top-level sections for every member (e.g. `store:`).
  explicit cluster3(const std::string& cluster_yaml = "", bool with_token = true,
                    const std::string& top_yaml = "") {
    for (int i = 0; i < n; ++i) {
      http_.push_back(free_port());
      grpc_.push_back(free_port());
      peer_.push_back(free_port());
    }
    std::string members = "  members:\n";
    for (int i = 0; i < n; ++i) {
      members += "    - { id: " + ids_[i] + ", peer: \"127.0.0.1:" + std::to_string(peer_[i]) +
                 "\", http: \"127.0.0.1:" + std::to_string(http_[i]) + "\" }\n";
    }
    for (int i = 0; i < n; ++i) {
      std::ofstream f{config(i)};
      f << "node:\n  http: \"127.0.0.1:" << http_[i] << "\"\n  grpc: \"127.0.0.1:" << grpc_[i]
        << "\"\n  peer: \"127.0.0.1:" << peer_[i] << "\"\ncluster:\n  nodeId: " << ids_[i] << "\n"
        << members << "  heartbeatIntervalMs: 100\n  suspectAfterMs: 400\n  downAfterMs: 1000\n"
        << (with_token ? std::string{"  token: \""} + peer_token + "\"\n" : std::string{})
        << cluster_yaml << top_yaml << default_queries_yaml();
    }
    procs_.resize(n);
    for (int i = 0; i < n; ++i) {
      start(i);
    }
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE(wait_state(i, i, "up", 15s)) << "node " << ids_[i] << " not up";
    }
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        EXPECT_TRUE(wait_state(i, j, "up", 10s)) << ids_[i] << " does not see " << ids_[j];
      }
    }
  }

  ~cluster3() {
    if (::testing::Test::HasFailure() || std::uncaught_exceptions() > 0) {
      for (int i = 0; i < n; ++i) {
        if (procs_[i]) {
          std::printf("--- node %s stderr:\n%s\n", ids_[i].c_str(), procs_[i]->log().c_str());
        }
      }
    }
  }

  std::string config(int i) const { return dir_.path() + "/" + ids_[i] + ".yaml"; }

  void start(int i) {
    procs_[i] = std::make_unique<weir_process>(
        std::vector<std::string>{"--config", config(i), "--data-dir", dir_.path() + "/" + ids_[i]});
  }
  void kill(int i) { procs_[i]->kill(); }
  weir_process& proc(int i) { return *procs_[i]; }

  std::uint16_t port(int i) const { return http_[i]; }
  std::uint16_t grpc_port(int i) const { return grpc_[i]; }
  std::uint16_t peer_port(int i) const { return peer_[i]; }
  const std::string& id(int i) const { return ids_[i]; }

  /// An object id in space "t" whose unit node `i` owns.
  std::string object_owned_by(int i, const std::string& prefix) const {
    std::vector<std::string> ids{ids_.begin(), ids_.end()};
    for (int k = 0;; ++k) {
      auto obj = prefix + std::to_string(k);
      if (core::rendezvous_owner(ids, core::unit_name("t", obj)) == static_cast<std::size_t>(i)) {
        return obj;
      }
    }
  }

  /// The member that owns unit (`space`, `object`); `object` "" is the space's property
  /// documents.
  int owner_of(const std::string& space, const std::string& object) const {
    std::vector<std::string> ids{ids_.begin(), ids_.end()};
    return static_cast<int>(core::rendezvous_owner(ids, core::unit_name(space, object)));
  }

  /// /cluster/health as node `i` answers it (null when it does not answer).
  boost::json::value health(int i) const {
    auto r = http(http_[i], "GET", "/cluster/health");
    if (r.status != 200 && r.status != 503) {
      return nullptr;
    }
    return r.json();
  }

  /// Member `j` as node `i` reports it.
  boost::json::object member(int i, int j) const {
    auto h = health(i);
    if (!h.is_object()) {
      return {};
    }
    for (auto& m : h.as_object()["members"].as_array()) {
      if (m.as_object().at("id").as_string() == ids_[j]) {
        return m.as_object();
      }
    }
    return {};
  }

  bool wait_state(int i, int j, const std::string& state, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto m = member(i, j);
      if (auto* s = m.if_contains("state"); s && s->is_string() && s->as_string() == state) {
        return true;
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  /// Waits until `pred` holds for member `j` as node `i` reports it.
  bool wait_member(int i, int j, const std::function<bool(const boost::json::object&)>& pred,
                   std::chrono::milliseconds timeout = 5s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred(member(i, j))) {
        return true;
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

 private:
  temp_dir dir_;
  std::array<std::string, n> ids_{"a", "b", "c"};
  std::vector<std::uint16_t> http_, grpc_, peer_;
  std::vector<std::unique_ptr<weir_process>> procs_;
};

}  // namespace weir::test

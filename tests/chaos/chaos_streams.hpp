// weir::chaos::chaos_streams — the harness's subscribers: per object, an Arc SSE hub
// subscription (full transfer mode), an Arc WebSocket hub subscription (delta: the client applies
// each change set to its copy), an Arc direct SSE stream and a windowed stream, each on a member
// picked at random,
// keeping the view a client would (id → tok). A stream that ends is opened again on another
// member, as a client would; how each ended is counted (a windowed `closed` reason, the hub's
// Error frame, or the connection dropping). At a quiet point the checker asks every stream to
// show what a fresh query shows within a bound.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/object.hpp>

#include "chaos_cluster.hpp"
#include "sse_test_support.hpp"

namespace weir::chaos {

class chaos_stream {
 public:
  enum class kind { sse_hub, ws_hub_delta, direct_sse, windowed };
  chaos_stream(chaos_cluster& cluster, kind k, std::string object, std::uint64_t seed);
  ~chaos_stream();

  std::string name() const;
  /// The view now, and whether a subscription is open and has its baseline.
  std::map<std::string, std::string> view(bool* live) const;
  /// How its subscriptions ended so far: reason → count ("closed:<reason>", "error", "eof").
  std::map<std::string, int> endings() const;
  int opened() const { return opened_.load(); }

 private:
  void run();
  void run_hub(int member);
  void run_ws_hub(int member);
  void run_direct(int member);
  /// Reads an SSE stream until it ends: `data_of` gives a frame's full result (an array to
  /// take as the view), null for an Error (the subscription ended), or anything else to skip.
  using data_of_frame = std::function<const boost::json::value*(const boost::json::object&)>;
  void follow_sse(test::sse_client& s, const data_of_frame& data_of);
  void run_windowed(int member);
  void ended(const std::string& how);

  chaos_cluster& cluster_;
  kind kind_;
  std::string object_;
  std::uint64_t seed_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> opened_{0};
  mutable std::mutex mu_;
  std::map<std::string, std::string> view_;
  bool live_ = false;
  std::map<std::string, int> endings_;
  std::thread thread_;
};

/// Waits (up to `bound`) until every stream is live and shows `expected(object)`; appends a
/// divergence for each that does not. Returns how many streams were checked.
int check_streams(
    std::vector<std::unique_ptr<chaos_stream>>& streams,
    const std::function<std::map<std::string, std::string>(const std::string&)>& expected,
    std::chrono::milliseconds bound, std::vector<std::string>& divergences);

}  // namespace weir::chaos

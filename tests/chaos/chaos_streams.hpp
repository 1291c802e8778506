// weir::chaos::chaos_streams — the harness's subscribers, each on a member picked at random and
// keeping the view a client would (record id → tok): per object, Arc hub subscriptions over SSE
// and WebSocket in the transfer modes (`full` and `legacy` take each `data`; `delta` and
// `patch` apply each change set to the client's copy), an Arc direct SSE stream and a windowed
// stream; and one space-wide windowed stream over every object. A stream that ends is opened
// again on another member, as a client would; how each ended is counted (a windowed `closed`
// reason, the hub's Error frame, a WebSocket close code, or the connection dropping). At a quiet
// point the checker asks every stream to show what a fresh read shows within a bound.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/object.hpp>

#include "chaos_cluster.hpp"
#include "sse_test_support.hpp"

namespace weir::chaos {

/// The object name of the space-wide windowed stream (its ids are "object/id").
inline constexpr const char* space_wide = "*";

class chaos_stream {
 public:
  /// `ag_ui_state` follows the property document of object `object` (its view: id → tok, or
  /// empty while it has none); its object() is "state:<object>".
  enum class kind { sse_hub, ws_hub, direct_sse, windowed, ag_ui_state };
  /// `mode`: the hub's transfer mode ("full", "delta", "patch", "" for legacy); unused else.
  chaos_stream(chaos_cluster& cluster, kind k, std::string mode, std::string object,
               std::uint64_t seed);
  ~chaos_stream();

  std::string name() const;
  std::string object() const { return kind_ == kind::ag_ui_state ? "state:" + object_ : object_; }
  /// The view now, and whether a subscription is open and has its baseline.
  std::map<std::string, std::string> view(bool* live) const;
  /// How its subscriptions ended so far: reason → count.
  std::map<std::string, int> endings() const;
  int opened() const { return opened_.load(); }

 private:
  void run();
  void run_sse_hub(int member);
  void run_ws_hub(int member);
  void run_direct(int member);
  void run_windowed(int member);
  void run_state(int member);
  /// Applies one hub or direct frame to `view` (a `data` baseline, or a change set once there is
  /// one); false for an Error frame (the subscription ended).
  bool apply_frame(const boost::json::object& f, std::map<std::string, std::string>& view,
                   bool& based) const;
  void publish(const std::map<std::string, std::string>& view);
  /// The next JSON `data:` event of `s` into `f` (empty on a timeout); false once the stream
  /// ended (counted in endings()).
  bool next_frame(test::sse_client& s, std::optional<boost::json::object>& f);
  void ended(const std::string& how);

  chaos_cluster& cluster_;
  kind kind_;
  std::string mode_;
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

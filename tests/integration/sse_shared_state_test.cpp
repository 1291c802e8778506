// The WebSocket hub and the SSE hub run ONE subscription state machine (arc-hub §4, §8): the
// same revision scenario, written once as data, is driven through a WebSocket client and through
// SSE control POSTs, and both must produce identical frame sequences (correlation ids aside),
// matching the expected summary of each step. The SSE side also checks each POST's status.
//
// After every step a witness ("w", a fresh revision each time) subscribes to the same query key:
// its snapshot passes through the same connection actor and query actor after the step, so the
// events read before it are exactly what the step caused.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "sse_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

enum class op { subscribe, unsubscribe, write };

struct step {
  op kind;
  std::string query_id;             // subscribe/unsubscribe; for write: the record id
  long long revision;               // < 0: legacy (no revision)
  std::vector<std::string> expect;  // summaries of the frames the step causes, in any order
  std::string query_name = "T.Items.All";
  json::object arguments = {{"obj", "o1"}};
};

using frames = std::vector<std::string>;

step sub(std::string query_id, long long revision, frames expect = {},
         std::string query_name = "T.Items.All", json::object arguments = {{"obj", "o1"}}) {
  return {op::subscribe,     std::move(query_id),   revision,
          std::move(expect), std::move(query_name), std::move(arguments)};
}
step unsub(std::string query_id, long long revision) {
  return {op::unsubscribe, std::move(query_id), revision, {}};
}
step put(std::string record_id, frames expect = {}) {
  return {op::write, std::move(record_id), 0, std::move(expect)};
}

// The scenario (delta mode throughout, so writes show as change sets). Record "a" exists first.
std::vector<step> scenario() {
  return {
      // subscribe r1 → snapshot rev 1; a duplicate → nothing.
      sub("q", 1, {"R q 1 data=[a]"}),
      sub("q", 1),
      // r2 replaces with a fresh snapshot (data again, no change set).
      sub("q", 2, {"R q 2 data=[a]"}),
      put("b", {"R q 2 +[b]"}),
      // a stale subscribe and a stale unsubscribe are ignored: r2 still runs.
      sub("q", 1),
      unsub("q", 1),
      put("c", {"R q 2 +[c]"}),
      // unsubscribe r2 → it stops; a write reaches nobody; the repeat is a no-op.
      unsub("q", 2),
      put("d"),
      unsub("q", 2),
      // the tombstone at 2 ignores a delayed subscribe r2; r3 revives with a full baseline.
      sub("q", 2),
      sub("q", 3, {"R q 3 data=[a,b,c,d]"}),
      // unsubscribe-before-subscribe: tombstone r5, the delayed r5 and an older r4 ignored,
      // r6 accepted.
      unsub("z", 5),
      sub("z", 5),
      sub("z", 4),
      sub("z", 6, {"R z 6 data=[a,b,c,d]"}),
      // legacy controls cannot touch a revision-aware id.
      sub("z", -1),
      unsub("z", -1),
      put("e", {"R q 3 +[e]", "R z 6 +[e]"}),
      // a legacy id: no revision on its frames; a legacy resubscribe replaces it (fresh
      // baseline); a revision-aware subscribe supersedes it; then legacy is ignored.
      sub("L", -1, {"R L - data=[a,b,c,d,e]"}),
      sub("L", -1, {"R L - data=[a,b,c,d,e]"}),
      sub("L", 1, {"R L 1 data=[a,b,c,d,e]"}),
      sub("L", -1),
      // legacy unsubscribe cancels a legacy subscription.
      sub("M", -1, {"R M - data=[a,b,c,d,e]"}),
      unsub("M", -1),
      put("f", {"R q 3 +[f]", "R z 6 +[f]", "R L 1 +[f]"}),
      // terminal errors: an unknown query and missing arguments, then the tombstone they leave.
      sub("u", 1, {"E u 1 Unknown observable query"}, "T.Nope"),
      sub("u", 1, {}, "T.Nope"),
      sub("u", 2, {"E u 2 Unknown observable query"}, "T.Nope"),
      sub("v", 1, {"E v 1 Invalid observable query"}, "T.Items.All", {}),
      // an error replacing a live subscription: its old revision stops too.
      sub("z", 7, {"E z 7 Unknown observable query"}, "T.Nope"),
      put("g", {"R q 3 +[g]", "R L 1 +[g]"}),
  };
}

std::string ids(const json::array& items) {
  std::string out = "[";
  for (auto& v : items) {
    out += (out.size() > 1 ? "," : "");
    out += std::string{v.as_object().at("id").as_string()};
  }
  return out + "]";
}

/// A short description of a frame for the expectations.
std::string summary(const json::object& f) {
  std::string type{f.at("type").as_string()};
  std::string rev = f.contains("revision") ? json::serialize(f.at("revision")) : "-";
  std::string qid = f.contains("queryId") ? std::string{f.at("queryId").as_string()} : "?";
  if (type == "QueryResult") {
    auto& p = f.at("payload").as_object();
    std::string out = "R " + qid + " " + rev;
    if (auto* d = p.if_contains("data")) {
      out += " data=" + ids(d->as_array());
    }
    if (auto* cs = p.if_contains("changeSet")) {
      auto& c = cs->as_object();
      if (!c.at("added").as_array().empty()) {
        out += " +" + ids(c.at("added").as_array());
      }
      if (!c.at("replaced").as_array().empty()) {
        out += " ~" + ids(c.at("replaced").as_array());
      }
      if (!c.at("removed").as_array().empty()) {
        out += " -" + ids(c.at("removed").as_array());
      }
    }
    return out;
  }
  if (type == "Error") {
    return "E " + qid + " " + rev + " " + std::string{f.at("payload").as_string()};
  }
  return type + " " + json::serialize(f);
}

/// The frame with its random parts removed (the per-subscription correlationId).
std::string normalized(json::object f) {
  if (auto* p = f.if_contains("payload"); p && p->is_object()) {
    p->as_object().erase("correlationId");
  }
  return json::serialize(f);
}

/// Sorted: within one write, the frames of different subscriptions come in no fixed order.
std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

/// What a transport has to do for the scenario.
struct driver {
  virtual ~driver() = default;
  virtual void subscribe(const step& s) = 0;
  virtual void unsubscribe(const step& s) = 0;
  /// Subscribes the witness at `revision` and returns the frames before its snapshot.
  virtual std::vector<json::object> barrier(long long revision) = 0;
};

json::object request_of(const step& s) {
  return subscription_request(s.query_name, s.arguments, "delta");
}

bool is_witness(const json::object& f, long long revision) {
  auto* q = f.if_contains("queryId");
  auto* r = f.if_contains("revision");
  return f.at("type") == "QueryResult" && q && *q == "w" && r && r->is_int64() &&
         r->get_int64() == revision;
}

bool from_witness(const json::object& f) {
  auto* q = f.if_contains("queryId");
  return q && *q == "w";
}

struct ws_driver : driver {
  explicit ws_driver(std::uint16_t port) : ws(port) { ws.expect_connected(); }
  void subscribe(const step& s) override { ws.send(json::serialize(frame("Subscribe", s, true))); }
  void unsubscribe(const step& s) override {
    ws.send(json::serialize(frame("Unsubscribe", s, false)));
  }
  std::vector<json::object> barrier(long long revision) override {
    ws.subscribe("w", "T.Items.All", {{"obj", "o1"}}, revision, "full");
    std::vector<json::object> out;
    for (int i = 0; i < 100; ++i) {
      auto f = ws.read_json();
      if (f.empty()) {
        break;
      }
      if (is_witness(f, revision)) {
        return out;
      }
      out.push_back(std::move(f));
    }
    ADD_FAILURE() << "no witness frame";
    return out;
  }
  static json::object frame(const char* type, const step& s, bool with_payload) {
    json::object f{{"type", type}, {"queryId", s.query_id}};
    if (s.revision >= 0) {
      f["revision"] = s.revision;
    }
    if (with_payload) {
      f["payload"] = request_of(s);
    }
    return f;
  }
  ws_client ws;
};

struct sse_driver : driver {
  explicit sse_driver(std::uint16_t p) : port(p), stream(p) { conn = stream.expect_connected(); }
  void subscribe(const step& s) override {
    auto r = sse_control_post(port, "subscribe",
                              control_body(conn, s.query_id, s.revision, request_of(s)));
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.body, "");
  }
  void unsubscribe(const step& s) override {
    auto r = sse_control_post(port, "unsubscribe", control_body(conn, s.query_id, s.revision));
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.body, "");
  }
  std::vector<json::object> barrier(long long revision) override {
    auto r = sse_control_post(
        port, "subscribe",
        control_body(conn, "w", revision,
                     subscription_request("T.Items.All", {{"obj", "o1"}}, "full")));
    EXPECT_EQ(r.status, 200u);
    auto seen = stream.read_through([&](auto& f) { return is_witness(f, revision); });
    if (!seen.empty()) {
      seen.pop_back();
    }
    return seen;
  }
  std::uint16_t port;
  sse_client stream;
  std::string conn;
};

/// Runs the scenario on a fresh node through `Driver`'s transport; returns, per step, the
/// normalized frames it caused (witness frames excluded).
template <typename Driver>
std::vector<std::vector<std::string>> run(const char* transport) {
  SCOPED_TRACE(transport);
  temp_dir dir;
  auto node = start_node(dir.path());
  if (!node) {
    ADD_FAILURE() << "no node";
    return {};
  }
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  Driver d{port};
  std::vector<std::vector<std::string>> out;
  long long witness = 0;
  auto steps = scenario();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    SCOPED_TRACE("step " + std::to_string(i + 1));
    switch (s.kind) {
      case op::subscribe:
        d.subscribe(s);
        break;
      case op::unsubscribe:
        d.unsubscribe(s);
        break;
      case op::write:
        put_record(port, "t", "o1", "items", s.query_id, R"({"n":)" + std::to_string(i + 2) + "}");
        break;
    }
    std::vector<std::string> summaries;
    std::vector<std::string> frames;
    for (auto& f : d.barrier(++witness)) {
      if (from_witness(f)) {
        continue;  // the previous witness's own delta
      }
      summaries.push_back(summary(f));
      frames.push_back(normalized(f));
    }
    EXPECT_EQ(sorted(summaries), sorted(s.expect));
    out.push_back(sorted(frames));
  }
  return out;
}

TEST(SseSharedState, WebSocketAndSseRunTheSameStateMachine) {
  auto via_ws = run<ws_driver>("WebSocket");
  auto via_sse = run<sse_driver>("SSE");
  ASSERT_EQ(via_ws.size(), scenario().size());
  ASSERT_EQ(via_sse.size(), via_ws.size());
  for (std::size_t i = 0; i < via_ws.size(); ++i) {
    EXPECT_EQ(via_ws[i], via_sse[i]) << "step " << i + 1;
  }
}

}  // namespace
}  // namespace weir::test

// The harness's subscribers (see chaos_streams.hpp).
#include "chaos_streams.hpp"

#include <functional>
#include <optional>
#include <random>

#include <boost/json.hpp>

#include "core/json_patch.hpp"
#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::chaos {

namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::string tok_of(const json::value& doc) {
  const auto* o = doc.if_object();
  const auto* t = o ? o->if_contains("tok") : nullptr;
  return t && t->is_string() ? std::string{t->as_string()} : std::string{};
}

std::string id_of(const json::value& rec) {
  return std::string{rec.as_object().at("id").as_string()};
}

/// The next `data:` event of `s` as a JSON object: nullopt on a timeout (`*over` false) or when
/// the stream ended or sent something that is not a JSON object (`*over` true, `*how` why).
std::optional<json::object> next_json(test::sse_client& s, bool* over, std::string* how) {
  *over = false;
  auto ev = s.read_event(300ms);
  if (!ev) {
    *over = s.ended();
    *how = "eof";
    return std::nullopt;
  }
  if (ev->rfind("data: ", 0) != 0) {
    return std::nullopt;
  }
  boost::system::error_code ec;
  auto v = json::parse(ev->substr(6), ec);
  if (ec || !v.is_object()) {
    *over = true;
    *how = "malformed frame";
    return std::nullopt;
  }
  return std::move(v.as_object());
}

}  // namespace

chaos_stream::chaos_stream(chaos_cluster& cluster, kind k, std::string mode, std::string object,
                           std::uint64_t seed)
    : cluster_(cluster), kind_(k), mode_(std::move(mode)), object_(std::move(object)), seed_(seed) {
  thread_ = std::thread([this] { run(); });
}

chaos_stream::~chaos_stream() {
  stopping_ = true;
  if (thread_.joinable()) {
    thread_.join();
  }
}

std::string chaos_stream::name() const {
  std::string mode = mode_.empty() ? "legacy" : mode_;
  switch (kind_) {
    case kind::sse_hub:
      return "SSE hub (" + mode + ") stream on " + object_;
    case kind::ws_hub:
      return "WebSocket hub (" + mode + ") stream on " + object_;
    case kind::direct_sse:
      return "direct SSE stream on " + object_;
    case kind::ag_ui_state:
      return "AG-UI state stream on " + object_;
    case kind::windowed:
      break;
  }
  return object_ == space_wide ? std::string{"space-wide windowed stream"}
                               : "windowed stream on " + object_;
}

std::map<std::string, std::string> chaos_stream::view(bool* live) const {
  std::lock_guard lock{mu_};
  *live = live_;
  return view_;
}

std::map<std::string, int> chaos_stream::endings() const {
  std::lock_guard lock{mu_};
  return endings_;
}

void chaos_stream::ended(const std::string& how) {
  std::lock_guard lock{mu_};
  live_ = false;
  ++endings_[how];
}

void chaos_stream::publish(const std::map<std::string, std::string>& view) {
  std::lock_guard lock{mu_};
  view_ = view;
  live_ = true;
}

void chaos_stream::run() {
  std::mt19937_64 rng{seed_};
  while (!stopping_) {
    int n = cluster_.size();
    int member = static_cast<int>(rng() % static_cast<std::uint64_t>(n));
    for (int k = 0; k < n && !cluster_.serving(member); ++k) {
      member = (member + 1) % n;
    }
    try {
      switch (kind_) {
        case kind::sse_hub:
          run_sse_hub(member);
          break;
        case kind::ws_hub:
          run_ws_hub(member);
          break;
        case kind::direct_sse:
          run_direct(member);
          break;
        case kind::windowed:
          run_windowed(member);
          break;
        case kind::ag_ui_state:
          run_state(member);
          break;
      }
    } catch (const std::exception&) {
      ended("connection failed");  // a member down or stopped: open it again elsewhere
    }
    std::this_thread::sleep_for(100ms);
  }
}

bool chaos_stream::apply_frame(const json::object& f, std::map<std::string, std::string>& view,
                               bool& based) const {
  const json::object* result = &f;  // a direct stream's frames are bare results
  if (kind_ != kind::direct_sse) {
    const auto* type = f.if_contains("type");
    if (type && *type == "Error") {
      return false;
    }
    const auto* payload = f.if_contains("payload");
    if (!type || *type != "QueryResult" || !payload || !payload->is_object()) {
      return true;  // Connected, Ping, …: nothing to apply
    }
    result = &payload->as_object();
  }
  if (const auto* data = result->if_contains("data"); data && data->is_array()) {
    view.clear();  // a baseline (every emission in full and legacy)
    for (const auto& rec : data->as_array()) {
      view[id_of(rec)] = tok_of(rec);
    }
    based = true;
  } else if (const auto* cs = result->if_contains("changeSet"); cs && cs->is_object() && based) {
    for (const char* list : {"added", "replaced"}) {
      if (const auto* l = cs->as_object().if_contains(list); l && l->is_array()) {
        for (const auto& rec : l->as_array()) {
          view[id_of(rec)] = tok_of(rec);
        }
      }
    }
    if (const auto* l = cs->as_object().if_contains("removed"); l && l->is_array()) {
      for (const auto& rec : l->as_array()) {
        view.erase(id_of(rec));
      }
    }
  }
  return true;
}

bool chaos_stream::next_frame(test::sse_client& s, std::optional<json::object>& f) {
  bool over = false;
  std::string how;
  f = next_json(s, &over, &how);
  if (over) {
    ended(how);
  }
  return !over;
}

void chaos_stream::run_sse_hub(int member) {
  auto port = cluster_.http_port(member);
  test::sse_client s{port};
  if (s.status() != 200) {
    return;
  }
  auto first = s.read_event(5s);
  if (!first || first->rfind("data: ", 0) != 0) {
    return;
  }
  boost::system::error_code ec;
  auto hello = json::parse(first->substr(6), ec);
  const auto* conn = !ec && hello.is_object() ? hello.as_object().if_contains("payload") : nullptr;
  if (!conn || !conn->is_string()) {
    return;
  }
  auto body =
      test::control_body(std::string{conn->as_string()}, "q", 1,
                         test::subscription_request("T.Items.All", {{"obj", object_}}, mode_));
  if (test::sse_control_post(port, "subscribe", body).status != 200) {
    return;
  }
  ++opened_;
  std::map<std::string, std::string> view;
  bool based = false;
  while (!stopping_) {
    std::optional<json::object> f;
    if (!next_frame(s, f)) {
      return;
    }
    if (!f) {
      continue;
    }
    if (!apply_frame(*f, view, based)) {
      ended("error");
      return;
    }
    if (based) {
      publish(view);
    }
  }
  s.close();
}

void chaos_stream::run_ws_hub(int member) {
  test::ws_client ws{cluster_.http_port(member)};
  std::optional<std::string> hello;
  for (int i = 0; i < 50 && !hello && ws.is_open() && !stopping_; ++i) {
    hello = ws.poll(100ms);
  }
  if (!hello) {
    return;
  }
  ws.subscribe("q", "T.Items.All", {{"obj", object_}}, 1, mode_);
  ++opened_;
  std::map<std::string, std::string> view;
  bool based = false;
  while (!stopping_) {
    auto t = ws.poll(300ms);
    if (!t) {
      if (!ws.is_open()) {
        ended(ws.close_status() ? "ws close " + std::to_string(ws.close_status()->first) : "eof");
        return;
      }
      continue;
    }
    boost::system::error_code ec;
    auto v = json::parse(*t, ec);
    if (ec || !v.is_object()) {
      ended("malformed frame");
      return;
    }
    if (!apply_frame(v.as_object(), view, based)) {
      ended("error");
      return;
    }
    if (based) {
      publish(view);
    }
  }
}

void chaos_stream::run_direct(int member) {
  test::sse_client::options o;
  o.target = "/api/t/items?obj=" + object_;
  o.headers = {{"Accept", "text/event-stream"}};
  test::sse_client s{cluster_.http_port(member), o};
  if (s.status() != 200) {
    return;
  }
  ++opened_;
  std::map<std::string, std::string> view;
  bool based = false;
  while (!stopping_) {
    std::optional<json::object> f;
    if (!next_frame(s, f)) {
      return;
    }
    if (!f) {
      continue;
    }
    if (apply_frame(*f, view, based) && based) {
      publish(view);
    }
  }
  s.close();
}

void chaos_stream::run_windowed(int member) {
  bool wide = object_ == space_wide;
  test::windowed_stream w{cluster_.http_port(member), "t", wide ? "datasets" : "object",
                          wide ? std::string{R"({"dataset":"items"})"}
                               : R"({"objectId":")" + object_ + R"(","dataset":"items"})"};
  if (w.status() != 200) {
    return;
  }
  ++opened_;
  while (!stopping_) {
    auto f = w.next(300ms);
    if (!f) {
      if (w.client().ended()) {
        ended(w.closed_reason() ? "closed:" + *w.closed_reason() : "eof");
        return;
      }
      continue;
    }
    w.apply(*f);
    if (f->event == "closed") {
      ended("closed:" + (w.closed_reason() ? *w.closed_reason() : std::string{"?"}));
      return;
    }
    if (f->event == "snapshot" || f->event == "changes") {
      std::map<std::string, std::string> view;
      for (const auto& [id, doc] : w.window()) {
        view[id] = tok_of(doc);
      }
      publish(view);
    }
  }
  w.close();
}

void chaos_stream::run_state(int member) {
  test::sse_client::options o;
  o.target = "/v1/spaces/t/objects/" + object_ + "/state";
  o.headers = {{"Accept", "text/event-stream"}};
  test::sse_client s{cluster_.http_port(member), o};
  if (s.status() != 200) {
    return;
  }
  ++opened_;
  json::value doc;
  bool based = false;
  while (!stopping_) {
    std::optional<json::object> f;
    if (!next_frame(s, f)) {
      return;
    }
    if (!f) {
      continue;
    }
    const auto& e = *f;
    const auto* type = e.if_contains("type");
    if (type && *type == "STATE_SNAPSHOT") {
      doc = e.at("snapshot");
      based = true;
    } else if (type && *type == "STATE_DELTA" && based) {
      if (!core::apply_patch(doc, e.at("delta"))) {
        ended("a delta that does not apply");
        return;
      }
    } else if (type && *type == "RUN_ERROR") {
      const auto* code = e.if_contains("code");
      ended("RUN_ERROR " + (code && code->is_string() ? std::string{code->as_string()} : ""));
      return;
    } else {
      continue;
    }
    std::map<std::string, std::string> view;
    if (doc.is_object() && doc.as_object().contains("id")) {
      view[object_] = tok_of(doc);
    }
    publish(view);
  }
  s.close();
}

int check_streams(
    std::vector<std::unique_ptr<chaos_stream>>& streams,
    const std::function<std::map<std::string, std::string>(const std::string&)>& expected,
    std::chrono::milliseconds bound, std::vector<std::string>& divergences) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  std::map<std::string, std::map<std::string, std::string>> want;
  int checked = 0;
  for (auto& s : streams) {
    const auto& object = s->object();
    if (!want.count(object)) {
      want[object] = expected(object);
    }
    bool live = false;
    std::map<std::string, std::string> v;
    while (true) {
      v = s->view(&live);
      if ((live && v == want[object]) || std::chrono::steady_clock::now() > deadline) {
        break;
      }
      std::this_thread::sleep_for(50ms);
    }
    ++checked;
    if (!live) {
      divergences.push_back(s->name() + ": not subscribed again after the faults");
    } else if (v != want[object]) {
      std::string d = s->name() + " shows";
      for (auto& [id, tok] : v) {
        d += " " + id + "=" + tok;
      }
      d += "; a fresh read shows";
      for (auto& [id, tok] : want[object]) {
        d += " " + id + "=" + tok;
      }
      divergences.push_back(d);
    }
  }
  return checked;
}

}  // namespace weir::chaos

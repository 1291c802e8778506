// Property test of the hub's change sets: for seeded random sequences of upserts, patches,
// deletes and batches on one object's dataset, a client that reconstructs its state from the
// first snapshot plus every changeSet (delta mode, legacy mode, and a filtered query in delta
// mode) always ends with exactly the data a fresh full-mode subscription returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

constexpr int ops_per_seed = 60;
constexpr int ops_before_subscribing = 10;
const std::vector<std::string> colors{"red", "blue", "green"};

/// One subscription's client-side state, rebuilt from frames as an Arc client would.
struct live_view {
  std::string query_id;
  bool legacy = false;
  bool started = false;
  json::array rows;
  int frames = 0;
};

std::string id_of(const json::value& r) {
  return std::string{r.as_object().at("id").as_string()};
}

/// The query's order: "n" ascending (numbers), then "id" as the tie-break.
void sort_rows(json::array& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const json::value& a, const json::value& b) {
    double na = a.as_object().at("n").to_number<double>();
    double nb = b.as_object().at("n").to_number<double>();
    if (na != nb) {
      return na < nb;
    }
    return id_of(a) < id_of(b);
  });
}

std::ptrdiff_t find_row(const json::array& rows, const std::string& id) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (id_of(rows[i]) == id) {
      return static_cast<std::ptrdiff_t>(i);
    }
  }
  return -1;
}

/// Applies a changeSet: removed by id, replaced by id, added appended, then re-sorted. Each item
/// must be consistent with the state it applies to (added ids are new, the others exist).
void apply_change_set(live_view& v, const json::object& cs) {
  std::set<std::string> touched;
  for (const char* part : {"added", "replaced", "removed"}) {
    ASSERT_TRUE(cs.contains(part) && cs.at(part).is_array())
        << v.query_id << ": changeSet without " << part << ": " << json::serialize(cs);
    for (auto& r : cs.at(part).as_array()) {
      EXPECT_TRUE(touched.insert(id_of(r)).second)
          << v.query_id << ": id " << id_of(r) << " twice in one changeSet " << json::serialize(cs);
    }
  }
  // §5.1: removed in previous order; added and replaced in current order (checked below).
  std::ptrdiff_t last = -1;
  for (auto& r : cs.at("removed").as_array()) {
    auto i = find_row(v.rows, id_of(r));
    EXPECT_GT(i, last) << v.query_id << ": removed out of previous order " << json::serialize(cs);
    last = i;
  }
  for (auto& r : cs.at("removed").as_array()) {
    auto i = find_row(v.rows, id_of(r));
    EXPECT_GE(i, 0) << v.query_id << ": removed " << id_of(r) << " was not there";
    if (i >= 0) {
      v.rows.erase(v.rows.begin() + i);
    }
  }
  for (auto& r : cs.at("replaced").as_array()) {
    auto i = find_row(v.rows, id_of(r));
    EXPECT_GE(i, 0) << v.query_id << ": replaced " << id_of(r) << " was not there";
    if (i >= 0) {
      EXPECT_NE(v.rows[static_cast<std::size_t>(i)], r)
          << v.query_id << ": replaced " << id_of(r) << " with an identical item";
      v.rows[static_cast<std::size_t>(i)] = r;
    }
  }
  for (auto& r : cs.at("added").as_array()) {
    EXPECT_LT(find_row(v.rows, id_of(r)), 0)
        << v.query_id << ": added " << id_of(r) << " was already there";
    v.rows.push_back(r);
  }
  sort_rows(v.rows);
  for (const char* part : {"added", "replaced"}) {
    last = -1;
    for (auto& r : cs.at(part).as_array()) {
      auto i = find_row(v.rows, id_of(r));
      EXPECT_GT(i, last) << v.query_id << ": " << part << " out of current order "
                         << json::serialize(cs);
      last = i;
    }
  }
}

/// The change set §5.1 step 4 prescribes between two id-keyed arrays.
json::object expected_change_set(const json::array& prev, const json::array& cur) {
  json::array added, replaced, removed;
  for (auto& r : cur) {
    auto i = find_row(prev, id_of(r));
    if (i < 0) {
      added.push_back(r);
    } else if (json::serialize(prev[static_cast<std::size_t>(i)]) != json::serialize(r)) {
      replaced.push_back(r);
    }
  }
  for (auto& r : prev) {
    if (find_row(cur, id_of(r)) < 0) {
      removed.push_back(r);
    }
  }
  return {{"added", added}, {"replaced", replaced}, {"removed", removed}};
}

void on_frame(live_view& v, const json::object& frame) {
  ASSERT_EQ(frame.at("type"), "QueryResult") << json::serialize(frame);
  auto& p = frame.at("payload").as_object();
  const json::value* data = p.if_contains("data");
  const json::value* cs = p.if_contains("changeSet");
  bool has_data = data && !data->is_null();
  bool has_cs = cs && !cs->is_null();
  ++v.frames;
  if (v.legacy) {
    // Legacy: full data plus a change set on every emission, the first against an empty state.
    ASSERT_TRUE(has_data && data->is_array()) << json::serialize(frame);
    ASSERT_TRUE(has_cs) << json::serialize(frame);
    // Exactly the difference between the previous data and this data, nothing more or less.
    EXPECT_EQ(*cs, json::value(expected_change_set(v.rows, data->as_array())))
        << v.query_id << ": " << json::serialize(frame);
    apply_change_set(v, cs->as_object());
    EXPECT_EQ(json::value(v.rows), *data)
        << v.query_id << ": the change set does not turn the previous data into this data";
    v.rows = data->as_array();
    v.started = true;
    return;
  }
  if (!v.started) {
    ASSERT_TRUE(has_data && data->is_array()) << json::serialize(frame);
    EXPECT_FALSE(has_cs) << json::serialize(frame);
    v.rows = data->as_array();
    v.started = true;
    return;
  }
  EXPECT_FALSE(has_data) << v.query_id << ": delta frame with data " << json::serialize(frame);
  ASSERT_TRUE(has_cs) << json::serialize(frame);
  apply_change_set(v, cs->as_object());
}

bool contains_version(const live_view& v, const std::string& id, const std::string& vid) {
  auto i = find_row(v.rows, id);
  return i >= 0 && v.rows[static_cast<std::size_t>(i)].as_object().at("_ver").as_object().at(
                       "id") == json::value(vid);
}

json::value fresh_full(std::uint16_t port, const std::string& query, const json::object& args) {
  ws_client ws{port};
  ws.expect_connected();
  ws.subscribe("full", query, args, 1, "full");
  auto f = ws.read_json();
  EXPECT_EQ(f["type"], "QueryResult");
  auto* d = f["payload"].as_object().if_contains("data");
  return d ? *d : json::value(nullptr);
}

/// A random write generator over a small id pool, with a model of which ids exist so every
/// answer's status can be checked too.
class writer {
 public:
  writer(std::uint16_t port, std::string obj, std::uint64_t seed)
      : port_(port), obj_(std::move(obj)), rng_(seed) {}

  void step() {
    int dice = pick(0, 99);
    if (dice < 35) {
      upsert();
    } else if (dice < 60) {
      patch();
    } else if (dice < 75) {
      remove();
    } else {
      batch();
    }
  }

  /// The sentinel: a red record outside the pool, so every subscription here sees it.
  std::string sentinel() {
    return expect_write(http(port_, "PUT", path("zz-sentinel"), R"({"n":1000,"color":"red"})"),
                        true);
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>{lo, hi}(rng_); }
  std::string pool_id() { return "i" + std::to_string(pick(0, 9)); }
  std::string color() { return colors[static_cast<std::size_t>(pick(0, 2))]; }

  std::string path(const std::string& id) const {
    return "/v1/spaces/t/objects/" + obj_ + "/datasets/items/records/" + id;
  }

  json::object random_doc() {
    json::object d{{"n", pick(0, 5)}, {"color", color()}};
    if (pick(0, 2) == 0) {
      d["meta"] = json::object{{"t", pick(0, 3)}};
    }
    return d;
  }

  std::string expect_write(const http_response& r, bool should_succeed) {
    if (!should_succeed) {
      EXPECT_EQ(r.status, 404u) << r.body;
      return {};
    }
    EXPECT_EQ(r.status, 200u) << r.body;
    if (r.status != 200) {
      return {};
    }
    std::string vid{r.json().as_object().at("versionId").as_string()};
    EXPECT_LT(last_, vid);
    last_ = vid;
    return vid;
  }

  void upsert() {
    auto id = pool_id();
    expect_write(http(port_, "PUT", path(id), json::serialize(random_doc())), true);
    exists_.insert(id);
  }

  void patch() {
    auto id = pool_id();
    json::object body;
    switch (pick(0, 5)) {
      case 0:
        body["$set"] = json::object{{"color", color()}};
        break;
      case 1:
        body["$inc"] = json::object{{"n", pick(-2, 2)}};
        break;
      case 2:
        body["$inc"] = json::object{{"n", 0.5}};
        body["$set"] = json::object{{"color", color()}};
        break;
      case 3:
        body["$set"] = json::object{{"meta.t", pick(0, 3)}, {"n", pick(0, 5)}};
        break;
      case 4:
        body["$unset"] = json::object{{"meta", true}};
        break;
      default:
        body["$set"] = json::object{{"n", pick(0, 5)}, {"color", color()}};
        body["$unset"] = json::object{{"meta.t", 1}};
        break;
    }
    expect_write(http(port_, "PATCH", path(id), json::serialize(body)), exists_.count(id) > 0);
  }

  void remove() {
    auto id = pool_id();
    expect_write(http(port_, "DELETE", path(id)), exists_.count(id) > 0);
    exists_.erase(id);
  }

  void batch() {
    std::set<std::string> up, del;
    int n_up = pick(1, 3);
    int n_del = pick(0, 2);
    while (static_cast<int>(up.size()) < n_up) {
      up.insert(pool_id());
    }
    for (int i = 0; i < 10 && static_cast<int>(del.size()) < n_del; ++i) {
      auto id = pool_id();
      if (!up.count(id)) {
        del.insert(id);
      }
    }
    json::array ups, dels;
    for (auto& id : up) {
      auto d = random_doc();
      d["id"] = id;
      ups.push_back(std::move(d));
    }
    for (auto& id : del) {
      dels.push_back(json::value(id));
    }
    json::object body{{"upsert", ups}};
    if (!dels.empty()) {
      body["delete"] = dels;
    }
    expect_write(http(port_, "POST", "/v1/spaces/t/objects/" + obj_ + "/datasets/items/records",
                      json::serialize(body)),
                 true);
    for (auto& id : up) {
      exists_.insert(id);
    }
    for (auto& id : del) {
      exists_.erase(id);
    }
  }

  std::uint16_t port_;
  std::string obj_;
  std::mt19937_64 rng_;
  std::set<std::string> exists_;
  std::string last_;
};

class DeltaProperty : public ::testing::TestWithParam<int> {};

TEST_P(DeltaProperty, ReconstructionEqualsFreshSnapshot) {
  const int seed = GetParam();
  SCOPED_TRACE("seed " + std::to_string(seed));
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  const std::string obj = "p" + std::to_string(seed);
  writer w{port, obj, static_cast<std::uint64_t>(seed)};
  for (int i = 0; i < ops_before_subscribing; ++i) {
    w.step();
  }

  ws_client ws{port};
  ws.expect_connected();
  std::map<std::string, live_view> views;
  views["all-delta"].query_id = "all-delta";
  views["all-delta"].legacy = false;
  views["all-legacy"].query_id = "all-legacy";
  views["all-legacy"].legacy = true;
  views["red-delta"].query_id = "red-delta";
  views["red-delta"].legacy = false;
  ws.subscribe("all-delta", "T.Items.All", {{"obj", obj}}, 1, "delta");
  ws.subscribe("all-legacy", "T.Items.All", {{"obj", obj}}, 1, "");
  ws.subscribe("red-delta", "T.Items.ByColor", {{"obj", obj}, {"color", "red"}}, 1, "delta");

  for (int i = ops_before_subscribing; i < ops_per_seed; ++i) {
    w.step();
    ASSERT_FALSE(HasFatalFailure());
  }
  const auto final_vid = w.sentinel();
  ASSERT_FALSE(final_vid.empty());

  // Read until every view holds the sentinel at its version: frames arrive in write order, so
  // by then every earlier write has been applied by the client as well.
  auto caught_up = [&] {
    return std::all_of(views.begin(), views.end(), [&](auto& kv) {
      return kv.second.started && contains_version(kv.second, "zz-sentinel", final_vid);
    });
  };
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!caught_up()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    ASSERT_GT(left.count(), 0) << "the final version " << final_vid << " did not arrive";
    auto text = ws.read(left);
    ASSERT_TRUE(text) << "the final version " << final_vid << " did not arrive";
    auto v = json::parse(*text);
    ASSERT_TRUE(v.is_object());
    auto& f = v.as_object();
    if (f.at("type") == "Ping") {
      continue;
    }
    ASSERT_TRUE(f.contains("queryId")) << *text;
    auto it = views.find(std::string{f.at("queryId").as_string()});
    ASSERT_NE(it, views.end()) << *text;
    on_frame(it->second, f);
    ASSERT_FALSE(HasFatalFailure()) << "frame: " << *text;
  }

  auto all = fresh_full(port, "T.Items.All", {{"obj", obj}});
  auto red = fresh_full(port, "T.Items.ByColor", {{"obj", obj}, {"color", "red"}});
  ASSERT_TRUE(all.is_array() && red.is_array());
  EXPECT_EQ(json::value(views["all-delta"].rows), all)
      << "delta reconstruction:\n"
      << json::serialize(views["all-delta"].rows) << "\nfresh snapshot:\n"
      << json::serialize(all);
  EXPECT_EQ(json::value(views["all-legacy"].rows), all)
      << "legacy reconstruction:\n"
      << json::serialize(views["all-legacy"].rows) << "\nfresh snapshot:\n"
      << json::serialize(all);
  EXPECT_EQ(json::value(views["red-delta"].rows), red)
      << "filtered delta reconstruction:\n"
      << json::serialize(views["red-delta"].rows) << "\nfresh snapshot:\n"
      << json::serialize(red);
  for (auto& r : red.as_array()) {
    EXPECT_EQ(r.as_object().at("color"), "red");
  }
  // The sort the client re-applies is the query's own.
  auto resorted = all.as_array();
  sort_rows(resorted);
  EXPECT_EQ(json::value(resorted), all);
  // Nothing else is pending: no frame beyond the sentinel's.
  EXPECT_TRUE(ws.silent_for(100ms));
}

INSTANTIATE_TEST_SUITE_P(Seeds, DeltaProperty, ::testing::Range(1, 21),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "seed" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace weir::test

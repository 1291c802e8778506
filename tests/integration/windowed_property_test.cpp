// The exact-window property on live nodes (windowed-subscribe Decision 2): many windows at once
// (several sorts, limits, offsets, filters and projections; one object's dataset, the objects
// collection and the space-wide dataset), hundreds of random writes (creates, updates that move
// rows across window edges and in and out of filters, deletes, batches, property documents,
// whole-object deletes). After each acknowledged write, the frame it causes must turn every
// client's window into exactly the request's window over the data as it now is. The expected
// window is computed here, independently of the engine's windows: every record is read with an
// unbounded, unfiltered query (a different path: no index, no window) and the request's filter,
// sort, offset, limit and projection are applied to it in the test; the snapshot twin
// (`…/query` with the same body) must answer the same. On one node,
// and on a three-node cluster where writes land on any member, streams are opened on any member
// and the objects are owned by all three.
#include <gtest/gtest.h>

#include <random>

#include <boost/json.hpp>

#include "cluster_support.hpp"
#include "core/windowed_request.hpp"
#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;
using clock_type = std::chrono::steady_clock;

struct window_case {
  std::string scope;  // "object", "objects", "datasets"
  std::string body;
};

std::vector<window_case> windows_for(const std::string& obj) {
  auto o = [&](const std::string& rest) {
    return R"({"objectId":")" + obj + R"(","dataset":"msgs",)" + rest + "}";
  };
  return {
      {"object", o(R"("sort":["n"],"limit":3)")},
      {"object", o(R"("sort":["-n","s"],"limit":4,"offset":2)")},
      {"object", o(R"("sort":["-_ver.id"],"limit":5,"filter":{"c":"red"})")},
      {"object", o(R"("sort":["s","n"],"limit":2,"filter":{"n":{"$gte":10}},)"
                   R"("projection":{"n":1,"s":1})")},
      {"object", o(R"("sort":["c"],"filter":{"c":{"$in":["blue","green"]}})")},
      {"objects", R"({"sort":["-rank"],"limit":2,"filter":{"kind":"page"}})"},
      {"objects", R"({"sort":["-modifiedAt"],"limit":3,"offset":1})"},
      {"datasets", R"({"dataset":"msgs","sort":["n"],"limit":4})"},
      {"datasets", R"({"dataset":"msgs","sort":["-s","n"],"limit":3,"offset":2,)"
                   R"("filter":{"c":"red"},"projection":{"s":1,"c":1}})"},
  };
}

json::value record_body(std::mt19937& rng) {
  static const char* colors[] = {"red", "blue", "green"};
  json::object d;
  d["n"] = static_cast<int>(rng() % 30);
  d["c"] = colors[rng() % 3];
  d["s"] = std::string(1, static_cast<char>('a' + rng() % 6));
  return d;
}

class property_run {
 public:
  property_run(std::vector<std::uint16_t> ports, unsigned seed)
      : ports_(std::move(ports)), rng_(seed) {}

  std::uint16_t any_port() { return ports_[rng_() % ports_.size()]; }

  /// Seeds a few records in every object and a few property documents.
  void seed(const std::vector<std::string>& objects) {
    objects_ = objects;
    for (auto& o : objects_) {
      for (int i = 0; i < 6; ++i) {
        put_record(any_port(), "t", o, "msgs", "r" + std::to_string(i),
                   json::serialize(record_body(rng_)));
      }
      put_object(o);
    }
  }

  void open(const std::vector<window_case>& cases) {
    for (auto& c : cases) {
      entries_.push_back(entry{c, any_port(), nullptr});
      reopen(entries_.back());
    }
  }

  /// One random write; returns its versionId.
  std::string write() {
    auto port = any_port();
    auto& o = objects_[rng_() % objects_.size()];
    auto id = "r" + std::to_string(rng_() % 12);
    auto path = "/v1/spaces/t/objects/" + o + "/datasets/msgs/records/" + id;
    auto kind = rng_() % 100;
    http_response r;
    if (kind < 40) {
      r = http(port, "PUT", path, json::serialize(record_body(rng_)),
               {{"Content-Type", "application/json"}});
    } else if (kind < 60) {
      std::string body = rng_() % 2 ? R"({"$inc":{"n":)" + std::to_string(rng_() % 7) + "}}"
                                    : R"({"$set":{"c":"red","s":"z"}})";
      r = http(port, "PATCH", path, body, {{"Content-Type", "application/json"}});
      if (r.status == 404) {
        return {};  // the record was not there: nothing changed
      }
    } else if (kind < 75) {
      r = http(port, "DELETE", path);
      if (r.status == 404) {
        return {};
      }
    } else if (kind < 85) {
      auto rec = record_body(rng_).as_object();
      auto up_id = "r" + std::to_string(rng_() % 12);
      rec["id"] = up_id;
      json::array up;
      up.push_back(std::move(rec));
      auto gone = "r" + std::to_string(rng_() % 12);
      if (gone == up_id) {
        gone += "x";
      }
      json::array dels;
      dels.push_back(json::string{gone});
      json::object batch;
      batch["upsert"] = std::move(up);
      batch["delete"] = std::move(dels);
      r = http(port, "POST", "/v1/spaces/t/objects/" + o + "/datasets/msgs/records",
               json::serialize(batch), {{"Content-Type", "application/json"}});
    } else if (kind < 97) {
      return put_object(o);
    } else {
      r = http(port, "DELETE", "/v1/spaces/t/objects/" + o);
      if (r.status == 404) {
        return {};
      }
    }
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200 ? std::string{r.json().as_object()["versionId"].as_string()} : "";
  }

  /// Every window must reach exactly what a fresh query returns, through the frames that
  /// follow the write.
  void check(int step) {
    for (auto& e : entries_) {
      auto fresh = windowed_query(e.port, "t", e.c.scope, all_rows_body(e.c));
      if (fresh.status == 410) {
        // Its object was deleted: the stream must have ended with `object_deleted`.
        if (e.s) {
          while (!e.s->closed_reason()) {
            auto f = e.s->next(5s);
            ASSERT_TRUE(f) << "step " << step << ": no closed frame after the object delete";
            e.s->apply(*f);
          }
          ASSERT_EQ(*e.s->closed_reason(), "object_deleted");
          ASSERT_TRUE(e.s->window().empty());
          e.s.reset();
        }
        continue;
      }
      ASSERT_EQ(fresh.status, 200u) << fresh.body;
      if (!e.s) {
        reopen(e);  // written to again: a client subscribes again
      }
      auto want = expected_window(e.c, fresh.json().as_object().at("records"));
      // The snapshot twin with the request's own body answers the same.
      auto twin = windowed_query(e.port, "t", e.c.scope, e.c.body);
      ASSERT_EQ(twin.status, 200u) << twin.body;
      ASSERT_EQ(by_record_id(twin.json().as_object().at("records")), want)
          << "step " << step << ", " << e.c.body;
      auto deadline = clock_type::now() + 5s;
      while (e.s->window() != want) {
        auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
        auto f = left.count() > 0 ? e.s->next(left) : std::nullopt;
        ASSERT_TRUE(f) << "step " << step << ", " << e.c.scope << " " << e.c.body
                       << ": the window never became the fresh query's\n  window: "
                       << dump(e.s->window()) << "\n  fresh:  " << fresh.body;
        e.s->apply(*f);
        ASSERT_NE(f->event, "closed") << "step " << step << ": " << f->raw;
        ++frames_;
      }
    }
  }

  int frames() const { return frames_; }

 private:
  struct entry {
    window_case c;
    std::uint16_t port;
    std::unique_ptr<windowed_stream> s;
  };

  void reopen(entry& e) {
    e.s = std::make_unique<windowed_stream>(e.port, "t", e.c.scope, e.c.body);
    ASSERT_EQ(e.s->status(), 200u) << e.s->client().response().body;
    e.s->open();
  }

  /// The unbounded, unfiltered request for every row the window's request reads.
  static std::string all_rows_body(const window_case& c) {
    auto body = json::parse(c.body).as_object();
    json::object out;
    for (const char* k : {"objectId", "dataset"}) {
      if (auto* v = body.if_contains(k)) {
        out[k] = *v;
      }
    }
    return json::serialize(out);
  }

  /// The request's window over `all` (every row): filter, sort, offset, limit, projection.
  static std::map<std::string, json::value> expected_window(const window_case& c,
                                                            const json::value& all) {
    auto scope = c.scope == "objects"    ? core::windowed_scope::objects
                 : c.scope == "datasets" ? core::windowed_scope::datasets
                                         : core::windowed_scope::object;
    auto req = core::parse_windowed_request(scope, false, "t", std::string_view{c.body});
    EXPECT_TRUE(req) << c.body;
    std::vector<json::object> rows;
    for (auto& r : all.as_array()) {
      if (req->where.matches(r.as_object())) {
        rows.push_back(r.as_object());
      }
    }
    std::sort(rows.begin(), rows.end(), [&](const json::object& a, const json::object& b) {
      return req->order.compare(a, b) < 0;
    });
    std::map<std::string, json::value> out;
    for (std::size_t i = req->offset; i < rows.size(); ++i) {
      if (req->limit && out.size() >= req->limit) {
        break;
      }
      out[std::string{rows[i].at("id").as_string()}] = req->proj.apply(rows[i]);
    }
    return out;
  }

  std::string put_object(const std::string& o) {
    json::object doc;
    doc["kind"] = rng_() % 3 ? "page" : "note";
    doc["rank"] = static_cast<int>(rng_() % 9);
    auto r = http(any_port(), "PUT", "/v1/spaces/t/objects/" + o, json::serialize(doc),
                  {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.status == 200 ? std::string{r.json().as_object()["versionId"].as_string()} : "";
  }

  static std::string dump(const std::map<std::string, json::value>& w) {
    std::string out;
    for (auto& [id, doc] : w) {
      out += json::serialize(doc) + " ";
    }
    return out;
  }

  std::vector<std::uint16_t> ports_;
  std::mt19937 rng_;
  std::vector<std::string> objects_;
  std::vector<entry> entries_;
  int frames_ = 0;
};

class WindowedPropertyOneNode : public ::testing::TestWithParam<unsigned> {};

TEST_P(WindowedPropertyOneNode, EveryWindowEqualsAFreshQueryAfterEveryWrite) {
  temp_dir dir;
  auto node = start_node(dir.path());
  ASSERT_TRUE(node);
  property_run run{{node->http_port()}, GetParam()};
  run.seed({"o1", "o2", "o3"});
  auto cases = windows_for("o1");
  auto more = windows_for("o2");
  cases.insert(cases.end(), more.begin(), more.begin() + 2);
  run.open(cases);
  for (int step = 0; step < 400; ++step) {
    run.write();
    run.check(step);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
  EXPECT_GT(run.frames(), 160);
}

INSTANTIATE_TEST_SUITE_P(Seeds, WindowedPropertyOneNode, ::testing::Values(1u, 2u, 3u));

TEST(WindowedPropertyCluster, RemoteOwnersAndTheSpaceWideMergeStayExact) {
  cluster3 cl;
  std::vector<std::uint16_t> ports{cl.port(0), cl.port(1), cl.port(2)};
  property_run run{ports, 7};
  // One object owned by each member, so every window and the merge cross nodes.
  std::vector<std::string> objects{cl.object_owned_by(0, "w"), cl.object_owned_by(1, "w"),
                                   cl.object_owned_by(2, "w")};
  run.seed(objects);
  auto cases = windows_for(objects[1]);
  run.open(cases);
  for (int step = 0; step < 150; ++step) {
    run.write();
    run.check(step);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
  EXPECT_GT(run.frames(), 60);
}

}  // namespace
}  // namespace weir::test

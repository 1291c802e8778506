// Change capture on store.backend: postgres (store/postgres_change_reader): rows that another
// program writes to weir_records with plain SQL reach subscribers (windowed, Arc hub, direct SSE)
// like writes through Weir —
// inserts as added, updates as updated, deletes as removed, one transaction as one change, with
// versionIds that keep growing in the unit — while Weir's own writes are not delivered twice;
// and when the member reading the replication stream is killed, another takes over and resumes
// from the slot's confirmed position, missing nothing and doubling nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <boost/json.hpp>

#include "cluster_support.hpp"
#include "pg_instance.hpp"
#include "sse_test_support.hpp"
#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct ChangeCapture : ::testing::Test {
  void SetUp() override { ASSERT_TRUE(pg.ok()) << pg.error(); }
  pg_instance pg;
  temp_dir dir;
};

/// changeCapture of /cluster/health on `port` once some member reads the stream (null if
/// none does within `timeout`).
json::value wait_reader(std::uint16_t port, std::chrono::milliseconds timeout = 15s) {
  auto deadline = clock_type::now() + timeout;
  while (clock_type::now() < deadline) {
    auto r = http(port, "GET", "/cluster/health");
    if (r.status == 200 || r.status == 503) {
      auto h = r.json();
      const auto& c = h.at("changeCapture");
      if (c.at("reader").is_string()) {
        return c;
      }
    }
    std::this_thread::sleep_for(50ms);
  }
  return nullptr;
}

/// The index of the member of `cl` that reads the replication stream (-1 if none does soon).
int reader_of(cluster3& cl) {
  auto capture = wait_reader(cl.port(0));
  if (!capture.is_object()) {
    return -1;
  }
  for (int i = 0; i < cluster3::n; ++i) {
    if (capture.at("reader") == json::value(cl.id(i))) {
      return i;
    }
  }
  return -1;
}

std::string insert_sql(const std::string& object, const std::string& id, const std::string& doc) {
  return "INSERT INTO weir_records (space, object, dataset, id, doc, version) VALUES ('t', '" +
         object + "', 'items', '" + id + "', '" + doc + "', 0)";
}

/// The ids of `list` ("added", "updated", "removed") in one changes event.
std::vector<std::string> ids_in(const json::object& ev, const char* list) {
  std::vector<std::string> out;
  if (const auto* l = ev.if_contains(list)) {
    for (const auto& r : l->as_array()) {
      out.emplace_back(r.as_object().at("id").as_string());
    }
  }
  return out;
}

/// The next `changes` frame's single event.
std::optional<json::object> next_event(windowed_stream& s, std::chrono::milliseconds timeout) {
  auto f = s.next(timeout);
  if (!f) {
    return std::nullopt;
  }
  EXPECT_EQ(f->event, "changes") << f->raw;
  s.apply(*f);
  EXPECT_EQ(f->data.as_array().size(), 1u) << f->raw;
  return f->data.as_array().front().as_object();
}

TEST_F(ChangeCapture, RowsWrittenWithPlainSqlReachSubscribersAndWeirsOwnWritesComeOnce) {
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  auto capture = wait_reader(port);
  ASSERT_TRUE(capture.is_object()) << "no member reads the replication stream";
  EXPECT_EQ(capture.at("enabled"), true);
  EXPECT_EQ(capture.at("reading"), true);
  auto v1 = put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  windowed_stream s{port, "t", "object", R"({"objectId":"o1","dataset":"items","sort":["n"]})"};
  s.open();
  ASSERT_EQ(s.window().size(), 1u);
  // The same rows on the Arc hub and on a direct SSE stream of the query T.Items.All.
  ws_client hub{port};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", "o1"}}, 1, "full");
  hub.read_json();
  sse_client::options direct_opts;
  direct_opts.headers = {{"Accept", "text/event-stream"}};
  direct_opts.target = "/api/t/items?obj=o1";
  sse_client direct{port, direct_opts};
  ASSERT_EQ(direct.status(), 200u);
  direct.read_json();
  auto has_row = [](const json::value& data, const std::string& id, const char* key,
                    const json::value& value) {
    if (!data.is_array()) {
      return false;
    }
    for (const auto& r : data.as_array()) {
      if (r.at("id") == json::value(id) && r.as_object().if_contains(key) && r.at(key) == value) {
        return true;
      }
    }
    return false;
  };

  // An insert by another program: added, stamped with the unit's next versionId.
  pg.sql(insert_sql("o1", "b", R"({"n": 2, "by": "sql"})"));
  auto ev = next_event(s, 10s);
  ASSERT_TRUE(ev) << "the SQL insert did not reach the subscriber";
  EXPECT_EQ(ids_in(*ev, "added"), std::vector<std::string>{"b"});
  auto v2 = std::string{ev->at("versionId").as_string()};
  EXPECT_GT(v2, v1);
  const auto& doc = s.window().at("b").as_object();
  EXPECT_EQ(doc.at("id"), "b");
  EXPECT_EQ(doc.at("by"), "sql");
  EXPECT_EQ(doc.at("_ver").at("id"), json::value(v2));
  auto hub_frame = hub.read_until([&](const json::object& f) {
    return f.contains("payload") && has_row(f.at("payload").at("data"), "b", "by", "sql");
  });
  EXPECT_FALSE(hub_frame.empty()) << "the hub subscriber did not get the SQL insert";
  auto direct_events = direct.read_through(
      [&](const json::object& f) {
        return f.contains("data") && has_row(f.at("data"), "b", "by", "sql");
      },
      10s);
  ASSERT_FALSE(direct_events.empty()) << "the direct SSE subscriber did not get the SQL insert";
  // The unit's sequence in PostgreSQL follows, so versionIds keep growing after a restart.
  EXPECT_EQ(pg.sql("SELECT seq FROM weir_units WHERE space = 't' AND object = 'o1'"), "2");

  // An update: updated, with the whole new document.
  pg.sql("UPDATE weir_records SET doc = jsonb_set(doc, '{n}', '5') WHERE id = 'a'");
  ev = next_event(s, 10s);
  ASSERT_TRUE(ev);
  EXPECT_EQ(ids_in(*ev, "updated"), std::vector<std::string>{"a"});
  EXPECT_EQ(s.window().at("a").at("n"), 5);
  EXPECT_GT(std::string{ev->at("versionId").as_string()}, v2);

  // One transaction that inserts two rows and deletes one: one change.
  pg.sql("BEGIN; " + insert_sql("o1", "c", R"({"n": 3})") + "; " +
         insert_sql("o1", "d", R"({"n": 4})") +
         "; DELETE FROM weir_records WHERE id = 'b'; COMMIT");
  ev = next_event(s, 10s);
  ASSERT_TRUE(ev);
  auto added = ids_in(*ev, "added");
  std::sort(added.begin(), added.end());
  EXPECT_EQ(added, (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(ids_in(*ev, "removed"), std::vector<std::string>{"b"});

  // A write through Weir arrives once: the reader skips Weir's own transactions (it counts the
  // three of the other program, and none of Weir's).
  put_record(port, "t", "o1", "items", "e", R"({"n":6})");
  ev = next_event(s, 5s);
  ASSERT_TRUE(ev);
  EXPECT_EQ(ids_in(*ev, "added"), std::vector<std::string>{"e"});
  auto extra = s.next(1500ms);
  EXPECT_FALSE(extra) << extra->raw;
  auto after = wait_reader(port);
  EXPECT_EQ(after.at("transactions"), 3) << json::serialize(after);
  EXPECT_TRUE(after.at("appliedLsn").is_string());
  EXPECT_TRUE(after.at("lagBytes").is_number()) << json::serialize(after);

  // What the subscriber holds is what PostgreSQL holds, and a fresh query agrees.
  auto fresh = windowed_query(port, "t", "object", R"({"objectId":"o1","dataset":"items"})");
  EXPECT_EQ(by_record_id(fresh.json().at("records")), s.window());
  EXPECT_EQ(pg.sql("SELECT string_agg(id, ',' ORDER BY id) FROM weir_records WHERE object = 'o1'"),
            "a,c,d,e");
}

TEST_F(ChangeCapture, RowsWeirCannotServeAreSkippedByCaptureAndByLoads) {
  // Issue 22: rows are inputs. PostgreSQL's jsonb takes 1e400, a 500-digit integer and any
  // depth; Weir skips such rows (counted, logged) and serves the rest, through change capture
  // and when a unit loads.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  ASSERT_TRUE(wait_reader(port).is_object());
  std::string deep;
  for (int i = 0; i < 70; ++i) {
    deep += R"({"a": )";
  }
  deep += "1" + std::string(70, '}');
  auto hostile_rows = [&](const std::string& obj) {
    pg.sql("BEGIN; " + insert_sql(obj, "inf", R"({"n": 1e400})") + "; " +
           insert_sql(obj, "long", R"({"n": )" + std::string(500, '9') + "}") + "; " +
           insert_sql(obj, "deep", deep) + "; " +
           insert_sql(obj, "renamed", R"({"id": "zzz", "n": 2})") + "; " +
           insert_sql(obj, "ok", R"({"n": 1})") + "; COMMIT");
  };
  // Through change capture, into a unit a subscriber holds.
  put_record(port, "t", "cc", "items", "first", R"({"n":0})");
  ws_client hub{port};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", "cc"}}, 1, "full");
  hub.read_json();
  hostile_rows("cc");
  auto frame = hub.read_until(
      [](const json::object& f) {
        if (!f.contains("payload") || !f.at("payload").at("data").is_array()) {
          return false;
        }
        for (const auto& r : f.at("payload").at("data").as_array()) {
          if (r.at("id") == json::value("ok")) {
            return true;
          }
        }
        return false;
      },
      10s);
  ASSERT_FALSE(frame.empty()) << "the good row of the transaction did not arrive";
  std::set<std::string> ids;
  for (const auto& r : frame.at("payload").at("data").as_array()) {
    ids.insert(std::string{r.at("id").as_string()});
  }
  EXPECT_EQ(ids, (std::set<std::string>{"first", "ok", "renamed"}));
  // Through a unit load (nobody held the unit when the rows were written).
  hostile_rows("cold");
  auto r = http(port, "POST", "/v1/spaces/t/query",
                R"({"objectId":"cold","dataset":"items","sort":["n"]})",
                {{"Content-Type", "application/json"}});
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.body.find("Infinity"), std::string::npos);
  std::set<std::string> cold;
  auto body = r.json();
  for (const auto& rec : body.at("records").as_array()) {
    cold.insert(std::string{rec.at("id").as_string()});
  }
  EXPECT_EQ(cold, (std::set<std::string>{"ok", "renamed"}));
  auto metrics = http(port, "GET", "/metrics").body;
  auto at = metrics.find("\nweir_records_skipped_total ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stoi(metrics.substr(at + 28)), 6);
  EXPECT_EQ(http(port, "GET", "/readyz").status, 200u);
}

TEST_F(ChangeCapture, AnotherMemberTakesOverWhenTheReaderIsKilledAndNothingIsMissedOrDoubled) {
  cluster3 cl{"", true, pg.store_yaml()};
  int reader = reader_of(cl);
  ASSERT_GE(reader, 0) << "no member reads the replication stream";
  // The subscriber and the unit's owner are the two other members: killing the reader touches
  // neither.
  int owner = (reader + 1) % cluster3::n;
  int watcher = (reader + 2) % cluster3::n;
  auto obj = cl.object_owned_by(owner, "cap");
  put_record(cl.port(owner), "t", obj, "items", "seed", R"({"n":0})");
  windowed_stream s{cl.port(watcher), "t", "object",
                    R"({"objectId":")" + obj + R"(","dataset":"items","sort":["n"]})"};
  s.open();
  // Before the kill: the reader delivers.
  pg.sql(insert_sql(obj, "before", R"({"n": 1})"));
  auto ev = next_event(s, 10s);
  ASSERT_TRUE(ev) << "no change before the kill";
  EXPECT_EQ(ids_in(*ev, "added"), std::vector<std::string>{"before"});

  cl.kill(reader);
  auto killed_at = clock_type::now();
  constexpr int rows = 5;
  for (int i = 1; i <= rows; ++i) {
    pg.sql(insert_sql(obj, "r" + std::to_string(i), R"({"n": )" + std::to_string(10 + i) + "}"));
  }
  std::map<std::string, int> added;
  std::optional<clock_type::duration> first_after_kill;
  auto deadline = clock_type::now() + 30s;
  while (static_cast<int>(added.size()) < rows && clock_type::now() < deadline) {
    auto f = s.next(1s);
    if (!f) {
      continue;
    }
    ASSERT_EQ(f->event, "changes") << f->raw;
    s.apply(*f);
    for (const auto& e : f->data.as_array()) {
      for (const auto& id : ids_in(e.as_object(), "added")) {
        ++added[id];
        if (!first_after_kill) {
          first_after_kill = clock_type::now() - killed_at;
        }
      }
    }
  }
  ASSERT_EQ(static_cast<int>(added.size()), rows) << "rows written after the kill were missed";
  std::printf(
      "first change captured after the reader was killed: %lld ms\n",
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(*first_after_kill).count()));
  // Nothing twice, even what the old reader may have delivered without confirming it.
  while (auto f = s.next(1500ms)) {
    s.apply(*f);
    for (const auto& e : f->data.as_array()) {
      for (const auto& id : ids_in(e.as_object(), "added")) {
        ++added[id];
      }
    }
  }
  for (const auto& [id, count] : added) {
    EXPECT_EQ(count, 1) << id;
  }
  EXPECT_EQ(s.window().size(), static_cast<std::size_t>(rows + 2));
  // A survivor reads now, and says so.
  auto now_reading = wait_reader(cl.port(watcher));
  ASSERT_TRUE(now_reading.is_object());
  EXPECT_NE(now_reading.at("reader"), json::value(cl.id(reader)));
}

TEST_F(ChangeCapture, ATransactionTouchingMoreHeldUnitsThanTheStoreQueueHoldsIsApplied) {
  // Each unit held here reads its changed rows back through the store's queue. Before the
  // refreshes were paced, one transaction over more held units than the queue holds overflowed
  // it, was refused, read again from the same position and refused again: capture stopped.
  auto yaml = pg.store_yaml();  // "store: { backend: postgres, … }"
  yaml.insert(yaml.find('{') + 1, " queueCapacity: 8,");
  auto node = start_node(dir.path(), yaml);
  ASSERT_TRUE(node);
  auto port = node->http_port();
  const int units = 120;
  for (int i = 0; i < units; ++i) {
    put_record(port, "t", "u" + std::to_string(i), "items", "r", R"({"n":0})");
  }
  ASSERT_FALSE(wait_reader(port).is_null());
  pg.sql("UPDATE weir_records SET doc = jsonb_set(doc, '{n}', '7') WHERE space = 't'");
  auto n_of = [port](int i) {
    auto r = http(port, "POST", "/v1/spaces/t/query",
                  R"({"objectId":"u)" + std::to_string(i) + R"(","dataset":"items"})");
    auto doc = r.json();
    const auto& records = doc.at("records").as_array();
    return records.empty() ? -1 : records.front().at("n").to_number<int>();
  };
  int applied = 0;
  for (auto until = clock_type::now() + 30s; clock_type::now() < until;) {
    applied = 0;
    for (int i = 0; i < units; ++i) {
      applied += n_of(i) == 7;
    }
    if (applied == units) {
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(applied, units) << "units still serving what they held before the transaction";
  // And capture goes on: a later row reaches the units too.
  pg.sql(insert_sql("u0", "later", R"({"n": 1})"));
  bool later = false;
  for (auto until = clock_type::now() + 10s; !later && clock_type::now() < until;) {
    auto r = http(port, "POST", "/v1/spaces/t/query", R"({"objectId":"u0","dataset":"items"})");
    later = r.json().at("records").as_array().size() == 2;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(later);
}

/// A counter of the node's /metrics (-1 when absent).
double capture_metric(std::uint16_t port, const std::string& name) {
  auto body = http(port, "GET", "/metrics").body;
  auto at = body.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(body.substr(at + name.size() + 2));
}

/// The records of `object`'s dataset `items` as a fresh windowed query answers them (the held
/// unit's memory), with the total.
json::object items_of(std::uint16_t port, const std::string& object) {
  auto r = http(port, "POST", "/v1/spaces/t/query",
                R"({"objectId":")" + object +
                    R"(","dataset":"items","sort":["id"],"limit":5,"includeTotal":true})");
  return r.json().as_object();
}

TEST_F(ChangeCapture, ATransactionOfMoreRowsOfADatasetThanTheReaderKeepsIsReadAgainWhole) {
  // The reader keeps at most 1,000 row keys of one dataset of a unit per transaction; past
  // that the owner reads the dataset again whole: added, changed and removed rows alike.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  for (const char* id : {"a", "b", "c"}) {
    put_record(port, "t", "o1", "items", id, R"({"n":1})");
  }
  ASSERT_FALSE(wait_reader(port).is_null());
  ASSERT_EQ(items_of(port, "o1").at("total"), 3);
  pg.sql(
      "INSERT INTO weir_records (space, object, dataset, id, doc, version) "
      "SELECT 't', 'o1', 'items', 'r' || lpad(i::text, 5, '0'), jsonb_build_object('n', i), 0 "
      "FROM generate_series(1, 1500) AS i; "
      "UPDATE weir_records SET doc = '{\"n\": 9}' WHERE object = 'o1' AND id = 'a'; "
      "DELETE FROM weir_records WHERE object = 'o1' AND id = 'b'");
  json::object got;
  for (auto until = clock_type::now() + 30s; clock_type::now() < until;) {
    got = items_of(port, "o1");
    if (got.at("total") == 1502) {
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(got.at("total"), 1502) << json::serialize(got);
  const auto& first = got.at("records").as_array();
  ASSERT_GE(first.size(), 2u);
  EXPECT_EQ(first[0].at("id"), "a");
  EXPECT_EQ(first[0].at("n"), 9);
  EXPECT_EQ(first[1].at("id"), "c");  // b is gone
  EXPECT_GE(capture_metric(port, "weir_change_capture_whole_datasets_total"), 1);
  EXPECT_EQ(capture_metric(port, "weir_change_capture_whole_nodes_total"), 0);
  // Capture goes on row by row afterwards.
  pg.sql(insert_sql("o1", "later", R"({"n": 1})"));
  bool later = false;
  for (auto until = clock_type::now() + 10s; !later && clock_type::now() < until;) {
    later = items_of(port, "o1").at("total") == 1503;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(later);
}

TEST_F(ChangeCapture, ATransactionOverMoreDatasetsThanTheReaderKeepsRefreshesEveryHeldUnit) {
  // Past 100,000 datasets the reader keeps nothing of a transaction but the fact; every member
  // then reads every unit it holds again whole.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  put_record(port, "t", "o2", "items", "a", R"({"n":1})");
  ASSERT_FALSE(wait_reader(port).is_null());
  pg.sql(
      "INSERT INTO weir_records (space, object, dataset, id, doc, version) "
      "SELECT 't', 'x' || i, 'items', 'r', '{}', 0 FROM generate_series(1, 100001) AS i; "
      "UPDATE weir_records SET doc = '{\"n\": 2}' WHERE object = 'o1' AND id = 'a'; "
      "DELETE FROM weir_records WHERE object = 'o2' AND id = 'a'");
  bool applied = false;
  for (auto until = clock_type::now() + 30s; !applied && clock_type::now() < until;) {
    auto o1 = items_of(port, "o1");
    auto o2 = items_of(port, "o2");
    applied = o1.at("records").as_array().size() == 1 &&
              o1.at("records").as_array()[0].at("n") == 2 && o2.at("total") == 0;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(applied) << json::serialize(items_of(port, "o1")) << " "
                       << json::serialize(items_of(port, "o2"));
  EXPECT_GE(capture_metric(port, "weir_change_capture_whole_nodes_total"), 1);
  // The objects the transaction created are read when first used, as any unit.
  EXPECT_EQ(items_of(port, "x77").at("total"), 1);
}

TEST_F(ChangeCapture, ATruncateOfTheRecordsTableRemovesWhatHeldUnitsHeld) {
  // TRUNCATE names no rows: every member reads every unit it holds again, so a subscriber sees
  // the records removed, and rows inserted in the same transaction arrive.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  put_record(port, "t", "o1", "items", "b", R"({"n":1})");
  put_record(port, "t", "o2", "items", "a", R"({"n":1})");
  ASSERT_FALSE(wait_reader(port).is_null());
  windowed_stream s{port, "t", "object",
                    R"({"objectId":"o1","dataset":"items","sort":["id"],"limit":10})"};
  s.open();
  ASSERT_EQ(s.window().size(), 2u);
  ASSERT_EQ(items_of(port, "o2").at("total"), 1);
  pg.sql("BEGIN; TRUNCATE weir_records; " + insert_sql("o1", "c", R"({"n": 3})") + "; COMMIT");
  std::set<std::string> removed, added;
  for (auto until = clock_type::now() + 15s;
       (removed.size() < 2 || added.empty()) && clock_type::now() < until;) {
    auto ev = next_event(s, 500ms);
    if (!ev) {
      continue;
    }
    for (auto& id : ids_in(*ev, "removed")) {
      removed.insert(id);
    }
    for (auto& id : ids_in(*ev, "added")) {
      added.insert(id);
    }
  }
  EXPECT_EQ(removed, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(added, (std::set<std::string>{"c"}));
  ASSERT_EQ(s.window().size(), 1u);
  EXPECT_TRUE(s.window().count("c"));
  auto o1 = items_of(port, "o1");
  ASSERT_EQ(o1.at("total"), 1) << json::serialize(o1);
  EXPECT_EQ(o1.at("records").as_array()[0].at("id"), "c");
  // A unit held without a subscriber is read again too.
  EXPECT_EQ(items_of(port, "o2").at("total"), 0);
  EXPECT_GE(capture_metric(port, "weir_change_capture_whole_nodes_total"), 1);
  // Writes through Weir and capture go on afterwards.
  put_record(port, "t", "o2", "items", "z", R"({"n":1})");
  EXPECT_EQ(items_of(port, "o2").at("total"), 1);
}

TEST_F(ChangeCapture, ARowNoUnitCanHoldChangesNothingElse) {
  // A space Weir never serves (empty): the row names no unit anyone holds. It is neither taken
  // for a refresh of every held unit nor a reason to stop capture.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "a", R"({"n":1})");
  ASSERT_FALSE(wait_reader(port).is_null());
  pg.sql(
      "INSERT INTO weir_records (space, object, dataset, id, doc, version) "
      "VALUES ('', 'o1', 'items', 'x', '{}', 0), ('', '', 'items', 'y', '{}', 0)");
  pg.sql(insert_sql("o1", "after", R"({"n": 2})"));
  bool after = false;
  for (auto until = clock_type::now() + 10s; !after && clock_type::now() < until;) {
    after = items_of(port, "o1").at("total") == 2;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(after);
  EXPECT_EQ(capture_metric(port, "weir_change_capture_whole_nodes_total"), 0);
  EXPECT_EQ(capture_metric(port, "weir_change_capture_whole_datasets_total"), 0);
}

TEST_F(ChangeCapture, WholeReadsReachAUnitsOwnerOnAnotherMember) {
  // The reader hands a whole dataset, and then "every held unit", to the member that owns the
  // unit; a subscriber on the third member sees what each transaction did.
  cluster3 cl{"", true, pg.store_yaml()};
  int reader = reader_of(cl);
  ASSERT_GE(reader, 0) << "no member reads the replication stream";
  int owner = (reader + 1) % cluster3::n;
  int watcher = (reader + 2) % cluster3::n;
  auto obj = cl.object_owned_by(owner, "whole");
  put_record(cl.port(owner), "t", obj, "items", "a", R"({"n":0})");
  windowed_stream s{cl.port(watcher), "t", "object",
                    R"({"objectId":")" + obj + R"(","dataset":"items","sort":["n"],"limit":3})"};
  s.open();
  ASSERT_EQ(s.window().size(), 1u);
  auto n_of_a = [&] {
    auto it = s.window().find("a");
    return it == s.window().end() ? -100 : it->second.at("n").to_number<int>();
  };
  auto wait_a = [&](int n) {
    for (auto until = clock_type::now() + 30s; n_of_a() != n && clock_type::now() < until;) {
      if (auto f = s.next(500ms)) {
        s.apply(*f);
      }
    }
    return n_of_a() == n;
  };
  // 1,200 rows of the one dataset, and a's change, in one transaction: read again whole.
  pg.sql(
      "INSERT INTO weir_records (space, object, dataset, id, doc, version) "
      "SELECT 't', '" +
      obj +
      "', 'items', 'r' || i, jsonb_build_object('n', 100 + i), 0 "
      "FROM generate_series(1, 1200) AS i; "
      "UPDATE weir_records SET doc = '{\"n\": -1}' WHERE object = '" +
      obj + "' AND id = 'a'");
  EXPECT_TRUE(wait_a(-1)) << "the owner did not read the dataset again";
  EXPECT_GE(capture_metric(cl.port(reader), "weir_change_capture_whole_datasets_total"), 1);
  // 100,001 datasets and a's change: every member reads every unit it holds again.
  pg.sql(
      "INSERT INTO weir_records (space, object, dataset, id, doc, version) "
      "SELECT 't', 'x' || i, 'items', 'r', '{}', 0 FROM generate_series(1, 100001) AS i; "
      "UPDATE weir_records SET doc = '{\"n\": -2}' WHERE object = '" +
      obj + "' AND id = 'a'");
  EXPECT_TRUE(wait_a(-2)) << "the owner did not read its units again";
  EXPECT_GE(capture_metric(cl.port(reader), "weir_change_capture_whole_nodes_total"), 1);
  auto total = http(cl.port(watcher), "POST", "/v1/spaces/t/query",
                    R"({"objectId":")" + obj + R"(","dataset":"items","includeTotal":true})");
  EXPECT_EQ(total.json().at("total"), 1201);
}

TEST_F(ChangeCapture, CanBeTurnedOff) {
  auto node = start_node(dir.path(), "store: { backend: postgres, postgres: { url: \"" + pg.url() +
                                         "\", changeCapture: false } }\n");
  ASSERT_TRUE(node);
  auto h = http(node->http_port(), "GET", "/cluster/health").json();
  const auto& c = h.at("changeCapture");
  EXPECT_EQ(c.at("enabled"), false);
  EXPECT_EQ(c.at("reader"), nullptr);
  // No slot was made for a reader that never ran.
  EXPECT_EQ(pg.sql("SELECT count(*) FROM pg_replication_slots"), "0");
}

// Weir and another program writing the same records at once: whatever the interleaving, once
// both stop the owner holds exactly what PostgreSQL holds (the later commit of each record), so
// a subscriber's window and a fresh query equal the table.
TEST_F(ChangeCapture, ConcurrentWritesByWeirAndSqlConvergeOnWhatPostgresHolds) {
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  ASSERT_TRUE(wait_reader(port).is_object());
  constexpr int records = 6, rounds = 40;
  for (int i = 0; i < records; ++i) {
    put_record(port, "t", "o1", "items", "k" + std::to_string(i), R"({"w":0})");
  }
  windowed_stream s{port, "t", "object", R"({"objectId":"o1","dataset":"items"})"};
  s.open();
  std::thread weir_writer{[&] {
    for (int k = 1; k <= rounds; ++k) {
      put_record(port, "t", "o1", "items", "k" + std::to_string(k % records),
                 R"({"w":)" + std::to_string(k) + "}");
    }
  }};
  for (int k = 1; k <= rounds; ++k) {
    pg.sql("UPDATE weir_records SET doc = '{\"s\": " + std::to_string(k) +
           "}' WHERE object = 'o1' AND id = 'k" + std::to_string((k * 7) % records) + "'");
  }
  weir_writer.join();
  auto table = [&] {
    std::map<std::string, json::value> out;
    auto text = pg.sql(
        "SELECT coalesce(json_agg(json_build_object('id', id, 'doc', doc - '_ver' - 'id')), "
        "'[]') FROM weir_records WHERE object = 'o1'");
    auto rows = json::parse(text);
    for (auto& r : rows.as_array()) {
      out[std::string{r.at("id").as_string()}] = r.at("doc");
    }
    return out;
  };
  auto held = [](const std::map<std::string, json::value>& window) {
    std::map<std::string, json::value> out;
    for (auto [id, doc] : window) {
      doc.as_object().erase("_ver");
      doc.as_object().erase("id");
      out[id] = doc;
    }
    return out;
  };
  auto expect = table();
  auto deadline = clock_type::now() + 15s;
  while (held(s.window()) != expect && clock_type::now() < deadline) {
    if (auto f = s.next(500ms)) {
      s.apply(*f);
    }
  }
  EXPECT_EQ(held(s.window()), expect);
  auto fresh = windowed_query(port, "t", "object", R"({"objectId":"o1","dataset":"items"})");
  EXPECT_EQ(held(by_record_id(fresh.json().at("records"))), expect);
}

// $inc through every member and increments by another program with plain SQL, all at once on
// one record: none is lost. Owners serialize the members' PATCHes; PostgreSQL's row lock
// serializes the owner's commit and the other program's UPDATE, and a PATCH whose record
// another program changed meanwhile is applied again to what the row holds. Every member's
// subscribers end on the sum.
TEST_F(ChangeCapture, IncrementsThroughEveryMemberAndFromSqlAllCount) {
  cluster3 cl{"", true, pg.store_yaml()};
  ASSERT_TRUE(wait_reader(cl.port(0)).is_object());
  auto obj = cl.object_owned_by(1, "inc");
  ASSERT_FALSE(put_record(cl.port(0), "t", obj, "items", "counter", R"({"n":0})").empty());
  put_record(cl.port(0), "t", obj, "items", "other", R"({"n":1000})");
  // Unbounded windows, and one sorted window of 2 (kept by an index on the owner, where a
  // record published otherwise than a later write was staged on must still move exactly).
  std::vector<std::string> bodies;
  std::vector<std::unique_ptr<windowed_stream>> watchers;
  for (int i = 0; i < cluster3::n; ++i) {
    bodies.push_back(i == 0 ? R"({"objectId":")" + obj +
                                  R"(","dataset":"items","sort":["-n"],"limit":2})"
                            : R"({"objectId":")" + obj + R"(","dataset":"items"})");
    watchers.push_back(std::make_unique<windowed_stream>(cl.port(i), "t", "object", bodies.back()));
    watchers.back()->open();
  }
  constexpr int per_writer = 15;
  std::atomic<int> failed{0};
  std::vector<std::thread> writers;
  for (int i = 0; i < cluster3::n; ++i) {
    writers.emplace_back([&, i] {
      for (int k = 0; k < per_writer; ++k) {
        auto r = http(cl.port(i), "PATCH",
                      "/v1/spaces/t/objects/" + obj + "/datasets/items/records/counter",
                      R"({"$inc":{"n":1}})");
        if (r.status != 200) {
          ++failed;
        }
      }
    });
  }
  writers.emplace_back([&] {
    for (int k = 0; k < per_writer; ++k) {
      pg.sql(
          "UPDATE weir_records SET doc = jsonb_set(doc, '{n}', to_jsonb((doc->>'n')::int + 1)) "
          "WHERE object = '" +
          obj + "' AND id = 'counter'");
    }
  });
  for (auto& t : writers) {
    t.join();
  }
  EXPECT_EQ(failed.load(), 0);
  constexpr int total = (cluster3::n + 1) * per_writer;
  EXPECT_EQ(pg.sql("SELECT doc->>'n' FROM weir_records WHERE id = 'counter'"),
            std::to_string(total));
  for (int i = 0; i < cluster3::n; ++i) {
    auto& s = *watchers[i];
    auto deadline = clock_type::now() + 15s;
    auto n_of = [&] {
      auto it = s.window().find("counter");
      return it == s.window().end() ? json::value(nullptr) : it->second.at("n");
    };
    while (n_of() != json::value(total) && clock_type::now() < deadline) {
      if (auto f = s.next(500ms)) {
        s.apply(*f);
      }
    }
    EXPECT_EQ(n_of(), json::value(total)) << "member " << cl.id(i);
    auto fresh = windowed_query(cl.port(i), "t", "object", bodies[i]);
    EXPECT_EQ(by_record_id(fresh.json().at("records")), s.window()) << "member " << cl.id(i);
  }
}

}  // namespace
}  // namespace weir::test

// Faults of the database under a node on store.backend: postgres (issue 23): after PostgreSQL
// restarts, the first unit load, lookup and change-capture re-read run on healed connections
// (no caller sees a failure a fresh connection would not have); while it is down, a
// subscription that cannot get its baseline ends with its protocol's error at once instead of
// hanging, and /cluster/health and /metrics say why; rows that are not records are skipped
// with their unit, id and reason listed in /cluster/health; and a commit whose connection broke
// during its COMMIT is never answered as refused.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <libpq-fe.h>
#include <boost/json.hpp>

#include "core/rendezvous.hpp"
#include "pg_instance.hpp"
#include "store/postgres_store.hpp"
#include "test_support.hpp"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

/// Waits (up to 10 s) until a session of the database sleeps in a trigger (pg_sleep): a
/// commit of the node's is under way and held there.
bool in_trigger_sleep(const pg_instance& pg) {
  for (auto until = clock_type::now() + 10s; clock_type::now() < until;) {
    if (pg.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'") != "0") {
      return true;
    }
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

struct StoreFaults : ::testing::Test {
  void SetUp() override { ASSERT_TRUE(pg.ok()) << pg.error(); }
  pg_instance pg;
  temp_dir dir;
};

std::string insert_sql(const std::string& object, const std::string& id, const std::string& doc) {
  return "INSERT INTO weir_records (space, object, dataset, id, doc, version) VALUES ('t', '" +
         object + "', 'items', '" + id + "', '" + doc + "', 0)";
}

/// The value of an unlabelled sample in a /metrics page (-1 when absent).
long long metric(const std::string& page, const std::string& name) {
  auto at = page.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stoll(page.substr(at + name.size() + 2));
}

/// Waits until some member reads the change stream (its replication slot exists from then on).
bool wait_reader(std::uint16_t port, std::chrono::milliseconds timeout = 15s) {
  auto deadline = clock_type::now() + timeout;
  while (clock_type::now() < deadline) {
    auto r = http(port, "GET", "/cluster/health");
    if (r.status == 200 || r.status == 503) {
      if (r.json().at("changeCapture").at("reader").is_string()) {
        return true;
      }
    }
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

/// Whether the snapshot frame `f` (full mode) holds the record ids `ids` exactly.
bool holds(const json::object& f, const std::set<std::string>& ids) {
  const auto* p = f.if_contains("payload");
  const auto* data = p && p->is_object() ? p->as_object().if_contains("data") : nullptr;
  if (!data || !data->is_array()) {
    return false;
  }
  std::set<std::string> got;
  for (const auto& r : data->as_array()) {
    got.insert(std::string{r.at("id").as_string()});
  }
  return got == ids;
}

TEST_F(StoreFaults, AfterADatabaseRestartTheFirstLoadLookupAndWriteSucceed) {
  // Before the fix, each idle connection learned of the restart only by failing its next
  // statement: the first unit load answered `cannot read the unit … server closed the
  // connection`, and its subscription got nothing at all.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "warm", "items", "a", R"({"n":1})");
  pg.sql(insert_sql("cold", "c1", R"({"n": 1})"));
  ASSERT_TRUE(pg.restart()) << pg.error();

  ws_client hub{port};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", "cold"}}, 1, "full");
  auto first = hub.read_json(10s);
  EXPECT_TRUE(holds(first, {"c1"})) << json::serialize(first);

  auto r = http(port, "PUT", "/v1/spaces/t/objects/other/datasets/items/records/x", R"({"n":2})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(windowed_query(port, "t", "object", R"({"objectId":"cold","dataset":"items"})").status,
            200u);

  auto health = http(port, "GET", "/cluster/health").json().as_object();
  const auto& conns = health.at("storeConnections").as_object();
  EXPECT_GE(conns.at("reconnects").as_int64(), 1) << json::serialize(health);
  EXPECT_TRUE(conns.at("error").is_null()) << json::serialize(health);
  EXPECT_GE(metric(http(port, "GET", "/metrics").body, "weir_store_reconnects_total"), 1);
}

TEST_F(StoreFaults, AfterADatabaseRestartSqlRowsReachSubscribersWithoutAWriteThroughWeir) {
  // Before the fix, the owner's re-read of a captured transaction ran on the writer's broken
  // connection and failed every time, until a write through Weir reset it.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "cc", "items", "first", R"({"n":0})");
  ws_client hub{port};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", "cc"}}, 1, "full");
  hub.read_json();
  ASSERT_TRUE(wait_reader(port));
  ASSERT_TRUE(pg.restart()) << pg.error();
  pg.sql(insert_sql("cc", "from-sql", R"({"n": 5})"));
  auto frame = hub.read_until(
      [](const json::object& f) {
        return holds(f, {"first", "from-sql"});
      },
      20s);
  EXPECT_FALSE(frame.empty()) << "a row written with SQL after the restart did not arrive";
  auto capture = http(port, "GET", "/cluster/health").json().at("changeCapture");
  EXPECT_FALSE(capture.as_object().contains("error")) << json::serialize(capture);
}

TEST_F(StoreFaults, WhileTheDatabaseIsDownASubscriptionEndsWithAnErrorAndHealthSaysWhy) {
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "warm", "items", "a", R"({"n":1})");
  pg.stop();

  // A unit nobody holds cannot be loaded. Each protocol is told, within seconds (the connect
  // to a stopped server is refused at once; a server that does not answer at all is bounded by
  // the connection's 10 s connect timeout).
  auto t0 = clock_type::now();
  ws_client hub{port};
  hub.expect_connected();
  hub.subscribe("q", "T.Items.All", {{"obj", "cold"}}, 1, "full");
  auto err = hub.read_until([](const json::object& f) { return f.at("type") == "Error"; }, 15s);
  ASSERT_FALSE(err.empty()) << "the hub subscription was left without an Error";
  EXPECT_EQ(err.at("queryId"), "q");
  EXPECT_LT(clock_type::now() - t0, 12s);

  windowed_stream w{port, "t", "object", R"({"objectId":"cold2","dataset":"items"})"};
  auto f = w.next(15s);
  if (w.status() == 200) {
    ASSERT_TRUE(f.has_value()) << "the windowed stream neither opened nor ended";
    EXPECT_EQ(f->event, "closed") << f->raw;
  } else {
    EXPECT_EQ(w.status(), 503u);
    EXPECT_EQ(w.error_body().at("error").at("code"), "server.unavailable");
  }

  auto write = http(port, "PUT", "/v1/spaces/t/objects/cold3/datasets/items/records/x", "{}");
  EXPECT_EQ(write.status, 503u) << write.body;

  auto health = http(port, "GET", "/cluster/health").json().as_object();
  EXPECT_TRUE(health.at("storeConnections").at("error").is_string()) << json::serialize(health);
  EXPECT_EQ(metric(http(port, "GET", "/metrics").body, "weir_store_unreachable"), 1);

  // Back up: the same subscription now gets its baseline, and the error clears.
  ASSERT_TRUE(pg.start()) << pg.error();
  hub.subscribe("q2", "T.Items.All", {{"obj", "cold"}}, 1, "full");
  auto snap = hub.read_until(
      [](const json::object& f) { return f.at("type") != "Error" && f.contains("payload"); }, 15s);
  EXPECT_FALSE(snap.empty());
  health = http(port, "GET", "/cluster/health").json().as_object();
  EXPECT_TRUE(health.at("storeConnections").at("error").is_null()) << json::serialize(health);
  EXPECT_EQ(http(port, "GET", "/readyz").status, 200u);
}

TEST_F(StoreFaults, RowsWithoutAnIdMemberAreServedAndRowsWeirCannotServeAreListedInHealth) {
  // Issue 23: a row whose `doc` has no `id` member (with or without a `_ver`) once stopped
  // every member that loaded its unit.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  pg.sql("BEGIN; " + insert_sql("rows", "plain", R"({"n": 1})") + "; " +
         insert_sql("rows", "versioned", R"({"n": 2, "_ver": {"id": "AAAAAAAAAAE"}})") + "; " +
         insert_sql("rows", "badver", R"({"n": 3, "_ver": 7})") + "; " +
         insert_sql("rows", "inf", R"({"n": 1e400})") + "; COMMIT");
  auto r = windowed_query(port, "t", "object", R"({"objectId":"rows","dataset":"items"})");
  ASSERT_EQ(r.status, 200u) << r.body;
  std::set<std::string> ids;
  auto body = r.json();
  for (const auto& rec : body.at("records").as_array()) {
    ids.insert(std::string{rec.at("id").as_string()});
  }
  EXPECT_TRUE(ids.count("plain") && ids.count("versioned")) << r.body;
  EXPECT_FALSE(ids.count("inf")) << r.body;

  auto health = http(port, "GET", "/cluster/health").json().as_object();
  const auto& skipped = health.at("skippedRecords").as_object();
  EXPECT_GE(skipped.at("total").as_int64(), 1);
  bool listed = false;
  for (const auto& e : skipped.at("recent").as_array()) {
    const auto& o = e.as_object();
    if (o.at("id") == "inf") {
      listed = true;
      EXPECT_EQ(o.at("object"), "rows");
      EXPECT_EQ(o.at("dataset"), "items");
      EXPECT_EQ(o.at("code"), "record.invalid_number");
      EXPECT_FALSE(o.at("reason").as_string().empty());
    }
  }
  EXPECT_TRUE(listed) << json::serialize(skipped);
  EXPECT_EQ(http(port, "GET", "/readyz").status, 200u);
}

TEST_F(StoreFaults, ACommitTheDatabaseRefusesIsAnsweredAndWritesBuiltOnItAreRefusedToo) {
  // A constraint a DBA added refuses one of Weir's writes. Before, the shard took the failed
  // commit for a failed fsync and aborted the process; a write staged on top of the refused
  // one would have been committed with its effect.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  auto path = [](const std::string& id) {
    return "/v1/spaces/t/objects/o/datasets/items/records/" + id;
  };
  put_record(port, "t", "o", "items", "c", R"({"n":0})");
  pg.sql(
      "CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
      "IF NEW.id = 'bad' THEN PERFORM pg_sleep(0.5); "
      "RAISE EXCEPTION 'records named bad are refused here'; END IF; RETURN NEW; END $$");
  pg.sql(
      "CREATE TRIGGER refuse_bad BEFORE INSERT OR UPDATE ON weir_records FOR EACH ROW "
      "EXECUTE FUNCTION refuse_bad()");
  // The batch (with `bad`) sets c.n = 1 and fails after half a second; the $inc sent while it
  // is being committed builds on it (n = 2) and goes to the store in the next group.
  auto first = std::async(std::launch::async, [&] {
    return http(port, "POST", "/v1/spaces/t/objects/o/datasets/items/records",
                R"({"upsert":[{"id":"bad"},{"id":"c","n":1}]})");
  });
  ASSERT_TRUE(in_trigger_sleep(pg)) << "the batch never reached its trigger";
  auto second = http(port, "PATCH", path("c"), R"({"$inc":{"n":1}})");
  auto refused = first.get();
  EXPECT_EQ(refused.status, 500u) << refused.body;
  EXPECT_NE(refused.body.find("store.write_failed"), std::string::npos) << refused.body;
  EXPECT_NE(refused.body.find("records named bad are refused here"), std::string::npos)
      << refused.body;
  EXPECT_EQ(second.status, 500u) << second.body;
  EXPECT_EQ(pg.sql("SELECT doc->>'n' FROM weir_records WHERE id = 'c'"), "0");
  // The node carries on from what is durable.
  auto third = http(port, "PATCH", path("c"), R"({"$inc":{"n":1}})");
  EXPECT_EQ(third.status, 200u) << third.body;
  EXPECT_EQ(pg.sql("SELECT doc->>'n' FROM weir_records WHERE id = 'c'"), "1");
  auto r = windowed_query(port, "t", "object", R"({"objectId":"o","dataset":"items"})");
  EXPECT_NE(r.body.find(R"("n":1)"), std::string::npos) << r.body;
  EXPECT_EQ(http(port, "GET", "/readyz").status, 200u);
}

TEST_F(StoreFaults, OneWriteTheDatabaseRefusesDoesNotFailTheOthersCommittedWithIt) {
  // Writes of different units queued together share one transaction. When PostgreSQL refuses
  // it for one row, the others are committed on their own, not refused with it.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "warm", "items", "w", "{}");
  pg.sql(
      "CREATE FUNCTION slow_or_bad() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
      "IF NEW.id = 'slow' THEN PERFORM pg_sleep(0.6); END IF; "
      "IF NEW.id = 'bad' THEN RAISE EXCEPTION 'records named bad are refused here'; END IF; "
      "RETURN NEW; END $$");
  pg.sql(
      "CREATE TRIGGER slow_or_bad BEFORE INSERT OR UPDATE ON weir_records FOR EACH ROW "
      "EXECUTE FUNCTION slow_or_bad()");
  auto put = [&](const std::string& object, const std::string& id) {
    return std::async(std::launch::async, [=] {
      return http(port, "PUT", "/v1/spaces/t/objects/" + object + "/datasets/items/records/" + id,
                  R"({"n":1})");
    });
  };
  auto slow = put("s", "slow");  // holds the writer while the next two queue up together
  ASSERT_TRUE(in_trigger_sleep(pg)) << "the slow write never reached its trigger";
  auto bad = put("a", "bad");
  auto good = put("b", "good");
  EXPECT_EQ(slow.get().status, 200u);
  auto b = bad.get();
  EXPECT_EQ(b.status, 500u) << b.body;
  EXPECT_NE(b.body.find("store.write_failed"), std::string::npos) << b.body;
  auto g = good.get();
  EXPECT_EQ(g.status, 200u) << g.body;
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_records WHERE id = 'good'"), "1");
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_records WHERE id = 'bad'"), "0");
}

// The store alone: a COMMIT whose connection broke under it (a deferred trigger ends the
// session at COMMIT, once) is committed again on a fresh connection; when that retry is refused
// by the fence (the owners changed meanwhile), the write is answered write.outcome_unknown —
// it might have committed — never cluster.not_owner.
TEST_F(StoreFaults, ACommitWhoseConnectionBrokeIsNeverAnsweredAsRefused) {
  auto opened = store::postgres_store::open({pg.url(), 16, false, "a", true});
  ASSERT_TRUE(opened) << opened.error().message;
  auto& st = *opened.value();
  pg.sql("INSERT INTO weir_membership (epoch, owners) VALUES (1, '{a}')");
  pg.sql("CREATE SEQUENCE cut_once");
  pg.sql(
      "CREATE FUNCTION cut_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
      "IF nextval('cut_once') = 1 THEN PERFORM pg_terminate_backend(pg_backend_pid()); "
      "PERFORM pg_sleep(5); END IF; RETURN NULL; END $$");
  pg.sql(
      "CREATE CONSTRAINT TRIGGER cut_at_commit AFTER INSERT ON weir_records "
      "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cut_at_commit()");
  auto write = [&](const std::string& object, std::uint64_t seq) {
    auto p = std::make_shared<std::promise<core::result<void>>>();
    auto f = p->get_future();
    store::write_batch b;
    b.unit = {"t", object};
    b.seq = seq;
    b.writes.push_back({"items", "r", R"({"id":"r","n":1})", {}, {}});
    EXPECT_TRUE(st.submit(std::move(b), [p](core::result<void> r) { p->set_value(std::move(r)); }));
    return f;
  };

  // As soon as the first attempt's session is cut, member b becomes the owner: the writer's
  // retry (100 ms later) is refused by the fence.
  PGconn* c = PQconnectdb(pg.url().c_str());
  ASSERT_EQ(PQstatus(c), CONNECTION_OK);
  auto pending = write("o1", 1);
  auto deadline = clock_type::now() + 10s;
  bool cut = false;
  while (!cut && clock_type::now() < deadline) {
    PGresult* r = PQexec(c, "SELECT is_called FROM cut_once");
    cut = PQresultStatus(r) == PGRES_TUPLES_OK && PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
  }
  ASSERT_TRUE(cut);
  PQclear(PQexec(c, "UPDATE weir_membership SET epoch = 2, owners = '{b}'"));
  PQfinish(c);
  auto result = pending.get();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, "write.outcome_unknown") << result.error().message;
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_records"), "0");

  // A retry that goes through answers success, and the row is there once.
  pg.sql("UPDATE weir_membership SET epoch = 3, owners = '{a}'");
  pg.sql("ALTER SEQUENCE cut_once RESTART");
  EXPECT_TRUE(write("o2", 1).get());
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_records WHERE object = 'o2'"), "1");
  st.stop();
}

TEST_F(StoreFaults, ALockAnotherProgramHoldsOnTheTablesFailsLookupsAndLoadsInBoundedTime) {
  // Before the fix the space lookup (on an I/O thread) and the unit load waited for the lock
  // for as long as the other program held it: the request hung with them.
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "warm", "items", "a", R"({"n":1})");
  PGconn* other = PQconnectdb(pg.url().c_str());
  ASSERT_EQ(PQstatus(other), CONNECTION_OK);
  PQclear(PQexec(other, "BEGIN; LOCK TABLE weir_units, weir_records IN ACCESS EXCLUSIVE MODE"));
  auto started = clock_type::now();
  auto pending = std::async(std::launch::async, [port] {
    return windowed_query(port, "never-seen", "object", R"({"objectId":"o","dataset":"items"})");
  });
  // A 2 s bound on the lookup, then 5 s on the load.
  bool answered = pending.wait_for(15s) == std::future_status::ready;
  auto took = clock_type::now() - started;
  PQclear(PQexec(other, "ROLLBACK"));
  PQfinish(other);
  ASSERT_TRUE(answered) << "the request waited for the lock";
  auto r = pending.get();
  EXPECT_EQ(r.status, 503u) << r.body;
  EXPECT_GE(took, 2s);
  std::printf(
      "[ store ] a request behind a table lock answered %d after %lld ms\n", r.status,
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  // Once the lock is gone the same request is served as usual.
  EXPECT_EQ(windowed_query(port, "t", "object", R"({"objectId":"warm","dataset":"items"})").status,
            200u);
  auto health = http(port, "GET", "/cluster/health").json().as_object();
  EXPECT_TRUE(health.at("storeConnections").as_object().at("error").is_null())
      << json::serialize(health);
}

}  // namespace
}  // namespace weir::test

// store.backend: postgres against a real PostgreSQL 15 started for the test (pg_instance): a
// write is in PostgreSQL when it is acknowledged, a node with no local data serves what an
// earlier one wrote, deletes and object deletes reach the tables, the schema is migrated once
// and recorded, a newer schema and an unreachable database refuse the start with a clear
// message, and WEIR_POSTGRES_URL overrides the configured URL.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "cluster_support.hpp"
#include "core/rendezvous.hpp"
#include "pg_instance.hpp"
#include "process_support.hpp"
#include "store/postgres_leases.hpp"
#include "store/postgres_store.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

struct PostgresStore : ::testing::Test {
  void SetUp() override { ASSERT_TRUE(pg.ok()) << pg.error(); }
  pg_instance pg;
  temp_dir dir;
};

TEST_F(PostgresStore, AnAcknowledgedWriteIsInPostgres) {
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  EXPECT_EQ(http(node->http_port(), "GET", "/cluster/health").json().at("store"), "postgres");
  auto v = put_record(node->http_port(), "t", "o1", "items", "a", R"({"n":1,"tags":["x"]})");
  ASSERT_FALSE(v.empty());
  // Right after the 200, from another connection: committed.
  EXPECT_EQ(pg.sql("SELECT doc->>'n' FROM weir_records "
                   "WHERE space = 't' AND object = 'o1' AND dataset = 'items' AND id = 'a'"),
            "1");
  EXPECT_EQ(pg.sql("SELECT doc->'_ver'->>'id' FROM weir_records WHERE id = 'a'"), v);
  EXPECT_EQ(pg.sql("SELECT seq > 0 FROM weir_units WHERE space = 't' AND object = 'o1'"), "t");
  auto r = http(node->http_port(), "PATCH", "/v1/spaces/t/objects/o1/datasets/items/records/a",
                R"({"$inc":{"n":41}})");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(pg.sql("SELECT doc->>'n' FROM weir_records WHERE id = 'a'"), "42");
  r = http(node->http_port(), "DELETE", "/v1/spaces/t/objects/o1/datasets/items/records/a");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_records WHERE id = 'a'"), "0");
}

TEST_F(PostgresStore, ANodeWithoutLocalDataServesWhatAnotherWrote) {
  {
    auto first = start_node(dir.path() + "/first", pg.store_yaml());
    ASSERT_TRUE(first);
    for (int i = 1; i <= 5; ++i) {
      put_record(first->http_port(), "t", "o1", "items", "r" + std::to_string(i),
                 R"({"n":)" + std::to_string(i) + R"(,"text":"quote \" and back\\slash"})");
    }
    ASSERT_EQ(
        http(first->http_port(), "PUT", "/v1/spaces/t/objects/o1", R"({"name":"one"})").status,
        200u);
    ASSERT_EQ(
        http(first->http_port(), "DELETE", "/v1/spaces/t/objects/o1/datasets/items/records/r3")
            .status,
        200u);
  }
  auto second = start_node(dir.path() + "/second", pg.store_yaml());
  ASSERT_TRUE(second);
  auto port = second->http_port();
  auto items = http(port, "GET", "/api/t/items?obj=o1").json().as_object();
  auto& rows = items.at("data").as_array();
  ASSERT_EQ(rows.size(), 4u) << json::serialize(items);
  EXPECT_EQ(rows[0].at("id"), "r1");
  EXPECT_EQ(rows[0].at("text"), "quote \" and back\\slash");
  EXPECT_EQ(rows[3].at("id"), "r5");
  // Sent compact, as the embedded store sends it (jsonb's text form has blanks).
  auto raw = http(port, "GET", "/api/t/items?obj=o1").body;
  EXPECT_EQ(raw.find("\": "), std::string::npos) << raw;
  // jsonb orders members its own way ("_ver" before "text"); records still go out with "id"
  // first and "_ver" last, as written.
  auto first_row = json::serialize(rows[0]);
  EXPECT_TRUE(first_row.starts_with(R"({"id":"r1",)")) << first_row;
  EXPECT_NE(raw.find(R"(,"_ver":{"id":")"), std::string::npos) << raw;
  EXPECT_EQ(raw.find(R"({"id":"r1","_ver")"), std::string::npos) << raw;
  auto doc = http(port, "GET", "/api/t/objects/one?obj=o1").json().as_object();
  EXPECT_EQ(doc.at("data").at("name"), "one");
  // Sequences continue where the first node stopped: versionIds keep growing in the unit.
  auto before = pg.sql("SELECT seq FROM weir_units WHERE space = 't' AND object = 'o1'");
  put_record(port, "t", "o1", "items", "r6", R"({"n":6})");
  auto after = pg.sql("SELECT seq FROM weir_units WHERE space = 't' AND object = 'o1'");
  EXPECT_EQ(std::stoll(after), std::stoll(before) + 1);
}

TEST_F(PostgresStore, AnObjectDeleteIsRecordedAndSurvivesARestart) {
  {
    auto node = start_node(dir.path() + "/a", pg.store_yaml());
    ASSERT_TRUE(node);
    put_record(node->http_port(), "t", "o1", "items", "a", R"({"n":1})");
    ASSERT_EQ(http(node->http_port(), "DELETE", "/v1/spaces/t/objects/o1").status, 200u);
    EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_records WHERE object = 'o1'"), "0");
    EXPECT_EQ(pg.sql("SELECT deleted FROM weir_units WHERE space = 't' AND object = 'o1'"), "t");
  }
  auto node = start_node(dir.path() + "/b", pg.store_yaml());
  ASSERT_TRUE(node);
  auto r = http(node->http_port(), "GET", "/api/t/items?obj=o1");
  EXPECT_TRUE(r.json().as_object().at("data").as_array().empty()) << r.body;
}

TEST_F(PostgresStore, TheSchemaIsMigratedOnceAndANewerOneIsRefused) {
  { ASSERT_TRUE(start_node(dir.path() + "/a", pg.store_yaml())); }
  { ASSERT_TRUE(start_node(dir.path() + "/b", pg.store_yaml())); }
  std::string all;  // "1,2,…": each version once
  for (int v = 1; v <= store::postgres_store::schema_version(); ++v) {
    all += (v > 1 ? "," : "") + std::to_string(v);
  }
  EXPECT_EQ(pg.sql("SELECT string_agg(version::text, ',' ORDER BY version) "
                   "FROM weir_schema_migrations"),
            all);
  pg.sql("INSERT INTO weir_schema_migrations (version, description) VALUES (999, 'future')");
  auto r = store::postgres_store::open({pg.url(), 16, true, "", false});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "store.open_failed");
  EXPECT_NE(r.error().message.find("newer than this build"), std::string::npos)
      << r.error().message;
}

TEST_F(PostgresStore, WritesWaitOutADatabaseRestartAndNoAcknowledgedWriteIsLost) {
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  put_record(port, "t", "o1", "items", "before", R"({"n":0})");
  std::atomic<bool> restarted{false};
  std::atomic<int> answered{0};
  std::thread restarter{[&] {
    // Once writes flow, so that the restart lands among them.
    for (auto until = std::chrono::steady_clock::now() + 10s;
         answered < 5 && std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(5ms);
    }
    restarted = pg.restart();  // fast shutdown: every connection is cut mid-write
  }};
  std::vector<std::string> acknowledged;
  for (int i = 0; i < 40; ++i) {
    auto id = "w" + std::to_string(i);
    auto r = http(port, "PUT", "/v1/spaces/t/objects/o1/datasets/items/records/" + id,
                  R"({"n":)" + std::to_string(i) + "}");
    ++answered;
    EXPECT_EQ(r.status, 200u) << r.body;  // the writer thread retried on a new connection
    if (r.status == 200) {
      acknowledged.push_back(id);
    }
    std::this_thread::sleep_for(25ms);
  }
  restarter.join();
  ASSERT_TRUE(restarted) << pg.error();
  for (const auto& id : acknowledged) {
    EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_records WHERE id = '" + id + "'"), "1") << id;
  }
  EXPECT_EQ(acknowledged.size(), 40u);
}

TEST_F(PostgresStore, ThreeMembersOnOneDatabaseServeEveryWriteEverywhereAndSumConcurrentIncs) {
  cluster3 cl{"", true, pg.store_yaml()};
  auto obj = cl.object_owned_by(2, "pg");
  ASSERT_FALSE(put_record(cl.port(0), "t", obj, "items", "counter", R"({"n":0})").empty());
  // A subscriber on every member; increments through every member at once.
  std::vector<std::unique_ptr<ws_client>> watchers;
  for (int i = 0; i < cluster3::n; ++i) {
    watchers.push_back(std::make_unique<ws_client>(cl.port(i)));
    watchers.back()->expect_connected();
    watchers.back()->subscribe("q", "T.Items.All", {{"obj", obj}}, 1, "full");
    watchers.back()->read_json();
  }
  constexpr int per_member = 20;
  std::vector<std::thread> writers;
  std::atomic<int> failed{0};
  for (int i = 0; i < cluster3::n; ++i) {
    writers.emplace_back([&, i] {
      for (int k = 0; k < per_member; ++k) {
        auto r = http(cl.port(i), "PATCH",
                      "/v1/spaces/t/objects/" + obj + "/datasets/items/records/counter",
                      R"({"$inc":{"n":1}})");
        if (r.status != 200) {
          ++failed;
        }
      }
    });
  }
  for (auto& t : writers) {
    t.join();
  }
  EXPECT_EQ(failed.load(), 0);
  constexpr int total = cluster3::n * per_member;
  EXPECT_EQ(pg.sql("SELECT doc->>'n' FROM weir_records WHERE id = 'counter'"),
            std::to_string(total));
  for (auto& w : watchers) {
    auto f = w->read_until([](const json::object& f) {
      const auto& data = f.at("payload").at("data").as_array();
      return !data.empty() && data[0].at("n") == total;
    });
    EXPECT_FALSE(f.empty());
  }
  EXPECT_EQ(cl.health(0).at("store"), "postgres");
}

TEST_F(PostgresStore, WhatJsonbCannotHoldIsRefusedAndTheRestRoundTrips) {
  auto node = start_node(dir.path(), pg.store_yaml());
  ASSERT_TRUE(node);
  auto port = node->http_port();
  // U+0000 cannot be stored in jsonb: a clear 400 before anything is applied, the node lives.
  auto nul = http(port, "PUT", "/v1/spaces/t/objects/o1/datasets/items/records/z",
                  R"({"text":"a\u0000b"})");
  EXPECT_EQ(nul.status, 400u) << nul.body;
  EXPECT_EQ(nul.json().at("error").at("code"), "record.unsupported_character");
  // An escaped backslash before "u0000" is ordinary text; so is every other character.
  auto text = std::string{R"({"text":"back\\u0000slash, caf\u00e9, \ud83d\ude00, \"q\""})"};
  ASSERT_EQ(http(port, "PUT", "/v1/spaces/t/objects/o1/datasets/items/records/y", text).status,
            200u);
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_records WHERE id = 'z'"), "0");
  auto expected = json::parse(text).at("text");
  node.reset();
  auto again = start_node(dir.path() + "/again", pg.store_yaml());
  ASSERT_TRUE(again);
  auto rows = http(again->http_port(), "GET", "/api/t/items?obj=o1").json().as_object();
  ASSERT_EQ(rows.at("data").as_array().size(), 1u) << json::serialize(rows);
  EXPECT_EQ(rows.at("data").as_array()[0].at("text"), expected);
}

TEST_F(PostgresStore, ARoleWithoutCreateRunsOnASchemaMadeBeforehand) {
  { ASSERT_TRUE(start_node(dir.path() + "/owner", pg.store_yaml())); }  // creates the tables
  pg.sql("CREATE ROLE app LOGIN");
  pg.sql(
      "GRANT SELECT, INSERT, UPDATE, DELETE ON weir_records, weir_units, "
      "weir_idempotency_keys, weir_schema_migrations TO app");
  pg.sql("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
  auto yaml = "store: { backend: postgres, postgres: { url: \"host=127.0.0.1 port=" +
              std::to_string(pg.port()) + " user=app dbname=weir\" } }\n";
  auto node = start_node(dir.path() + "/app", yaml);
  ASSERT_TRUE(node);
  EXPECT_FALSE(put_record(node->http_port(), "t", "o1", "items", "a", R"({"n":1})").empty());
}

// Elastic membership's fence: a member commits a unit's writes only while the membership
// record names it the unit's owner. A group mixing owned and not-owned units commits the owned
// ones; the others are refused with cluster.not_owner and leave nothing in the table.
TEST_F(PostgresStore, TheFenceCommitsOnlyUnitsTheMembershipRecordGivesThisMember) {
  // Open (and migrate) once, then record owners: b alone, then a and b.
  auto opened = store::postgres_store::open({pg.url(), 16, false, "a", true});
  ASSERT_TRUE(opened) << opened.error().message;
  auto& st = *opened.value();
  auto write = [&](const std::string& object, std::uint64_t seq, std::uint64_t epoch = 0) {
    auto p = std::make_shared<std::promise<core::result<void>>>();
    auto f = p->get_future();
    store::write_batch b;
    b.unit = {"t", object};
    b.seq = seq;
    b.epoch = epoch;
    b.writes.push_back({"items", "r", R"({"id":"r","n":1})", {}, {}});
    auto q = st.submit(std::move(b), [p](core::result<void> r) { p->set_value(std::move(r)); });
    EXPECT_TRUE(q);
    return f;
  };
  pg.sql("INSERT INTO weir_membership (epoch, owners) VALUES (1, '{b}')");
  auto refused = write("o1", 1).get();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "cluster.not_owner");
  EXPECT_NE(refused.error().message.find("'b' does now"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_records"), "0");
  EXPECT_EQ(pg.sql("SELECT count(*) FROM weir_units"), "0");

  // Owners a and b: find one object each owns, and write both in one group (queued together
  // while a change of owners holds the fence's lock, so the writer takes them as one group).
  pg.sql("UPDATE weir_membership SET epoch = 2, owners = '{a,b}'");
  std::vector<std::string> ab{"a", "b"};
  std::string mine, theirs;
  for (int k = 0; mine.empty() || theirs.empty(); ++k) {
    auto obj = "p" + std::to_string(k);
    (core::rendezvous_owner(ab, core::unit_name("t", obj)) == 0 ? mine : theirs) = obj;
  }
  std::thread blocker{[&] {
    pg.sql("BEGIN; SELECT pg_advisory_xact_lock(" +
           std::to_string(store::postgres_leases::fence_lock) + "); SELECT pg_sleep(1.5); COMMIT");
  }};
  // Waits (bounded) until the fence's advisory lock has `n` holders and `waiting` waiters.
  auto fence = [&](int held, int waiting) {
    // A bigint advisory key shows as classid (its high 32 bits) and objid (its low ones).
    const auto key = static_cast<std::uint64_t>(store::postgres_leases::fence_lock);
    const std::string q =
        "SELECT count(*) FILTER (WHERE granted) || '/' || "
        "count(*) FILTER (WHERE NOT granted) FROM pg_locks WHERE "
        "locktype = 'advisory' AND classid::bigint = " +
        std::to_string(key >> 32) + " AND objid::bigint = " + std::to_string(key & 0xffffffffu);
    const auto want = std::to_string(held) + "/" + std::to_string(waiting);
    for (auto until = std::chrono::steady_clock::now() + 10s;
         pg.sql(q) != want && std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(10ms);
    }
    return pg.sql(q) == want;
  };
  ASSERT_TRUE(fence(1, 0)) << "the change of owners holds the fence";
  auto first = write(mine, 1);  // its group waits for the lock; the next two queue behind it
  ASSERT_TRUE(fence(1, 1)) << "the first group waits for the fence";
  auto second = write(theirs, 1);
  auto third = write(mine, 2);
  blocker.join();
  EXPECT_TRUE(first.get());
  auto r2 = second.get();
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code, "cluster.not_owner");
  EXPECT_TRUE(third.get());
  EXPECT_EQ(pg.sql("SELECT string_agg(object, ',' ORDER BY object) FROM weir_records"), mine);
  EXPECT_EQ(pg.sql("SELECT seq FROM weir_units WHERE object = '" + mine + "'"), "2");

  // A shard whose state is valid under epoch 1 while the record is at 3: a change went by that
  // it never saw (another member may have owned the unit meanwhile), so it is refused although
  // the record names this member the owner; at epoch 2 it may commit.
  pg.sql("UPDATE weir_membership SET epoch = 3");
  auto stale = write(mine, 3, 1).get();
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, "cluster.not_owner");
  EXPECT_NE(stale.error().message.find("missed a change"), std::string::npos)
      << stale.error().message;
  EXPECT_TRUE(write(mine, 3, 2).get());
  EXPECT_EQ(pg.sql("SELECT seq FROM weir_units WHERE object = '" + mine + "'"), "3");
  st.stop();
}

TEST(PostgresStoreStart, AnUnreachableDatabaseRefusesTheStartClearly) {
  auto r = store::postgres_store::open(
      {"host=127.0.0.1 port=" + std::to_string(free_port()) + " user=weir connect_timeout=2", 16,
       true, "", false});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "store.open_failed");
  EXPECT_NE(r.error().message.find("cannot connect to PostgreSQL"), std::string::npos)
      << r.error().message;
}

TEST_F(PostgresStore, TheEnvironmentOverridesTheConfiguredUrl) {
  // The binary, as an operator runs it: the file names a database that is not there, the
  // environment (a Secret in the chart) the one that is.
  auto port = free_port();
  auto config = dir.path() + "/weir.yaml";
  {
    std::ofstream f{config};
    f << "node:\n  http: \"127.0.0.1:" << port << "\"\n  grpc: \"127.0.0.1:" << free_port()
      << "\"\nstore:\n  backend: postgres\n  postgres:\n    url: \"host=127.0.0.1 port="
      << free_port() << " user=nobody connect_timeout=2\"\n"
      << default_queries_yaml();
  }
  ::setenv("WEIR_POSTGRES_URL", pg.url().c_str(), 1);
  weir_process node{config, dir.path() + "/data"};
  ::unsetenv("WEIR_POSTGRES_URL");
  ASSERT_TRUE(node.started()) << node.log();
  put_record(port, "t", "o1", "items", "a", R"({"n":7})");
  EXPECT_EQ(pg.sql("SELECT doc->>'n' FROM weir_records WHERE id = 'a'"), "7");
}

}  // namespace
}  // namespace weir::test

// Tests for apps/config: weir.yaml → node_config, its defaults, and its error messages.
#include "apps/config/node_config.hpp"

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace weir::config {
boost::json::value yaml_to_json(const YAML::Node& n);  // defined in node_config.cpp

namespace {

namespace json = boost::json;

const char* const full_config = R"(
node:
  http: "0.0.0.0:8081"
  grpc: "[::1]:0"
  dataDir: /var/lib/weir
  ioThreads: 3
  actorThreads: 4
http:
  maxBodyBytes: 2048
store:
  queueCapacity: 100
query:
  keepAliveIntervalMs: 15000
  maxObservableHubConnections: 100
  maxObservableHubConnectionsPerCaller: 10
  maxObservableHubSubscriptionsPerConnection: 50
  maxObservableSubscriptions: 1000
  maxObservableSubscriptionsPerCaller: 20
  maxObservableInboundFrames: 30
  maxObservableOutboundFrames: 40
  maxObservableInboundFrameBytes: 4096
  maxObservableOutboundFrameBytes: 8192
  maxOutboundQueueBytes: 65536
  maxObservableTombstones: 12
  tombstoneRetentionMs: 5000
  observableShutdownTimeoutMs: 0
  healthIntervalMs: 250
  maxSortIndexesPerDataset: 3
  agentRunMaxMs: 1500
queries:
  - name: Demo.Tasks.ObserveByState
    route: /api/demo/tasks/by-state
    space: demo
    object: "{board}"
    dataset: tasks
    filter: { state: "{state}" }
    sort: ["title"]
    arguments: { board: string, state: string }
    authorize: anonymous
  - name: Demo.Boards.All
    route: /api/demo/boards
    space: demo
)";

core::error load_error(const std::string& text) {
  auto r = load_config_text(text, "weir.yaml");
  EXPECT_FALSE(r.has_value()) << text;
  if (r.has_value()) {
    return {};
  }
  EXPECT_EQ(r.error().code, "config.invalid");
  EXPECT_EQ(r.error().message.rfind("weir.yaml: ", 0), 0u) << r.error().message;
  EXPECT_EQ(r.error().details.at("file"), json::value("weir.yaml"));
  return r.error();
}

TEST(NodeConfigTest, FullConfigLoadsEveryField) {
  auto r = load_config_text(full_config, "weir.yaml");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const node_config& c = *r;
  EXPECT_EQ(c.http_address, "0.0.0.0");
  EXPECT_EQ(c.http_port, 8081);
  EXPECT_EQ(c.grpc_address, "::1");
  EXPECT_EQ(c.grpc_port, 0);
  EXPECT_EQ(c.data_dir, "/var/lib/weir");
  EXPECT_EQ(c.io_threads, 3);
  EXPECT_EQ(c.actor_threads, 4);
  EXPECT_EQ(c.max_body_bytes, 2048u);
  EXPECT_EQ(c.store_queue_capacity, 100u);
  const hub_limits& h = c.hub;
  EXPECT_EQ(h.keep_alive_interval_ms, 15000);
  EXPECT_EQ(h.max_hub_connections, 100u);
  EXPECT_EQ(h.max_hub_connections_per_caller, 10u);
  EXPECT_EQ(h.max_subscriptions_per_connection, 50u);
  EXPECT_EQ(h.max_subscriptions, 1000u);
  EXPECT_EQ(h.max_subscriptions_per_caller, 20u);
  EXPECT_EQ(h.max_inbound_frames, 30u);
  EXPECT_EQ(h.max_outbound_frames, 40u);
  EXPECT_EQ(h.max_inbound_frame_bytes, 4096u);
  EXPECT_EQ(h.max_outbound_frame_bytes, 8192u);
  EXPECT_EQ(h.max_outbound_queue_bytes, 65536u);
  EXPECT_EQ(h.max_tombstones, 12u);
  EXPECT_EQ(h.max_sort_indexes_per_dataset, 3u);
  EXPECT_EQ(h.tombstone_retention_ms, 5000);
  EXPECT_EQ(h.shutdown_timeout_ms, 0);
  EXPECT_EQ(h.health_interval_ms, 250);
  EXPECT_EQ(h.agent_run_max_ms, 1500);
  ASSERT_EQ(c.queries.size(), 2u);
  const auto& q = c.queries[0];
  EXPECT_EQ(q.name, "Demo.Tasks.ObserveByState");
  EXPECT_EQ(q.route, "/api/demo/tasks/by-state");
  EXPECT_EQ(q.object, "{board}");
  EXPECT_EQ(q.dataset, "tasks");
  EXPECT_EQ(q.filter_template, json::parse(R"({"state": "{state}"})"));
  EXPECT_EQ(q.sort, std::vector<std::string>{"title"});
  ASSERT_EQ(q.arguments.size(), 2u);
  EXPECT_EQ(q.arguments[0].first, "board");
  EXPECT_EQ(q.arguments[1].first, "state");
  EXPECT_EQ(c.queries[1].name, "Demo.Boards.All");
  EXPECT_TRUE(c.queries[1].yields_collection());
}

TEST(NodeConfigTest, EmptyConfigGivesDefaults) {
  for (const char* text : {"", "# nothing\n", "node: {}\nquery:\nqueries: []\n"}) {
    auto r = load_config_text(text, "weir.yaml");
    ASSERT_TRUE(r.has_value()) << r.error().message;
    const node_config& c = *r;
    EXPECT_EQ(c.http_address, "127.0.0.1");
    EXPECT_EQ(c.http_port, 8080);
    EXPECT_EQ(c.grpc_port, 9090);
    EXPECT_EQ(c.data_dir, "./weir-data");
    EXPECT_EQ(c.io_threads, 0);  // one per usable core, decided at start
    EXPECT_EQ(c.actor_threads, 2);
    EXPECT_EQ(c.max_body_bytes, 1u << 20);
    EXPECT_EQ(c.store_queue_capacity, 4096u);
    EXPECT_EQ(c.hub.max_hub_connections_per_caller, 512u);
    EXPECT_EQ(c.hub.max_subscriptions_per_caller, 4096u);
    EXPECT_EQ(c.hub.max_outbound_queue_bytes, 4u << 20);
    EXPECT_EQ(c.hub.tombstone_retention_ms, 120000);
    EXPECT_TRUE(c.queries.empty());
  }
}

TEST(NodeConfigTest, WindowedSection) {
  auto d = load_config_text("", "w.yaml");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->windowed.keep_alive_ms, 25000);
  EXPECT_EQ(d->windowed.max_queue_bytes, 16u << 20);
  EXPECT_EQ(d->windowed.close_deadline_ms, 10000);
  auto r = load_config_text("windowed: { keepAliveMs: 0, maxQueueBytes: 65536 }", "w.yaml");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->windowed.keep_alive_ms, 0);
  EXPECT_EQ(r->windowed.max_queue_bytes, 65536u);
  auto e = load_error("windowed: { keepAliveMs: -1 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("windowed.keepAliveMs"));
  e = load_error("windowed: { maxQueueBytes: 100 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("windowed.maxQueueBytes"));
  e = load_error("windowed: { closeDeadlineMs: 50 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("windowed.closeDeadlineMs"));
  auto c = load_config_text("windowed: { closeDeadlineMs: 250 }", "w.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->windowed.close_deadline_ms, 250);
  e = load_error("windowed: { keepAlive: 5 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("windowed.keepAlive"));
}

TEST(NodeConfigTest, LogSection) {
  auto d = load_config_text("", "l.yaml");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->log_level, "info");
  EXPECT_EQ(d->log_format, "text");
  auto r = load_config_text("log: { level: debug, format: json }", "l.yaml");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->log_level, "debug");
  EXPECT_EQ(r->log_format, "json");
  auto e = load_error("log: { level: verbose }\n");
  EXPECT_EQ(e.details.at("field"), json::value("log.level"));
  EXPECT_NE(e.message.find("debug, info, warn, error, off"), std::string::npos) << e.message;
  e = load_error("log: { format: logfmt }\n");
  EXPECT_EQ(e.details.at("field"), json::value("log.format"));
  e = load_error("log: { colour: true }\n");
  EXPECT_EQ(e.details.at("field"), json::value("log.colour"));
}

TEST(NodeConfigTest, PerCallerLimitsDefaultToTheConfiguredGlobalOnes) {
  auto r = load_config_text(
      "query: { maxObservableHubConnections: 7, maxObservableSubscriptions: 9 }", "w.yaml");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->hub.max_hub_connections_per_caller, 7u);
  EXPECT_EQ(r->hub.max_subscriptions_per_caller, 9u);
}

TEST(NodeConfigTest, AllowedOriginsMustBeOriginsThatCanMatch) {
  auto ok = load_config_text(
      "query: { allowedOrigins: [\"https://app.example.com\", \"http://[::1]:8080/\"] }", "o.yaml");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->hub.allowed_origins.size(), 2u);
  // A request's Origin never has a path, a query or no scheme: such an entry would never match.
  for (const char* bad : {"https://app.example.com/login", "app.example.com",
                          "https://app.example.com?x=1", "https://", "https://a.example:99999"}) {
    SCOPED_TRACE(bad);
    auto r =
        load_config_text(std::string{"query: { allowedOrigins: [\""} + bad + "\"] }", "o.yaml");
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find("query.allowedOrigins"), std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
  }
}

TEST(NodeConfigTest, RecordLimitsStallBoundAndPerAddressHubShare) {
  auto d = load_config_text("", "r.yaml");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->records.max_bytes, 1u << 20);
  EXPECT_EQ(d->records.max_members, 100000u);
  EXPECT_EQ(d->records.max_key_bytes, 1024u);
  EXPECT_EQ(d->send_stall_timeout_ms, 10000);
  EXPECT_EQ(d->hub.max_hub_connections_per_address, 512u);  // the node's, as Arc's per caller
  auto r = load_config_text(
      "records: { maxBytes: 4096, maxMembers: 50, maxKeyBytes: 64 }\n"
      "http: { sendStallTimeoutMs: 2500 }\n"
      "query: { maxObservableHubConnections: 8000 }\n",
      "r.yaml");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->records.max_bytes, 4096u);
  EXPECT_EQ(r->records.max_members, 50u);
  EXPECT_EQ(r->records.max_key_bytes, 64u);
  EXPECT_EQ(r->send_stall_timeout_ms, 2500);
  EXPECT_EQ(r->hub.max_hub_connections_per_address, 8000u);
  auto small = load_config_text("query: { maxObservableHubConnections: 10 }", "r.yaml");
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->hub.max_hub_connections_per_address, 10u);
  auto set = load_config_text("query: { maxObservableHubConnectionsPerAddress: 3 }", "r.yaml");
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->hub.max_hub_connections_per_address, 3u);
  auto e = load_error("records: { maxBytes: 10 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("records.maxBytes"));
  e = load_error("records: { maxDepth: 10 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("records.maxDepth"));
  e = load_error("http: { sendStallTimeoutMs: 10 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("http.sendStallTimeoutMs"));
}

TEST(NodeConfigTest, UnknownKeysAreErrors) {
  auto e = load_error("nodes: {}\n");
  EXPECT_EQ(e.details.at("field"), json::value("nodes"));
  EXPECT_NE(e.message.find("unknown key"), std::string::npos);

  e = load_error("query:\n  maxObservableTombstone: 5\n");
  EXPECT_EQ(e.message.rfind("weir.yaml: field 'query.maxObservableTombstone': unknown key", 0), 0u)
      << e.message;
  EXPECT_EQ(e.details.at("field"), json::value("query.maxObservableTombstone"));

  e = load_error("node: { httpPort: 80 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("node.httpPort"));
  e = load_error("http: { maxBody: 80 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("http.maxBody"));
  e = load_error("store: { capacity: 80 }\n");
  EXPECT_EQ(e.details.at("field"), json::value("store.capacity"));

  e = load_error("queries:\n  - name: Demo.Q\n    route: /q\n    space: s\n    sortt: [a]\n");
  EXPECT_EQ(e.message.rfind("weir.yaml: query 'Demo.Q': field 'sortt': unknown field", 0), 0u)
      << e.message;
  EXPECT_EQ(e.details.at("query"), json::value("Demo.Q"));
}

TEST(NodeConfigTest, QueryErrorsNameFileQueryAndField) {
  auto e = load_error(R"(
queries:
  - name: Demo.Tasks.ObserveByState
    route: /api/demo/tasks/by-state
    space: demo
    filter: { state: { $foo: 1 } }
)");
  EXPECT_EQ(e.message.rfind("weir.yaml: query 'Demo.Tasks.ObserveByState': field 'filter': ", 0),
            0u)
      << e.message;
  EXPECT_NE(e.message.find("$foo"), std::string::npos) << e.message;
  EXPECT_EQ(e.details.at("field"), json::value("filter"));
  EXPECT_EQ(e.details.at("query"), json::value("Demo.Tasks.ObserveByState"));

  e = load_error("queries:\n  - route: /q\n    space: s\n");
  EXPECT_EQ(e.message, "weir.yaml: query #0: field 'name': required");

  e = load_error(
      "queries:\n  - { name: A, route: /a, space: s }\n  - { name: B, route: /a, space: s }\n");
  EXPECT_EQ(e.message.rfind("weir.yaml: query 'B': field 'route': ", 0), 0u) << e.message;

  e = load_error("queries:\n  - { name: A, route: /a, space: s, arguments: { page: integer } }\n");
  EXPECT_EQ(e.details.at("field"), json::value("arguments"));

  e = load_error("queries: { name: A }\n");
  EXPECT_NE(e.message.find("queries"), std::string::npos);
}

TEST(NodeConfigTest, RangesAreEnforced) {
  struct range_case {
    const char* key;
    long long min;
    long long max;
  };
  for (auto c :
       {range_case{"maxObservableHubSubscriptionsPerConnection", 1, 10000},
        range_case{"maxObservableHubConnections", 1, 100000},
        range_case{"maxObservableHubConnectionsPerCaller", 1, 100000},
        range_case{"maxObservableSubscriptions", 1, 100000},
        range_case{"maxObservableSubscriptionsPerCaller", 1, 100000},
        range_case{"maxObservableInboundFrames", 1, 10000},
        range_case{"maxObservableOutboundFrames", 1, 10000},
        range_case{"maxObservableInboundFrameBytes", 1, 16 << 20},
        range_case{"maxObservableTombstones", 1, 100000},
        range_case{"observableShutdownTimeoutMs", 0, 600000},
        range_case{"healthIntervalMs", 10, 60000}, range_case{"maxSortIndexesPerDataset", 1, 1024},
        range_case{"agentRunMaxMs", 100, 86400000}}) {
    const std::string key = c.key;
    EXPECT_TRUE(
        load_config_text("query: { " + key + ": " + std::to_string(c.max) + " }", "w").has_value())
        << key;
    EXPECT_TRUE(
        load_config_text("query: { " + key + ": " + std::to_string(c.min) + " }", "w").has_value())
        << key;
    auto e = load_error("query: { " + key + ": " + std::to_string(c.max + 1) + " }");
    EXPECT_EQ(e.details.at("field"), json::value("query." + key));
    EXPECT_NE(e.message.find("between"), std::string::npos) << e.message;
    e = load_error("query: { " + key + ": " + std::to_string(c.min - 1) + " }");
    EXPECT_EQ(e.details.at("field"), json::value("query." + key));
  }
  auto e = load_error("query:\n  maxObservableHubSubscriptionsPerConnection: 0\n");
  EXPECT_EQ(e.message,
            "weir.yaml: field 'query.maxObservableHubSubscriptionsPerConnection': must be between "
            "1 and 10000 (got 0)");
  load_error("node: { ioThreads: 0 }");
  load_error("node: { actorThreads: 1000 }");
  load_error("http: { maxBodyBytes: 0 }");
  load_error("store: { queueCapacity: 0 }");
  load_error("query: { keepAliveIntervalMs: 3600001 }");
  load_error("query: { tombstoneRetentionMs: 0 }");
}

TEST(NodeConfigTest, KeepAliveZeroOrNegativeDisables) {
  // arc-hub §6 / seed 003: zero or negative disables keep-alive, advertised as 0.
  for (const char* v : {"0", "-1", "-30000"}) {
    auto cfg = load_config_text(std::string{"query: { keepAliveIntervalMs: "} + v + " }", "w");
    ASSERT_TRUE(cfg.has_value()) << v;
    EXPECT_EQ(cfg->hub.keep_alive_interval_ms, 0) << v;
  }
  auto cfg = load_config_text("query: { keepAliveIntervalMs: 200 }", "w");
  ASSERT_TRUE(cfg.has_value());
  EXPECT_EQ(cfg->hub.keep_alive_interval_ms, 200);
}

TEST(NodeConfigTest, OutboundQueueMustHoldOneFrame) {
  auto e =
      load_error("query: { maxObservableOutboundFrameBytes: 4096, maxOutboundQueueBytes: 4095 }");
  EXPECT_EQ(e.details.at("field"), json::value("query.maxOutboundQueueBytes"));
  EXPECT_TRUE(
      load_config_text(
          "query: { maxObservableOutboundFrameBytes: 4096, maxOutboundQueueBytes: 4096 }", "w")
          .has_value());
}

TEST(NodeConfigTest, ValuesMustHaveTheRightType) {
  auto e = load_error("query: { maxObservableTombstones: \"12\" }");  // quoted: a string
  EXPECT_NE(e.message.find("must be an integer"), std::string::npos) << e.message;
  load_error("query: { maxObservableTombstones: 1.5 }");
  load_error("query: { maxObservableTombstones: [1] }");
  load_error("query: { maxObservableTombstones: 99999999999999999999999 }");
  load_error("node: { dataDir: 5 }");
  load_error("node: { dataDir: \"\" }");
  load_error("node: 5");
  load_error("- just\n- a list\n");
}

TEST(NodeConfigTest, EndpointsAreHostColonPort) {
  for (const char* bad :
       {"localhost", ":80", "host:", "host:65536", "host:-1", "host:8x", "[]:80"}) {
    auto e = load_error(std::string("node: { http: \"") + bad + "\" }");
    EXPECT_EQ(e.details.at("field"), json::value("node.http")) << bad;
  }
  auto r = load_config_text("node: { http: \"example.org:65535\" }", "w");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->http_address, "example.org");
  EXPECT_EQ(r->http_port, 65535);
}

TEST(NodeConfigTest, RepeatedKeysAreErrors) {
  auto e = load_error("query:\n  maxObservableTombstones: 5\n  maxObservableTombstones: 6\n");
  EXPECT_NE(e.message.find("query.maxObservableTombstones"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("line 3"), std::string::npos) << e.message;
}

TEST(NodeConfigTest, MalformedYamlNamesFileAndLine) {
  auto e = load_error("query:\n  a: [1, 2\n");
  EXPECT_NE(e.message.find("line "), std::string::npos) << e.message;
}

TEST(NodeConfigTest, LoadsFromFile) {
  const std::string path = ::testing::TempDir() + "weir_node_config_test.yaml";
  {
    std::ofstream out(path);
    out << "node: { dataDir: /tmp/x }\nqueries:\n  - { name: A, route: /a, space: s }\n";
  }
  auto r = load_config_file(path);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->data_dir, "/tmp/x");
  ASSERT_EQ(r->queries.size(), 1u);

  {
    std::ofstream out(path);
    out << "bogus: 1\n";
  }
  r = load_config_file(path);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message.rfind(path + ": ", 0), 0u) << r.error().message;
  std::remove(path.c_str());

  r = load_config_file(path + ".missing");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "config.invalid");
  EXPECT_NE(r.error().message.find(path + ".missing"), std::string::npos);
}

TEST(YamlToJsonTest, ScalarsFollowTheCoreSchemaAndQuotesMeanString) {
  auto v = yaml_to_json(YAML::Load(R"(
a: ~
b: null
c:
d: true
e: False
f: 42
g: -7
h: 1.5
i: 2e3
j: hello
k: "42"
l: 'true'
m: "~"
n: nan
o: 1.2.3
p: [1, "x", yes]
q: { r: s }
t: |
  12
)"));
  ASSERT_TRUE(v.is_object());
  const auto& o = v.get_object();
  EXPECT_TRUE(o.at("a").is_null());
  EXPECT_TRUE(o.at("b").is_null());
  EXPECT_TRUE(o.at("c").is_null());
  EXPECT_EQ(o.at("d"), json::value(true));
  EXPECT_EQ(o.at("e"), json::value(false));
  ASSERT_TRUE(o.at("f").is_int64());
  EXPECT_EQ(o.at("f").get_int64(), 42);
  EXPECT_EQ(o.at("g").get_int64(), -7);
  ASSERT_TRUE(o.at("h").is_double());
  EXPECT_EQ(o.at("h").get_double(), 1.5);
  ASSERT_TRUE(o.at("i").is_double());
  EXPECT_EQ(o.at("i").get_double(), 2000.0);
  EXPECT_EQ(o.at("j"), json::value("hello"));
  EXPECT_EQ(o.at("k"), json::value("42"));
  EXPECT_EQ(o.at("l"), json::value("true"));
  EXPECT_EQ(o.at("m"), json::value("~"));
  EXPECT_EQ(o.at("n"), json::value("nan"));
  EXPECT_EQ(o.at("o"), json::value("1.2.3"));
  EXPECT_EQ(o.at("p"), json::parse(R"([1, "x", "yes"])"));
  EXPECT_EQ(o.at("q"), json::parse(R"({"r": "s"})"));
  EXPECT_EQ(o.at("t"), json::value("12\n"));
}

}  // namespace
}  // namespace weir::config

namespace weir::config {
namespace {

TEST(NodeConfigStoreTest, UnitBoundsAreConfigurable) {
  auto cfg = load_config_text("store: { maxPendingWritesPerUnit: 7, unitIdleMs: 1500 }", "w");
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  EXPECT_EQ(cfg->max_pending_writes_per_unit, 7u);
  EXPECT_EQ(cfg->unit_idle_ms, 1500);
  auto defaults = load_config_text("", "w");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->max_pending_writes_per_unit, 4096u);
  EXPECT_EQ(defaults->unit_idle_ms, 60000);
  EXPECT_FALSE(load_config_text("store: { unitIdleMs: 0 }", "w").has_value());
  EXPECT_FALSE(load_config_text("store: { maxPendingWritesPerUnit: 0 }", "w").has_value());
}

TEST(NodeConfigStoreTest, IdempotencyKeysAreKeptForAConfiguredTimeAndCount) {
  auto defaults = load_config_text("", "w");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->idempotency_key_ttl_ms, 86400000);
  EXPECT_EQ(defaults->max_idempotency_keys_per_unit, 100000u);
  auto cfg =
      load_config_text("store: { idempotencyKeyTtlMs: 60000, maxIdempotencyKeysPerUnit: 10 }", "w");
  ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
  EXPECT_EQ(cfg->idempotency_key_ttl_ms, 60000);
  EXPECT_EQ(cfg->max_idempotency_keys_per_unit, 10u);
  EXPECT_FALSE(load_config_text("store: { idempotencyKeyTtlMs: 999 }", "w").has_value());
  EXPECT_FALSE(load_config_text("store: { maxIdempotencyKeysPerUnit: 0 }", "w").has_value());
}

TEST(NodeConfigStoreTest, TheBackendIsEmbeddedOrPostgres) {
  auto defaults = load_config_text("", "w");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->store_backend, "embedded");
  EXPECT_TRUE(defaults->postgres_url.empty());
  auto pg = load_config_text(
      "store: { backend: postgres, postgres: { url: \"host=db user=weir\" } }", "w");
  ASSERT_TRUE(pg.has_value()) << pg.error().message;
  EXPECT_EQ(pg->store_backend, "postgres");
  EXPECT_EQ(pg->postgres_url, "host=db user=weir");
  auto bad = load_config_text("store: { backend: mysql }", "w.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("store.backend"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("must be one of embedded, postgres (got \"mysql\")"),
            std::string::npos)
      << bad.error().message;
  auto unknown = load_config_text("store: { postgres: { uri: x } }", "w.yaml");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("store.postgres.uri"), std::string::npos)
      << unknown.error().message;
}

}  // namespace
TEST(NodeConfigTest, ClusterSectionLoadsAndValidates) {
  const std::string members = R"(
  token: "0123456789abcdef0123456789abcdef"
  members:
    - { id: weir-0, peer: "weir-0.h:9091", http: "weir-0.h:8080" }
    - { id: weir-1, peer: "weir-1.h:9091", http: "weir-1.h:8080" }
)";
  // Without nodeId: what every pod of the chart shares; --node-id completes it.
  auto shared =
      load_config_text("cluster:" + members + "  heartbeatIntervalMs: 100\n", "weir.yaml");
  ASSERT_TRUE(shared) << shared.error().message;
  EXPECT_EQ(shared->cluster.members.size(), 2u);
  EXPECT_EQ(shared->cluster.members[1].peer, "weir-1.h:9091");
  EXPECT_EQ(shared->cluster.token, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(shared->cluster.heartbeat_interval_ms, 100);
  EXPECT_FALSE(validate_cluster(shared->cluster));  // serve needs its id
  shared->cluster.node_id = "weir-1";
  EXPECT_TRUE(validate_cluster(shared->cluster));
  shared->cluster.node_id = "weir-9";
  EXPECT_FALSE(validate_cluster(shared->cluster));

  EXPECT_TRUE(load_config_text("cluster:\n  nodeId: weir-0" + members, "weir.yaml"));
  auto bad = [](const std::string& text) {
    auto r = load_config_text(text, "weir.yaml");
    EXPECT_FALSE(r) << text;
    return r ? std::string{} : r.error().message;
  };
  EXPECT_NE(bad("cluster:\n  nodeId: other" + members).find("not one of the members"),
            std::string::npos);
  const std::string token = "  token: \"0123456789abcdef0123456789abcdef\"\n";
  EXPECT_NE(
      bad("cluster:\n" + token + "  members:\n    - { id: a, peer: \"h:1\", http: \"h:2\" }\n" +
          "    - { id: a, peer: \"h:3\", http: \"h:4\" }\n")
          .find("listed twice"),
      std::string::npos);
  EXPECT_NE(bad("cluster:\n" + token + "  members:\n    - { id: a, peer: \"h\", http: \"h:2\" }\n")
                .find("host:port"),
            std::string::npos);
  // Members must authenticate each other, with a token long enough to be a secret; the file may
  // leave the token to --peer-token-file, so `weir serve` checks once the flags are applied.
  auto no_token = load_config_text(
      "cluster:\n  nodeId: a\n  members:\n"
      "    - { id: a, peer: \"h:1\", http: \"h:2\" }\n",
      "weir.yaml");
  ASSERT_TRUE(no_token) << no_token.error().message;
  auto refused = validate_cluster(no_token->cluster);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("authenticate each other"), std::string::npos);
  no_token->cluster.token = std::string(32, 't');
  EXPECT_TRUE(validate_cluster(no_token->cluster));
  EXPECT_NE(
      bad("cluster:\n  token: short\n  members:\n    - { id: a, peer: \"h:1\", http: \"h:2\" }\n")
          .find("at least 32 bytes"),
      std::string::npos);
  EXPECT_NE(bad("cluster:\n  tls: { certFile: /nonexistent.crt, keyFile: k, caFile: c }\n")
                .find("cannot read"),
            std::string::npos);
  EXPECT_NE(bad("cluster:\n  suspectAfterMs: 500\n  downAfterMs: 400\n").find("downAfterMs"),
            std::string::npos);
  EXPECT_NE(bad("cluster:\n  nodeId: lonely\n").find("neither members are listed"),
            std::string::npos);
}

TEST(NodeConfigTest, ElasticMembershipNeedsOnlyTheNodesOwnAddresses) {
  auto bad = [](const std::string& text) {
    auto r = load_config_text(text, "weir.yaml");
    EXPECT_FALSE(r) << text;
    return r ? std::string{} : r.error().message;
  };
  auto cfg = load_config_text(
      "store: { backend: postgres, postgres: { url: \"host=db\" } }\n"
      "cluster:\n  nodeId: weir-2\n  token: \"" +
          std::string(32, 't') +
          "\"\n  advertise: { peer: \"weir-2.weir:9101\", http: \"weir-2.weir:8080\" }\n"
          "  leaseMs: 4000\n  leaseRenewMs: 1000\n",
      "weir.yaml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  const auto& c = cfg->cluster;
  EXPECT_TRUE(c.elastic());
  EXPECT_TRUE(c.clustered());
  EXPECT_TRUE(c.members.empty());
  EXPECT_EQ(c.advertise_peer, "weir-2.weir:9101");
  EXPECT_EQ(c.advertise_http, "weir-2.weir:8080");
  EXPECT_EQ(c.lease_ms, 4000);
  EXPECT_EQ(c.lease_renew_ms, 1000);
  EXPECT_TRUE(validate_cluster(c));
  // The file may leave nodeId to --node-id; serving without one is refused.
  auto no_id = c;
  no_id.node_id.clear();
  EXPECT_TRUE(validate_cluster(no_id, false));
  auto refused = validate_cluster(no_id);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("nodeId"), std::string::npos);
  auto no_auth = c;
  no_auth.token.clear();
  EXPECT_FALSE(validate_cluster(no_auth));

  EXPECT_NE(bad("cluster:\n  advertise: { peer: \"h:1\", http: \"h:2\" }\n  members:\n"
                "    - { id: a, peer: \"h:1\", http: \"h:2\" }\n")
                .find("not both"),
            std::string::npos);
  EXPECT_NE(bad("cluster:\n  advertise: { peer: \"h:1\" }\n").find("cluster.advertise.http"),
            std::string::npos);
  EXPECT_NE(bad("cluster:\n  advertise: { peer: \"nohost\", http: \"h:2\" }\n").find("host:port"),
            std::string::npos);
  EXPECT_NE(bad("cluster:\n  leaseMs: 1000\n  leaseRenewMs: 600\n").find("half"),
            std::string::npos);
  EXPECT_NE(bad("cluster:\n  leaseMs: 100\n").find("cluster.leaseMs"), std::string::npos);
}

TEST(NodeConfigTest, MemberFlagParses) {
  auto m = parse_member_flag("n1=127.0.0.1:9101,127.0.0.1:8101");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->id, "n1");
  EXPECT_EQ(m->peer, "127.0.0.1:9101");
  EXPECT_EQ(m->http, "127.0.0.1:8101");
  EXPECT_FALSE(parse_member_flag("n1=127.0.0.1:9101"));
  EXPECT_FALSE(parse_member_flag("=127.0.0.1:9101,127.0.0.1:8101"));
  EXPECT_FALSE(parse_member_flag("n1=127.0.0.1,127.0.0.1:8101"));
}

}  // namespace weir::config

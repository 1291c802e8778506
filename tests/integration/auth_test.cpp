// Authentication and authorization end to end: a node configured with auth.jwt, real tokens
// signed by the test's own issuer, and every refusal with the request that triggers it, on each
// protocol: the write API, GET /v1/auth, the WebSocket and SSE hubs, the direct transports, the
// windowed API and the health feed; claims bound into queries; credentials expiring mid-stream.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <boost/json.hpp>

#include "sse_test_support.hpp"
#include "test_support.hpp"
#include "tests/support/token_signer.hpp"
#include "weir/v1/data.grpc.pb.h"
#include "windowed_test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

constexpr const char* auth_queries = R"(
queries:
  - name: T.Items.All
    route: /api/items
    space: t
    object: "{obj}"
    dataset: items
    sort: [n]
    arguments: { obj: string }
  - name: T.Items.Secret
    route: /api/secret
    space: t
    object: "{obj}"
    dataset: items
    sort: [n]
    arguments: { obj: string }
    authorize: authenticated
  - name: T.Items.Admin
    route: /api/admin
    space: t
    object: "{obj}"
    dataset: items
    arguments: { obj: string }
    authorize: { roles: [admin] }
  - name: T.Notes.Mine
    route: /api/mine
    space: t
    object: notes
    dataset: notes
    filter: { owner: "{claims.sub}" }
    sort: [n]
)";

/// A node that trusts tokens of `signer` (issuer https://id.test, audience weir, no skew).
struct auth_node {
  explicit auth_node(std::string extra = {}) {
    std::string yaml = "auth:\n  jwt:\n    secret: \"" + signer.secret() +
                       "\"\n    issuer: \"https://id.test\"\n    audience: weir\n"
                       "    cookie: session\n    queryParameter: true\n"
                       "    clockSkewSeconds: 0\n" +
                       extra +
                       "spaces:\n  - name: \"private-*\"\n    read: authenticated\n"
                       "    write: { roles: [writer] }\n";
    node = start_node(dir.path(), yaml, std::string{auth_queries});
    if (node) {
      port = node->http_port();
    }
  }

  /// A token for `sub`, valid for `ttl` seconds, with `extra` claims.
  std::string token(const std::string& sub, json::object extra = {}, std::int64_t ttl = 600) {
    json::object c{{"sub", sub},
                   {"iss", "https://id.test"},
                   {"aud", "weir"},
                   {"exp", token_signer::now() + ttl}};
    for (auto& kv : extra) {
      c[kv.key()] = kv.value();
    }
    return signer.sign(c);
  }
  std::map<std::string, std::string> bearer(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
  }

  token_signer signer{token_signer::alg::hs256};
  temp_dir dir;
  std::unique_ptr<app::node> node;
  std::uint16_t port = 0;
};

std::string code_of(const http_response& r) {
  auto v = r.json();
  return std::string{v.at("error").at("code").as_string()};
}

bool is_type(const json::object& f, std::string_view type, std::string_view query_id) {
  auto* t = f.if_contains("type");
  auto* q = f.if_contains("queryId");
  return t && t->is_string() && t->get_string() == type && q && q->is_string() &&
         q->get_string() == query_id;
}

TEST(Auth, WriteApiRefusesEachBadCredentialWithItsCode) {
  auth_node n;
  ASSERT_TRUE(n.node);
  const std::string path = "/v1/spaces/private-a/objects/o/datasets/d/records/r1";
  auto put = [&](const std::map<std::string, std::string>& headers) {
    return http(n.port, "PUT", path, R"({"n":1})", headers);
  };
  auto none = put({});
  EXPECT_EQ(none.status, 401u);
  EXPECT_EQ(code_of(none), "auth.required");
  EXPECT_EQ(none.headers["www-authenticate"], "Bearer realm=\"weir\"");

  token_signer stranger{token_signer::alg::hs256};
  auto forged = put(n.bearer(stranger.sign({{"sub", "ada"},
                                            {"iss", "https://id.test"},
                                            {"aud", "weir"},
                                            {"exp", token_signer::now() + 60}})));
  EXPECT_EQ(forged.status, 401u);
  EXPECT_EQ(code_of(forged), "auth.invalid_signature");
  EXPECT_NE(forged.headers["www-authenticate"].find("error=\"invalid_token\""), std::string::npos);

  auto wrong_issuer = put(n.bearer(n.token("ada", {{"iss", "https://evil.test"}})));
  EXPECT_EQ(code_of(wrong_issuer), "auth.wrong_issuer");
  auto wrong_audience = put(n.bearer(n.token("ada", {{"aud", "other"}})));
  EXPECT_EQ(code_of(wrong_audience), "auth.wrong_audience");
  auto expired = put(n.bearer(n.token("ada", {}, -5)));
  EXPECT_EQ(expired.status, 401u);
  EXPECT_EQ(code_of(expired), "auth.token_expired");
  auto early = put(n.bearer(n.token("ada", {{"nbf", token_signer::now() + 120}})));
  EXPECT_EQ(code_of(early), "auth.token_not_yet_valid");

  auto no_role = put(n.bearer(n.token("ada")));
  EXPECT_EQ(no_role.status, 403u);
  EXPECT_EQ(code_of(no_role), "auth.forbidden");
  EXPECT_TRUE(no_role.headers["www-authenticate"].empty());

  // Nothing of the refused writes landed.
  auto nothing =
      http(n.port, "POST", windowed_path("private-a", "object", false),
           R"({"objectId":"o","dataset":"d"})",
           {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + n.token("ada")}});
  EXPECT_EQ(nothing.status, 404u) << nothing.body;  // the space was never written

  auto ok = put(n.bearer(n.token("wes", {{"roles", json::array{"writer"}}})));
  EXPECT_EQ(ok.status, 200u) << ok.body;
  // Open spaces stay open.
  EXPECT_EQ(
      http(n.port, "PUT", "/v1/spaces/t/objects/o/datasets/items/records/r", R"({"n":1})").status,
      200u);
}

TEST(Auth, TheDataServiceTakesTheSameTokensAndRules) {
  auth_node n;
  ASSERT_TRUE(n.node);
  auto stub = weir::v1::Data::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(n.node->grpc_port()), grpc::InsecureChannelCredentials()));
  auto put = [&](const std::string& token) {
    grpc::ClientContext ctx;
    if (!token.empty()) {
      ctx.AddMetadata("authorization", "Bearer " + token);
    }
    weir::v1::PutRecordRequest req;
    req.set_space("private-a");
    req.set_object_id("o");
    req.set_dataset("d");
    req.set_id("r1");
    req.set_record_json(R"({"n":1})");
    weir::v1::WriteReply reply;
    return stub->PutRecord(&ctx, req, &reply);
  };
  EXPECT_EQ(put("").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(put("x.y.z").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(put(n.token("ada", {}, -5)).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  auto no_role = put(n.token("ada"));
  EXPECT_EQ(no_role.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(no_role.error_message().find("auth.forbidden"), std::string::npos)
      << no_role.error_message();
  EXPECT_TRUE(put(n.token("wes", {{"roles", json::array{"writer"}}})).ok());
}

TEST(Auth, AForgedTenantHeaderIsRefused) {
  auth_node n;
  ASSERT_TRUE(n.node);
  auto r = http(n.port, "PUT", "/v1/spaces/t/objects/o/datasets/items/records/r", R"({"n":1})",
                {{"x-cratis-tenant-id", "acme"}});
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(code_of(r), "auth.tenant_forbidden");
  auto mine = http(n.port, "PUT", "/v1/spaces/t/objects/o/datasets/items/records/r", R"({"n":1})",
                   {{"x-cratis-tenant-id", "acme"},
                    {"Authorization", "Bearer " + n.token("ada", {{"tenant", "acme"}})}});
  EXPECT_EQ(mine.status, 200u) << mine.body;
}

TEST(Auth, WhoAmIAnswersForTheCredentials) {
  auth_node n;
  ASSERT_TRUE(n.node);
  auto anon = http(n.port, "GET", "/v1/auth");
  ASSERT_EQ(anon.status, 200u);
  EXPECT_EQ(anon.json(), json::parse(R"({"authorized":false,"accountId":""})"));
  auto ada = http(n.port, "GET", "/v1/auth", "", n.bearer(n.token("ada")));
  EXPECT_EQ(ada.json(), json::parse(R"({"authorized":true,"accountId":"ada"})"));
  auto cookie = http(n.port, "GET", "/v1/auth", "", {{"Cookie", "session=" + n.token("bob")}});
  EXPECT_EQ(cookie.json(), json::parse(R"({"authorized":true,"accountId":"bob"})"));
  auto expired = http(n.port, "GET", "/v1/auth", "", n.bearer(n.token("ada", {}, -1)));
  EXPECT_EQ(expired.status, 200u);
  EXPECT_EQ(expired.json(), json::parse(R"({"authorized":false,"accountId":""})"));
}

TEST(Auth, WebSocketHubAuthorizesEachSubscription) {
  auth_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "r1", R"({"n":1})");
  ws_client anon{n.port};
  anon.expect_connected();
  anon.subscribe("open", "T.Items.All", {{"obj", "o1"}});
  anon.subscribe("secret", "T.Items.Secret", {{"obj", "o1"}});
  anon.read_until([](const json::object& f) { return is_type(f, "QueryResult", "open"); });
  auto denied =
      anon.read_until([](const json::object& f) { return is_type(f, "Unauthorized", "secret"); });
  EXPECT_EQ(denied.at("revision"), 1);

  ws_client ada{n.port, "/.cratis/queries/ws", n.bearer(n.token("ada"))};
  ada.expect_connected();
  ada.subscribe("secret", "T.Items.Secret", {{"obj", "o1"}});
  ada.subscribe("admin", "T.Items.Admin", {{"obj", "o1"}});
  ada.read_until([](const json::object& f) { return is_type(f, "QueryResult", "secret"); });
  ada.read_until([](const json::object& f) { return is_type(f, "Unauthorized", "admin"); });

  // The token as an access_token query parameter (browsers cannot set headers on a WebSocket).
  ws_client root{n.port, "/.cratis/queries/ws?access_token=" +
                             n.token("root", {{"roles", json::array{"admin"}}})};
  root.expect_connected();
  root.subscribe("admin", "T.Items.Admin", {{"obj", "o1"}});
  root.read_until([](const json::object& f) { return is_type(f, "QueryResult", "admin"); });
}

TEST(Auth, ClaimsSelectTheCallersOwnRows) {
  auth_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "notes", "notes", "a1", R"({"owner":"ada","n":1})");
  put_record(n.port, "t", "notes", "notes", "b1", R"({"owner":"bob","n":2})");
  auto rows_of = [&](const std::string& sub) {
    auto r = http(n.port, "GET", "/api/mine", "", n.bearer(n.token(sub)));
    EXPECT_EQ(r.status, 200u) << r.body;
    std::vector<std::string> owners;
    auto body = r.json();
    for (const auto& row : body.at("data").as_array()) {
      owners.emplace_back(row.at("owner").as_string());
    }
    return owners;
  };
  EXPECT_EQ(rows_of("ada"), std::vector<std::string>{"ada"});
  EXPECT_EQ(rows_of("bob"), std::vector<std::string>{"bob"});
  auto anon = http(n.port, "GET", "/api/mine");
  EXPECT_EQ(anon.status, 401u);
  EXPECT_EQ(anon.json().at("isAuthorized"), false);
  // A client cannot pass the claim as an argument.
  auto sneaky = http(n.port, "GET", "/api/mine?claims.sub=bob", "", n.bearer(n.token("ada")));
  EXPECT_EQ(sneaky.status, 400u);
}

TEST(Auth, DirectTransportsAnswerUnauthorized) {
  auth_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "r1", R"({"n":1})");
  auto snap = http(n.port, "GET", "/api/secret?obj=o1");
  EXPECT_EQ(snap.status, 401u);
  EXPECT_EQ(snap.json().at("isAuthorized"), false);
  auto bad = http(n.port, "GET", "/api/secret?obj=o1", "", n.bearer("x.y.z"));
  EXPECT_EQ(bad.status, 401u);
  auto ok = http(n.port, "GET", "/api/secret?obj=o1", "", n.bearer(n.token("ada")));
  EXPECT_EQ(ok.status, 200u);

  ws_client ws{n.port, "/api/secret?obj=o1"};
  auto f = ws.read_json();
  EXPECT_EQ(f.at("type"), "Data");
  EXPECT_EQ(f.at("data").at("isAuthorized"), false);
  EXPECT_FALSE(ws.read(2s));
  ASSERT_TRUE(ws.close_status());
  EXPECT_EQ(ws.close_status()->first, 1008);

  // Direct SSE (arc-hub §10): "a single QueryResult with isAuthorized:false is sent, then the
  // stream ends", for a caller the query refuses and for a credential that does not verify.
  for (const auto& auth : std::vector<std::string>{"", "Bearer x.y.z"}) {
    SCOPED_TRACE(auth.empty() ? "anonymous" : auth);
    sse_client::options o;
    o.target = "/api/secret?obj=o1";
    o.headers = {{"Accept", "text/event-stream"}};
    if (!auth.empty()) {
      o.headers.push_back({"Authorization", auth});
    }
    sse_client direct{n.port, o};
    EXPECT_EQ(direct.status(), 200u);
    EXPECT_EQ(direct.header("content-type").rfind("text/event-stream", 0), 0u);
    auto denied = direct.read_json();
    EXPECT_EQ(denied.at("isAuthorized"), false);
    EXPECT_FALSE(denied.contains("data") && !denied.at("data").is_null());
    EXPECT_TRUE(direct.wait_end(2s));
  }
  // A credential that does not verify is answered before the arguments are looked at.
  sse_client::options o;
  o.target = "/api/secret";  // its `obj` argument missing
  o.headers = {{"Accept", "text/event-stream"}, {"Authorization", "Bearer x.y.z"}};
  sse_client bad_args{n.port, o};
  EXPECT_EQ(bad_args.status(), 200u);
  EXPECT_EQ(bad_args.read_json().at("isAuthorized"), false);
}

TEST(Auth, SseControlPostsAreAuthorizedAsTheirCallerAndOwnedByTheStreamsPrincipal) {
  auth_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "r1", R"({"n":1})");
  auto ada_token = n.token("ada");
  sse_client::options o;
  o.headers = {{"Cookie", "session=" + ada_token}};
  sse_client stream{n.port, o};
  ASSERT_EQ(stream.status(), 200u);
  auto id = stream.expect_connected();
  auto secret = control_body(id, "s", 1, subscription_request("T.Items.Secret", {{"obj", "o1"}}));
  // Anonymous, another principal, a bad token: all 404, as if the connection did not exist.
  EXPECT_EQ(sse_control_post(n.port, "subscribe", secret).status, 404u);
  EXPECT_EQ(
      sse_control_post(n.port, "subscribe", secret, {{"Authorization", "Bearer " + n.token("bob")}})
          .status,
      404u);
  EXPECT_EQ(
      sse_control_post(n.port, "subscribe", secret, {{"Authorization", "Bearer x.y.z"}}).status,
      404u);
  // Its own principal: 200 and the result; a query it may not run: 401 and Unauthorized.
  EXPECT_EQ(
      sse_control_post(n.port, "subscribe", secret, {{"Authorization", "Bearer " + ada_token}})
          .status,
      200u);
  stream.read_through([](const json::object& f) { return is_type(f, "QueryResult", "s"); });
  auto admin = control_body(id, "a", 1, subscription_request("T.Items.Admin", {{"obj", "o1"}}));
  EXPECT_EQ(
      sse_control_post(n.port, "subscribe", admin, {{"Cookie", "session=" + ada_token}}).status,
      401u);
  stream.read_through([](const json::object& f) { return is_type(f, "Unauthorized", "a"); });
}

TEST(Auth, HubsCanRequireASignedInCaller) {
  auth_node n{"  hubs: authenticated\n"};
  ASSERT_TRUE(n.node);
  ws_client anon{n.port};
  EXPECT_FALSE(anon.read(3s));
  ASSERT_TRUE(anon.close_status());
  EXPECT_EQ(*anon.close_status(), (std::pair<int, std::string>{1008, "Unauthorized"}));
  sse_client sse{n.port};
  EXPECT_EQ(sse.status(), 401u);
  ws_client ada{n.port, "/.cratis/queries/ws", n.bearer(n.token("ada"))};
  ada.expect_connected();
}

TEST(Auth, TheHealthFeedShowsAPrincipalItsOwnConnectionsOnly) {
  auth_node n;
  ASSERT_TRUE(n.node);
  ws_client ada{n.port, "/.cratis/queries/ws", n.bearer(n.token("ada"))};
  auto ada_conn = ada.expect_connected();
  ws_client bob{n.port, "/.cratis/queries/ws", n.bearer(n.token("bob"))};
  bob.expect_connected();
  ws_client anon{n.port};
  anon.expect_connected();

  EXPECT_EQ(http(n.port, "GET", "/.cratis/queries/health").status, 401u);
  {
    // Read as a stream, the refusal is the stream's one QueryResult (arc-hub §10).
    sse_client::options o;
    o.target = "/.cratis/queries/health";
    o.headers = {{"Accept", "text/event-stream"}};
    sse_client anon_feed{n.port, o};
    EXPECT_EQ(anon_feed.status(), 200u);
    EXPECT_EQ(anon_feed.read_json().at("isAuthorized"), false);
    EXPECT_TRUE(anon_feed.wait_end(2s));
  }
  auto feed = http(n.port, "GET", "/.cratis/queries/health", "", n.bearer(n.token("ada")));
  ASSERT_EQ(feed.status, 200u) << feed.body;
  auto feed_json = feed.json();
  const auto& conns = feed_json.at("data").at("connections").as_array();
  ASSERT_EQ(conns.size(), 1u) << feed.body;
  EXPECT_EQ(conns[0].at("connectionId").as_string(), ada_conn);

  anon.subscribe("h", "QueryHealth.ObserveHealth");
  anon.read_until([](const json::object& f) { return is_type(f, "Unauthorized", "h"); });
}

TEST(Auth, WindowedApiChecksTheSpaceRule) {
  auth_node n;
  ASSERT_TRUE(n.node);
  http(n.port, "PUT", "/v1/spaces/private-a/objects/o/datasets/d/records/r1", R"({"n":1})",
       n.bearer(n.token("wes", {{"roles", json::array{"writer"}}})));
  auto anon = windowed_query(n.port, "private-a", "object", R"({"objectId":"o","dataset":"d"})");
  EXPECT_EQ(anon.status, 401u);
  EXPECT_EQ(code_of(anon), "auth.required");
  windowed_stream refused{n.port, "private-a", "object", R"({"objectId":"o","dataset":"d"})"};
  EXPECT_EQ(refused.status(), 401u);

  windowed_stream ok{n.port,
                     "private-a",
                     "object",
                     R"({"objectId":"o","dataset":"d"})",
                     {{"Authorization", "Bearer " + n.token("ada")}}};
  EXPECT_EQ(ok.open().at("records").as_array().size(), 1u);
}

TEST(Auth, TheStateStreamFollowsTheSpaceRuleAndEndsWhenItsCredentialExpires) {
  auth_node n;
  ASSERT_TRUE(n.node);
  http(n.port, "PUT", "/v1/spaces/private-a/objects/o", R"({"n":1})",
       n.bearer(n.token("wes", {{"roles", json::array{"writer"}}})));
  auto anon = http(n.port, "GET", "/v1/spaces/private-a/objects/o/state", "",
                   {{"Accept", "text/event-stream"}});
  EXPECT_EQ(anon.status, 401u);
  EXPECT_EQ(code_of(anon), "auth.required");
  EXPECT_EQ(anon.headers["www-authenticate"], "Bearer realm=\"weir\"");
  sse_client::options o;
  o.target = "/v1/spaces/private-a/objects/o/state";
  o.headers = {{"Accept", "text/event-stream"}, {"Cookie", "session=" + n.token("ada", {}, 3)}};
  sse_client s{n.port, o};
  ASSERT_EQ(s.status(), 200u);
  EXPECT_EQ(s.read_json().at("type"), "STATE_SNAPSHOT");
  auto end = s.read_json(8s);
  EXPECT_EQ(end.at("type"), "RUN_ERROR") << json::serialize(end);
  EXPECT_EQ(end.at("code"), "auth.expired");
  EXPECT_TRUE(s.wait_end(2s));
}

TEST(Auth, AnOversizedBodyRevealsNothingAboutAProtectedSpace) {
  // Over http.maxBodyBytes the space is looked up before the body (404 or 413): not for a
  // caller the space's rule refuses.
  auth_node n{"http: { maxBodyBytes: 1024 }\n"};
  ASSERT_TRUE(n.node);
  auto probe = windowed_query(n.port, "private-unknown", "object", std::string(2048, ' '));
  EXPECT_EQ(probe.status, 401u);
  EXPECT_EQ(code_of(probe), "auth.required");
  auto signed_in = http(
      n.port, "POST", windowed_path("private-unknown", "object", false), std::string(2048, ' '),
      {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + n.token("ada")}});
  EXPECT_EQ(signed_in.status, 404u);
}

TEST(Auth, ATokenThatNeverExpiresKeepsItsSubscriptions) {
  // exp at the end of year 9999: far beyond what timers count in nanoseconds. Nothing may end
  // early (or spin re-arming a timer that fires at once).
  auth_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "r1", R"({"n":1})");
  auto forever = n.signer.sign({{"sub", "ada"},
                                {"iss", "https://id.test"},
                                {"aud", "weir"},
                                {"exp", std::int64_t{253402300799}}});
  ws_client ws{n.port, "/.cratis/queries/ws", n.bearer(forever)};
  ws.expect_connected();
  ws.subscribe("secret", "T.Items.Secret", {{"obj", "o1"}});
  ws.read_until([](const json::object& f) { return is_type(f, "QueryResult", "secret"); });
  put_record(n.port, "t", "o1", "items", "r2", R"({"n":2})");
  auto next = ws.read_json();  // the change, not an Unauthorized
  EXPECT_TRUE(is_type(next, "QueryResult", "secret")) << json::serialize(next);
  http(n.port, "PUT", "/v1/spaces/private-a/objects/o/datasets/d/records/r1", R"({"n":1})",
       n.bearer(n.token("wes", {{"roles", json::array{"writer"}}})));
  windowed_stream windowed{n.port,
                           "private-a",
                           "object",
                           R"({"objectId":"o","dataset":"d"})",
                           {{"Authorization", "Bearer " + forever}}};
  windowed.open();
  EXPECT_FALSE(windowed.next(1s, true)) << "the stream ended";
  // A date past year 9999 is not a NumericDate this server accepts.
  auto beyond = n.signer.sign({{"sub", "ada"},
                               {"iss", "https://id.test"},
                               {"aud", "weir"},
                               {"exp", std::int64_t{1} << 62}});
  auto r = http(n.port, "GET", "/v1/auth", "", n.bearer(beyond));
  EXPECT_EQ(r.json(), json::parse(R"({"authorized":false,"accountId":""})"));
}

// The emission guards: each transport ends what the credential allowed when it expires.
TEST(Auth, ExpiringCredentialsEndTheirSubscriptions) {
  auth_node n;
  ASSERT_TRUE(n.node);
  put_record(n.port, "t", "o1", "items", "r1", R"({"n":1})");
  http(n.port, "PUT", "/v1/spaces/private-a/objects/o/datasets/d/records/r1", R"({"n":1})",
       n.bearer(n.token("wes", {{"roles", json::array{"writer"}}})));
  auto short_lived = n.token("ada", {}, 4);

  ws_client ws{n.port, "/.cratis/queries/ws", n.bearer(short_lived)};
  ws.expect_connected();
  ws.subscribe("open", "T.Items.All", {{"obj", "o1"}});
  ws.subscribe("secret", "T.Items.Secret", {{"obj", "o1"}});
  ws.read_until([](const json::object& f) { return is_type(f, "QueryResult", "secret"); });

  sse_client::options o;
  o.headers = {{"Cookie", "session=" + short_lived}, {"Accept", "text/event-stream"}};
  o.target = "/api/secret?obj=o1";
  sse_client direct{n.port, o};
  ASSERT_EQ(direct.status(), 200u);
  EXPECT_EQ(direct.read_json().at("isAuthorized"), true);

  ws_client direct_ws{n.port, "/api/secret?obj=o1", n.bearer(short_lived)};
  auto first = direct_ws.read_json();
  EXPECT_EQ(first.at("type"), "Data");
  EXPECT_EQ(first.at("data").at("isAuthorized"), true);

  windowed_stream windowed{n.port,
                           "private-a",
                           "object",
                           R"({"objectId":"o","dataset":"d"})",
                           {{"Authorization", "Bearer " + short_lived}}};
  windowed.open();
  // On a space anyone may read, a stream opened with the credential ends with it too
  // (windowed-subscribe decision 5): a request with it would be refused 401 from then on.
  windowed_stream open_space{n.port,
                             "t",
                             "object",
                             R"({"objectId":"o1","dataset":"items"})",
                             {{"Authorization", "Bearer " + short_lived}}};
  open_space.open();

  sse_client::options h;
  h.headers = {{"Cookie", "session=" + short_lived}};
  sse_client hub{n.port, h};
  auto conn = hub.expect_connected();
  ASSERT_EQ(sse_control_post(
                n.port, "subscribe",
                control_body(conn, "s", 1, subscription_request("T.Items.Secret", {{"obj", "o1"}})),
                {{"Cookie", "session=" + short_lived}})
                .status,
            200u);
  hub.read_through([](const json::object& f) { return is_type(f, "QueryResult", "s"); });

  auto denied =
      ws.read_until([](const json::object& f) { return is_type(f, "Unauthorized", "secret"); }, 8s);
  EXPECT_EQ(denied.at("revision"), 1);
  EXPECT_EQ(direct.read_json(8s).at("isAuthorized"), false);
  EXPECT_TRUE(direct.wait_end(2s));
  // The direct WebSocket: a Data frame with isAuthorized:false, then close 1008 (arc-hub §10).
  auto ws_denied = direct_ws.read_json(8s);
  EXPECT_EQ(ws_denied.at("type"), "Data");
  EXPECT_EQ(ws_denied.at("data").at("isAuthorized"), false);
  EXPECT_FALSE(direct_ws.read(2s));
  ASSERT_TRUE(direct_ws.close_status());
  EXPECT_EQ(direct_ws.close_status()->first, 1008);
  while (auto f = windowed.next(8s)) {
    windowed.apply(*f);
    if (f->event == "closed") {
      break;
    }
  }
  EXPECT_EQ(windowed.closed_reason(), "deauthorized");
  while (auto f = open_space.next(8s)) {
    open_space.apply(*f);
    if (f->event == "closed") {
      break;
    }
  }
  EXPECT_EQ(open_space.closed_reason(), "deauthorized");
  hub.read_through([](const json::object& f) { return is_type(f, "Unauthorized", "s"); }, 8s);
  // The anonymous sibling on the WebSocket lives on.
  put_record(n.port, "t", "o1", "items", "r2", R"({"n":2})");
  ws.read_until([](const json::object& f) { return is_type(f, "QueryResult", "open"); });
}

}  // namespace
}  // namespace weir::test

// `weir query-subscribe` and `weir query` (apps/windowed_client) against a live node: the real
// binary prints one {"event":…,"data":…} object per frame as the stream goes (so it pipes through
// jq), stops after --frames, sends the body its flags describe, and reports a refused request.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "process_support.hpp"
#include "test_support.hpp"

namespace weir::test {
namespace {

namespace json = boost::json;

/// The next stdout line of `p` that is a JSON object whose "event" is `event`.
std::optional<json::object> next_frame(child_process& p, const std::string& event) {
  auto line = p.wait_line(
      [&](const std::string& l) {
        boost::system::error_code ec;
        auto v = json::parse(l, ec);
        return !ec && v.is_object() && v.as_object().if_contains("event") &&
               v.as_object().at("event") == json::value(event);
      },
      10s);
  if (!line) {
    return std::nullopt;
  }
  return json::parse(*line).as_object();
}

TEST(WindowedCli, QuerySubscribePrintsOneJsonObjectPerFrameAsTheStreamGoes) {
  temp_dir dir;
  auto node = start_node(dir.path());
  auto port = node->http_port();
  auto url = "http://127.0.0.1:" + std::to_string(port);
  put_record(port, "t", "c", "msgs", "m1", R"({"n":1})");
  put_record(port, "t", "c", "msgs", "m2", R"({"n":2})");
  child_process sub{{WEIR_BINARY, "query-subscribe", "t", "c", "--dataset", "msgs", "--sort", "-n",
                     "--limit", "1", "--total", "--projection", R"({"n":1})", "--url", url,
                     "--frames", "3"}};
  auto ready = next_frame(sub, "ready");
  ASSERT_TRUE(ready) << sub.stderr_text();
  EXPECT_EQ(ready->at("data"), json::object{});
  auto snap = next_frame(sub, "snapshot");
  ASSERT_TRUE(snap) << sub.stderr_text();
  const auto& data = snap->at("data").as_object();
  ASSERT_EQ(data.at("records").as_array().size(), 1u) << json::serialize(*snap);
  const auto& first = data.at("records").as_array()[0].as_object();
  EXPECT_EQ(first.at("id"), "m2");
  EXPECT_EQ(first.at("n"), 2);
  EXPECT_EQ(data.at("total"), 2);
  EXPECT_EQ(data.at("hasNext"), true);
  // A write now reaches the running command as its own line, before the command ends.
  auto v3 = put_record(port, "t", "c", "msgs", "m3", R"({"n":3})");
  auto changes = next_frame(sub, "changes");
  ASSERT_TRUE(changes) << sub.stderr_text();
  const auto& ev = changes->at("data").as_array().at(0).as_object();
  EXPECT_EQ(ev.at("versionId"), json::value(v3));
  EXPECT_EQ(ev.at("added").as_array().at(0).as_object().at("id"), "m3");
  EXPECT_EQ(ev.at("removed"), json::parse(R"([{"id":"m2","reason":"displaced"}])"));
  // --frames 3: the command ends by itself after the third frame.
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (sub.running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_FALSE(sub.running());
}

TEST(WindowedCli, QueryPrintsTheSnapshotAndARefusalNamesItsCode) {
  temp_dir dir;
  auto node = start_node(dir.path());
  auto port = node->http_port();
  auto url = "http://127.0.0.1:" + std::to_string(port);
  put_record(port, "t", "c", "msgs", "m1", R"({"n":1,"k":"a"})");
  put_record(port, "t", "c", "msgs", "m2", R"({"n":2,"k":"b"})");
  put_record(port, "t", "c", "msgs", "m3", R"({"n":3,"k":"a"})");
  {
    child_process q{{WEIR_BINARY, "query", "t", "c", "--dataset", "msgs", "--filter",
                     R"({"k":"a"})", "--sort", "-n", "--url", url}};
    auto line = q.wait_line([](const std::string& l) { return l.starts_with("{"); }, 10s);
    ASSERT_TRUE(line) << q.stderr_text();
    auto body = json::parse(*line).as_object();
    const auto& records = body.at("records").as_array();
    ASSERT_EQ(records.size(), 2u) << *line;
    EXPECT_EQ(records[0].as_object().at("id"), "m3");
    EXPECT_EQ(records[1].as_object().at("id"), "m1");
  }
  {
    // `limit` without `sort` is the server's request.invalid_field; the command says so.
    child_process bad{{WEIR_BINARY, "query-subscribe", "t", "c", "--dataset", "msgs", "--limit",
                       "5", "--url", url}};
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (bad.running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    EXPECT_FALSE(bad.running());
    auto err = bad.stderr_text();
    EXPECT_NE(err.find("400"), std::string::npos) << err;
    EXPECT_NE(err.find("request.invalid_field"), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace weir::test

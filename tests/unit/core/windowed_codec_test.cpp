// Tests for core/windowed_codec (windowed-subscribe §4, §9): the snapshot frame's data, the
// records list, and one event of a `changes` frame, with and without a projection.
#include "core/windowed_codec.hpp"

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

using boost::json::parse;

record_ptr rec(const char* json) {
  auto r = make_record(parse(json).as_object());
  EXPECT_FALSE(r->id.empty()) << json;
  return r;
}

projection proj(const char* spec) {
  auto p = projection::parse(parse(spec));
  EXPECT_TRUE(p) << spec;
  return p ? std::move(p).value() : projection{};
}

std::shared_ptr<const change_ops> create_ops(const char* json) {
  return std::make_shared<const change_ops>(ops_for_replace(nullptr, parse(json).as_object()));
}

std::shared_ptr<const change_ops> patch_ops(const char* before, const char* body) {
  auto spec = parse_update(parse(body));
  EXPECT_TRUE(spec) << body;
  auto after = parse(before).as_object();
  EXPECT_TRUE(apply_update(*spec, after)) << body;
  return std::make_shared<const change_ops>(ops_for_update(*spec, after));
}

// ---- snapshot ------------------------------------------------------------------------------

TEST(WindowedCodec, SnapshotWithoutTotal) {
  EXPECT_EQ(encode_windowed_snapshot("[]", std::nullopt, 0, 0), R"({"records":[]})");
  EXPECT_EQ(encode_windowed_snapshot(R"([{"id":"a"}])", std::nullopt, 5, 1),
            R"({"records":[{"id":"a"}]})");
}

TEST(WindowedCodec, SnapshotWithTotal) {
  EXPECT_EQ(encode_windowed_snapshot("[]", 0, 0, 0), R"({"records":[],"total":0,"hasNext":false})");
  EXPECT_EQ(encode_windowed_snapshot(R"([{"id":"a"},{"id":"b"}])", 17, 0, 2),
            R"({"records":[{"id":"a"},{"id":"b"}],"total":17,"hasNext":true})");
  // hasNext = offset + count < total.
  EXPECT_EQ(encode_windowed_snapshot("[1,2]", 5, 2, 2),
            R"({"records":[1,2],"total":5,"hasNext":true})");
  EXPECT_EQ(encode_windowed_snapshot("[1,2]", 5, 3, 2),
            R"({"records":[1,2],"total":5,"hasNext":false})");
  EXPECT_EQ(encode_windowed_snapshot("[1,2]", 4, 3, 2),
            R"({"records":[1,2],"total":4,"hasNext":false})");
  // An offset past the end: nothing next.
  EXPECT_EQ(encode_windowed_snapshot("[]", 3, 10, 0),
            R"({"records":[],"total":3,"hasNext":false})");
  EXPECT_EQ(encode_windowed_snapshot("[]", 3, 2, 0), R"({"records":[],"total":3,"hasNext":true})");
}

TEST(WindowedCodec, RecordsKeepStoredBytesWithoutProjection) {
  // Stored bytes are reused as they are (not re-serialized).
  auto odd = std::make_shared<record>(record{"x", R"({"id":"x", "n":1.50})", true});
  std::vector<record_ptr> rows{rec(R"({"id":"a","n":1,"_ver":{"id":"1"}})"), odd};
  EXPECT_EQ(encode_windowed_records(rows, projection{}),
            R"([{"id":"a","n":1,"_ver":{"id":"1"}},{"id":"x", "n":1.50}])");
  EXPECT_EQ(encode_windowed_records({}, projection{}), "[]");
  EXPECT_EQ(encode_windowed_records({}, proj(R"({"n":1})")), "[]");
}

TEST(WindowedCodec, RecordsThroughProjection) {
  std::vector<record_ptr> rows{rec(R"({"id":"a","n":1,"t":"x","_traces":[],"_ver":{"id":"1"}})"),
                               rec(R"({"id":"b","t":"y","_ver":{"id":"2"}})")};
  EXPECT_EQ(encode_windowed_records(rows, proj(R"({"n":1})")),
            R"([{"id":"a","n":1,"_ver":{"id":"1"}},{"id":"b","_ver":{"id":"2"}}])");
  EXPECT_EQ(encode_windowed_records(rows, proj(R"({"t":0,"_ver":0})")),
            R"([{"id":"a","n":1},{"id":"b"}])");

  std::string out = "<";
  append_windowed_doc(out, *rows[1], proj(R"({"t":1})"));
  EXPECT_EQ(out, R"(<{"id":"b","t":"y","_ver":{"id":"2"}})");
}

// ---- changes event -------------------------------------------------------------------------

TEST(WindowedCodec, EmptyDeltaIsNothing) {
  window_delta d;
  EXPECT_EQ(encode_windowed_event("v1", d, projection{}), "");
  d.total = 12;  // a count alone is no event
  EXPECT_EQ(encode_windowed_event("v1", d, projection{}), "");
  EXPECT_EQ(encode_windowed_event("v1", d, proj(R"({"a":1})")), "");
}

TEST(WindowedCodec, FullEvent) {
  auto r0 = rec(R"({"id":"msg_0","text":"old","_ver":{"id":"0"}})");
  auto r1 = rec(R"({"id":"msg_1","text":"hello!","_ver":{"id":"2"}})");
  auto r2 = rec(R"({"id":"msg_2","text":"hi","_ver":{"id":"2"}})");
  auto r3 = rec(R"({"id":"msg_3","text":"gone","_ver":{"id":"1"}})");
  auto r4 = rec(R"({"id":"msg_4","text":"other","_ver":{"id":"1"}})");
  window_delta d;
  d.removed = {{r0, removal_reason::displaced},
               {r3, removal_reason::deleted},
               {r4, removal_reason::filtered_out}};
  d.upserts = {
      {0, r2, true, create_ops(R"({"id":"msg_2","text":"hi","_ver":{"id":"2"}})")},
      {1, r1, false,
       patch_ops(R"({"id":"msg_1","text":"hello"})", R"({"$set":{"text":"hello!"}})")},
  };
  d.total = 40;
  EXPECT_EQ(encode_windowed_event("!!%>", d, projection{}),
            R"({"versionId":"!!%>",)"
            R"("added":[{"id":"msg_2","doc":{"id":"msg_2","text":"hi","_ver":{"id":"2"}},)"
            R"("ops":[{"type":"$set","path":[],"payload":{"text":"hi"}}]}],)"
            R"("updated":[{"id":"msg_1","doc":{"id":"msg_1","text":"hello!","_ver":{"id":"2"}},)"
            R"("ops":[{"type":"$set","path":["text"],"payload":"hello!"}]}],)"
            R"("removed":[{"id":"msg_0","reason":"displaced"},{"id":"msg_3","reason":"deleted"},)"
            R"({"id":"msg_4","reason":"filtered-out"}]})");
}

TEST(WindowedCodec, ListsGroupedInOrderAndEmptyOnesOmitted) {
  auto a = rec(R"({"id":"a","n":1})");
  auto b = rec(R"({"id":"b","n":2})");
  auto c = rec(R"({"id":"c","n":3})");

  // Interleaved upserts: every added one first (in upsert order), then every updated one.
  window_delta mixed;
  mixed.upserts = {{0, a, false, nullptr}, {1, b, true, nullptr}, {2, c, true, nullptr}};
  EXPECT_EQ(encode_windowed_event("v", mixed, projection{}),
            R"({"versionId":"v","added":[{"id":"b","doc":{"id":"b","n":2}},)"
            R"({"id":"c","doc":{"id":"c","n":3}}],)"
            R"("updated":[{"id":"a","doc":{"id":"a","n":1}}]})");

  window_delta only_updated;
  only_updated.upserts = {{0, a, false, nullptr}};
  EXPECT_EQ(encode_windowed_event("v", only_updated, projection{}),
            R"({"versionId":"v","updated":[{"id":"a","doc":{"id":"a","n":1}}]})");

  window_delta only_added;
  only_added.upserts = {{3, c, true, nullptr}};
  EXPECT_EQ(encode_windowed_event("v", only_added, projection{}),
            R"({"versionId":"v","added":[{"id":"c","doc":{"id":"c","n":3}}]})");

  // A synthetic removal (object deletion) has an empty versionId.
  window_delta only_removed;
  only_removed.removed = {{a, removal_reason::deleted}, {b, removal_reason::deleted}};
  EXPECT_EQ(encode_windowed_event("", only_removed, projection{}),
            R"({"versionId":"","removed":[{"id":"a","reason":"deleted"},)"
            R"({"id":"b","reason":"deleted"}]})");
}

TEST(WindowedCodec, OpsOmittedWhenNullOrEmpty) {
  auto a = rec(R"({"id":"a","n":1})");
  window_delta d;
  d.upserts = {{0, a, true, nullptr},
               {1, a, false, std::make_shared<const change_ops>()},
               {2, a, false, create_ops(R"({"id":"a","_ver":{"id":"1"}})")}};
  EXPECT_EQ(encode_windowed_event("v", d, projection{}),
            R"({"versionId":"v","added":[{"id":"a","doc":{"id":"a","n":1}}],)"
            R"("updated":[{"id":"a","doc":{"id":"a","n":1}},{"id":"a","doc":{"id":"a","n":1}}]})");
  EXPECT_EQ(encode_windowed_event("v", d, proj(R"({"n":1})")),
            R"({"versionId":"v","added":[{"id":"a","doc":{"id":"a","n":1}}],)"
            R"("updated":[{"id":"a","doc":{"id":"a","n":1}},{"id":"a","doc":{"id":"a","n":1}}]})");
}

TEST(WindowedCodec, ProjectionAppliedToDocsAndOps) {
  auto r1 = rec(R"({"id":"m1","text":"x","n":2,"_traces":[1],"_ver":{"id":"3"}})");
  auto r2 = rec(R"({"id":"m2","text":"y","n":1,"_ver":{"id":"3"}})");
  window_delta d;
  d.upserts = {
      // Only a field outside the projection changed: the doc is shipped, ops are omitted.
      {0, r1, false, patch_ops(R"({"id":"m1","text":"x","n":1})", R"({"$inc":{"n":1}})")},
      // A create: the root multi-set keeps only the projected keys.
      {1, r2, true, create_ops(R"({"id":"m2","text":"y","n":1,"_ver":{"id":"3"}})")},
  };
  d.removed = {{rec(R"({"id":"m0","text":"z"})"), removal_reason::filtered_out}};
  auto p = proj(R"({"text":1})");
  EXPECT_EQ(encode_windowed_event("v9", d, p),
            R"({"versionId":"v9",)"
            R"("added":[{"id":"m2","doc":{"id":"m2","text":"y","_ver":{"id":"3"}},)"
            R"("ops":[{"type":"$set","path":[],"payload":{"text":"y"}}]}],)"
            R"("updated":[{"id":"m1","doc":{"id":"m1","text":"x","_ver":{"id":"3"}}}],)"
            R"("removed":[{"id":"m0","reason":"filtered-out"}]})");

  // The same delta unprojected ships everything.
  EXPECT_EQ(encode_windowed_event("v9", d, projection{}),
            R"({"versionId":"v9",)"
            R"("added":[{"id":"m2","doc":{"id":"m2","text":"y","n":1,"_ver":{"id":"3"}},)"
            R"("ops":[{"type":"$set","path":[],"payload":{"text":"y","n":1}}]}],)"
            R"("updated":[{"id":"m1","doc":{"id":"m1","text":"x","n":2,"_traces":[1],)"
            R"("_ver":{"id":"3"}},"ops":[{"type":"$set","path":["n"],"payload":2}]}],)"
            R"("removed":[{"id":"m0","reason":"filtered-out"}]})");

  // Ops partly inside the projection keep only their projected part.
  auto r3 = rec(R"({"id":"m3","text":"t","meta":{"a":1,"b":2},"_ver":{"id":"4"}})");
  window_delta partial;
  partial.upserts = {{0, r3, false,
                      patch_ops(R"({"id":"m3","text":"s","meta":{}})",
                                R"({"$set":{"text":"t","meta":{"a":1,"b":2}}})")}};
  EXPECT_EQ(encode_windowed_event("v10", partial, proj(R"({"meta.a":1})")),
            R"({"versionId":"v10","updated":[{"id":"m3","doc":{"id":"m3","meta":{"a":1},)"
            R"("_ver":{"id":"4"}},"ops":[{"type":"$set","path":["meta"],"payload":{"a":1}}]}]})");
}

TEST(WindowedCodec, StringsAreEscaped) {
  auto r = rec(R"({"id":"q\"uo\\te\n","v":"\u0001"})");
  ASSERT_EQ(r->id, "q\"uo\\te\n");
  window_delta d;
  d.upserts = {{0, r, true, nullptr}};
  d.removed = {{r, removal_reason::deleted}};
  EXPECT_EQ(encode_windowed_event("v\"1\\", d, projection{}),
            R"({"versionId":"v\"1\\","added":[{"id":"q\"uo\\te\n","doc":)" + r->json +
                R"(}],"removed":[{"id":"q\"uo\\te\n","reason":"deleted"}]})");
  // The id inside a projected doc is escaped too.
  d.removed.clear();
  EXPECT_EQ(encode_windowed_event("v", d, proj(R"({"v":0})")),
            R"({"versionId":"v","added":[{"id":"q\"uo\\te\n","doc":{"id":"q\"uo\\te\n"}}]})");
  // And every event parses as JSON.
  auto text = encode_windowed_event("v\"1\\", d, projection{});
  boost::system::error_code ec;
  auto parsed = parse(text, ec);
  ASSERT_FALSE(ec) << text;
  EXPECT_EQ(parsed.at("added").at(0).at("id"), "q\"uo\\te\n");
}

}  // namespace
}  // namespace weir::core

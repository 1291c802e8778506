// Random single-document writes and the patch follower check (see patch_follower.hpp).
#include "patch_follower.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include <boost/json.hpp>

#include "core/json_patch.hpp"

namespace weir::test {

namespace json = boost::json;

std::string random_document_writer::step() {
  if (!exists_) {
    return put();
  }
  switch (pick(10)) {
    case 0:
      return remove();
    case 1:
    case 2:
    case 3:
      return json_patch();
    default:
      return put();
  }
}

std::string random_document_writer::put() {
  // Mutate the last document a little, as an application does: a counter, a name, the items
  // (an id-keyed array: insert, drop, move, change), a nested object.
  if (!exists_) {
    // A description, as real documents have: what a patch need not repeat.
    doc_ = json::object{{"n", 0},
                        {"name", "start"},
                        {"about", std::string(200, 'a')},
                        {"meta", json::object{{"owner", "ada"}, {"level", 1}}},
                        {"items", json::array{}}};
  }
  auto& items = doc_["items"].as_array();
  for (int k = 0, changes = 1 + pick(3); k < changes; ++k) {
    switch (pick(6)) {
      case 0:
        doc_["n"] = doc_["n"].to_number<std::int64_t>() + 1 + pick(5);
        break;
      case 1:
        doc_["name"] = "name-" + std::to_string(pick(1000));
        break;
      case 2:
        items.insert(items.begin() + pick(static_cast<int>(items.size()) + 1),
                     json::object{{"id", "i" + std::to_string(next_item_++)}, {"v", pick(100)}});
        break;
      case 3:
        if (!items.empty()) {
          items.erase(items.begin() + pick(static_cast<int>(items.size())));
        }
        break;
      case 4:
        if (items.size() > 1) {
          auto a = pick(static_cast<int>(items.size()));
          auto b = pick(static_cast<int>(items.size()));
          std::swap(items[a], items[b]);
        }
        break;
      default:
        if (!items.empty()) {
          items[pick(static_cast<int>(items.size()))].as_object()["v"] = pick(100);
        } else {
          doc_["meta"].as_object()["level"] = pick(10);
        }
    }
  }
  auto r = http(port_, "PUT", "/v1/spaces/t/objects/" + object_, json::serialize(doc_));
  EXPECT_EQ(r.status, 200u) << r.body;
  exists_ = r.status == 200;
  return r.status == 200 ? std::string{r.json().at("versionId").as_string()} : "";
}

std::string random_document_writer::json_patch() {
  json::array ops;
  switch (pick(3)) {
    case 0:
      ops.push_back(json::object{{"op", "replace"}, {"path", "/name"}, {"value", "patched"}});
      break;
    case 1:
      ops.push_back(json::object{
          {"op", "add"},
          {"path", "/items/-"},
          {"value", json::object{{"id", "i" + std::to_string(next_item_++)}, {"v", pick(100)}}}});
      break;
    default:
      ops.push_back(json::object{{"op", "add"}, {"path", "/extra"}, {"value", pick(100)}});
      ops.push_back(json::object{{"op", "remove"}, {"path", "/extra"}});
      ops.push_back(json::object{{"op", "copy"}, {"from", "/meta"}, {"path", "/meta2"}});
  }
  auto r = http(port_, "PATCH", "/v1/spaces/t/objects/" + object_, json::serialize(ops),
                {{"Content-Type", "application/json-patch+json"}});
  EXPECT_EQ(r.status, 200u) << r.body;
  if (r.status != 200) {
    return "";
  }
  json::value d = doc_;
  EXPECT_TRUE(core::apply_patch(d, ops));
  doc_ = d.as_object();
  return std::string{r.json().at("versionId").as_string()};
}

std::string random_document_writer::remove() {
  auto r = http(port_, "DELETE", "/v1/spaces/t/objects/" + object_);
  EXPECT_EQ(r.status, 200u) << r.body;
  exists_ = false;
  doc_ = {};
  return r.status == 200 ? std::string{r.json().at("versionId").as_string()} : "";
}

namespace {

/// The patch mode's client rules: an emission with `patch` patches the copy; one without is a
/// baseline (`data`, or no document).
struct patch_follower {
  std::optional<json::value> doc;
  std::size_t patches = 0;
  std::size_t patch_bytes = 0;
  std::size_t doc_bytes = 0;

  void apply(const json::object& payload) {
    if (const auto* p = payload.if_contains("patch")) {
      EXPECT_FALSE(payload.contains("data"));
      ASSERT_TRUE(doc) << "a patch without a baseline";
      auto r = core::apply_patch(*doc, *p);
      ASSERT_TRUE(r) << r.error().message << ": " << json::serialize(*p);
      ++patches;
      patch_bytes += json::serialize(*p).size();
      doc_bytes += json::serialize(*doc).size();
      return;
    }
    doc.reset();
    if (const auto* d = payload.if_contains("data")) {
      doc = *d;
    }
  }
};

bool shows(const std::optional<json::value>& doc, bool exists, const std::string& version) {
  if (!exists) {
    return !doc;
  }
  if (!doc || !doc->is_object()) {
    return false;
  }
  const auto* v = doc->as_object().if_contains("_ver");
  return v && v->is_object() && v->as_object().contains("id") &&
         v->as_object().at("id") == json::value(version);
}

}  // namespace

void expect_patch_follower_converges(ws_client& ws, std::uint16_t read_port,
                                     random_document_writer& writer, int writes) {
  json::object args{{"obj", writer.object()}};
  ws.subscribe("qp", "T.Objects.One", args, 1, "patch");
  ws.subscribe("qf", "T.Objects.One", args, 1, "full");
  patch_follower follower;
  std::optional<json::value> full;
  auto take = [&](const json::object& f) {
    ASSERT_EQ(f.at("type"), "QueryResult") << json::serialize(f);
    const auto& p = f.at("payload").as_object();
    if (f.at("queryId") == "qp") {
      follower.apply(p);
    } else {
      full.reset();
      if (const auto* d = p.if_contains("data")) {
        full = *d;
      }
    }
  };
  take(ws.read_json());
  take(ws.read_json());
  for (int i = 0; i < writes; ++i) {
    auto version = writer.step();
    ASSERT_FALSE(version.empty());
    while (!shows(follower.doc, writer.exists(), version) ||
           !shows(full, writer.exists(), version)) {
      auto f = ws.read_json();
      ASSERT_FALSE(f.empty()) << "write " << i << " never arrived";
      take(f);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
    ASSERT_EQ(follower.doc, full) << "after write " << i;
  }
  auto fresh = http(read_port, "GET", "/api/t/objects/one?obj=" + writer.object());
  ASSERT_EQ(fresh.status, 200u) << fresh.body;
  auto fresh_doc = fresh.json().as_object();
  if (writer.exists()) {
    EXPECT_EQ(follower.doc, std::optional<json::value>{fresh_doc.at("data")});
  } else {
    EXPECT_FALSE(fresh_doc.contains("data"));
  }
  EXPECT_GT(follower.patches, static_cast<std::size_t>(writes / 2));
  EXPECT_LT(follower.patch_bytes, follower.doc_bytes) << "patches should be smaller than documents";
  std::printf("patch follower: %zu patches, mean patch %zu B, mean document %zu B\n",
              follower.patches, follower.patch_bytes / std::max<std::size_t>(1, follower.patches),
              follower.doc_bytes / std::max<std::size_t>(1, follower.patches));
}

}  // namespace weir::test

// core/json_scan against the full parse: on random documents (nested objects, arrays, escaped
// strings and keys, numbers of every kind, literals, whitespace, duplicate keys), whatever the
// scanner answers must be what the parsed document says; where it cannot answer it must say so.
// Also the two users: sort prefixes read from text, and records built from text.
#include "core/json_scan.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include <boost/json.hpp>

#include "core/record.hpp"
#include "core/sort_spec.hpp"

namespace weir::core {
namespace {

namespace json = boost::json;

std::string random_string(std::mt19937& rng) {
  static const std::vector<std::string> pieces{
      "a", "b", "id", "x y", "\\\"", "\\\\", "\\n", "\\u00e9", "é", "longer than seven", ""};
  std::string s;
  for (int i = 0, n = static_cast<int>(rng() % 3); i < n; ++i) {
    s += pieces[rng() % pieces.size()];
  }
  return s;
}

std::string random_value(std::mt19937& rng, int depth) {
  switch (rng() % (depth > 2 ? 6 : 8)) {
    case 0:
      return "\"" + random_string(rng) + "\"";
    case 1:
      return std::to_string(static_cast<long long>(rng() % 2000) - 1000);
    case 2:
      return std::vector<std::string>{
          "1.5", "-0.0", "1e300", "-2.5e-3", "9007199254740993", "18446744073709551615"}[rng() % 6];
    case 3:
      return std::vector<std::string>{"true", "false", "null"}[rng() % 3];
    case 4:
    case 5:
      return "\"" + std::string(1, static_cast<char>('a' + rng() % 5)) + "\"";
    case 6: {
      std::string a = "[";
      for (int i = 0, n = static_cast<int>(rng() % 3); i < n; ++i) {
        a += (i ? "," : "") + random_value(rng, depth + 1);
      }
      return a + "]";
    }
    default: {
      std::string o = "{";
      static const std::vector<std::string> keys{"id", "n",  "s",        "_ver",
                                                 "a",  "Id", "k\\u0065", "x.y"};
      for (int i = 0, n = static_cast<int>(rng() % 4); i < n; ++i) {
        o += std::string(i ? "," : "") + (rng() % 4 == 0 ? " " : "") + "\"" +
             keys[rng() % keys.size()] + "\"" + (rng() % 4 == 0 ? " : " : ":") +
             random_value(rng, depth + 1);
      }
      return o + "}";
    }
  }
}

TEST(JsonScan, AgreesWithTheParserOnRandomDocuments) {
  std::mt19937 rng{11};
  const std::vector<std::vector<std::string>> paths{{"id"},     {"n"}, {"_ver", "id"},
                                                    {"a", "n"}, {"s"}, {"x.y"}};
  int answered = 0;
  for (int i = 0; i < 20000; ++i) {
    auto text = random_value(rng, 0);
    boost::system::error_code ec;
    auto doc = json::parse(text, ec);
    ASSERT_FALSE(ec) << text;
    for (const auto& path : paths) {
      auto raw = scan_path(text, path);
      if (!doc.is_object()) {
        EXPECT_FALSE(raw) << text;
        continue;
      }
      if (!raw) {
        continue;  // the scanner declined: fine
      }
      ++answered;
      // Resolve the path on the document.
      const json::value* v = &doc;
      for (const auto& seg : path) {
        const auto* o = v ? v->if_object() : nullptr;
        v = o ? o->if_contains(seg) : nullptr;
      }
      if (raw->empty()) {
        EXPECT_EQ(v, nullptr) << text << " at " << path.front();
      } else {
        ASSERT_NE(v, nullptr) << text;
        EXPECT_EQ(json::parse(*raw), *v) << text;
      }
    }
    if (doc.is_object()) {
      std::vector<std::string> keys;
      bool ok = scan_keys(text, [&](std::string_view k) { keys.emplace_back(k); });
      EXPECT_TRUE(ok) << text;
    }
  }
  EXPECT_GT(answered, 3000);  // the scanner answers for most object documents
}

TEST(JsonScan, SortPrefixFromTextEqualsThePrefixFromTheDocument) {
  std::mt19937 rng{5};
  for (auto keys : std::vector<std::vector<std::string>>{
           {"n"}, {"-n"}, {"_ver.id"}, {"s"}, {"-s", "n"}, {}, {"a.n"}, {"a.0"}}) {
    auto spec = sort_spec::parse(keys).value();
    for (int i = 0; i < 3000; ++i) {
      auto text = random_value(rng, 1);
      auto doc = json::parse(text);
      if (!doc.is_object()) {
        continue;
      }
      if (auto p = spec.prefix_of_text(text)) {
        EXPECT_EQ(*p, spec.prefix_of(doc.as_object())) << text;
      }
    }
  }
}

TEST(JsonScan, RecordsFromTextEqualParsedRecords) {
  std::mt19937 rng{9};
  for (int i = 0; i < 5000; ++i) {
    auto text = random_value(rng, 1);
    auto doc = json::parse(text);
    if (!doc.is_object()) {
      continue;
    }
    auto a = record_from_text(std::string{text});
    auto b = parse_record(text);
    ASSERT_EQ(a == nullptr, b == nullptr) << text;
    if (a) {
      EXPECT_EQ(a->id, b->id) << text;
      EXPECT_EQ(a->has_identity, b->has_identity) << text;
      EXPECT_EQ(a->json, text);
    }
  }
}

TEST(JsonScan, ReadingOneFieldIsCheaperThanParsing) {
  // Not a timing assertion to the microsecond: the scan must simply beat the parse it replaces
  // on a typical stored record, by a wide margin.
  std::vector<std::string> recs;
  for (int i = 0; i < 20000; ++i) {
    recs.push_back(R"({"id":"m)" + std::to_string(i) + R"(","room":"general","text":"hello )" +
                   std::to_string(i) + R"(","_ver":{"id":"3)" + std::to_string(i % 1000) +
                   R"("}})");
  }
  auto spec = sort_spec::parse(std::vector<std::string>{"-_ver.id"}).value();
  std::uint64_t sink = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (auto& r : recs) {
    sink += *spec.prefix_of_text(r);
  }
  auto scan = std::chrono::steady_clock::now() - t0;
  auto& reader = thread_doc_reader();
  t0 = std::chrono::steady_clock::now();
  for (auto& r : recs) {
    sink += spec.prefix_of(reader.read(r));
  }
  auto parse = std::chrono::steady_clock::now() - t0;
  std::printf("[ json_scan ] prefix of -_ver.id: scan %.0f ns, parse %.0f ns per record (%llu)\n",
              std::chrono::duration<double, std::nano>(scan).count() / recs.size(),
              std::chrono::duration<double, std::nano>(parse).count() / recs.size(),
              static_cast<unsigned long long>(sink % 10));
#ifdef __SANITIZE_ADDRESS__
  // AddressSanitizer instruments the scanner's byte loop far more than the parser (since the
  // reader stopped copying each document, 2,970 against 2,485 ns here, 160-200 against
  // 340-620 ns optimized): only the optimized build's comparison says anything.
  GTEST_SKIP() << "a timing comparison, meaningless under the sanitizers";
#endif
  EXPECT_LT(scan, parse);
}

}  // namespace
}  // namespace weir::core

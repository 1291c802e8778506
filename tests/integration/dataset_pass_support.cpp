// See dataset_pass_support.hpp.
#include "dataset_pass_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <boost/json.hpp>

#include "actors/runtime.hpp"
#include "test_support.hpp"

namespace weir::test {

namespace json = boost::json;

void seed_tagged_records(std::uint16_t port, const std::string& object) {
  constexpr int per_batch = 10000;
  for (int from = 0; from < seeded_records; from += per_batch) {
    json::array upsert;
    for (int i = from; i < from + per_batch; ++i) {
      upsert.push_back(json::object{
          {"id", "r" + std::to_string(i)}, {"n", i}, {"tag", i >= late_from ? "late" : "early"}});
    }
    auto r = http(port, "POST", "/v1/spaces/t/objects/" + object + "/datasets/items/records",
                  json::serialize(json::object{{"upsert", std::move(upsert)}}),
                  {{"Content-Type", "application/json"}});
    ASSERT_EQ(r.status, 200u) << r.body;
  }
}

double dataset_passes(std::uint16_t port, const std::string& kind) {
  auto r = http(port, "GET", "/metrics", "");
  std::string key = "\nweir_dataset_passes_total{kind=\"" + kind + "\"} ";
  auto at = r.body.find(key);
  EXPECT_NE(at, std::string::npos) << r.body;
  return at == std::string::npos ? -1 : std::stod(r.body.substr(at + key.size()));
}

void wait_for_index_builds(app::node& node) {
  using namespace std::chrono_literals;
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       node.runtime().stats().index_builds_running > 0 &&
       std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(node.runtime().stats().index_builds_running, 0u);
}

}  // namespace weir::test

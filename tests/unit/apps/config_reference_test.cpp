// Tests for apps/config/config_reference: docs/configuration.md's key tables are exactly what
// the schema and the reference rows generate (so a default or a range changed in the schema
// fails here until the page is written again with `scripts/dev config-reference`), every row
// names a key the loader takes, each declared key has one row, and a page without a table's
// markers is refused rather than half written.
#include "apps/config/config_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "apps/config/config_schema.hpp"

namespace weir::config {
namespace {

std::string read_page() {
  std::ifstream in(std::string{WEIR_DOCS_DIR} + "/configuration.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The section and key a row names: "postgres.url" under "store" is store.postgres's url.
std::pair<std::string, std::string> section_and_key(std::string_view table, std::string_view key) {
  auto dot = key.rfind('.');
  if (dot == std::string_view::npos) {
    return {std::string{table}, std::string{key}};
  }
  return {std::string{table} + "." + std::string{key.substr(0, dot)},
          std::string{key.substr(dot + 1)}};
}

bool takes(const std::string& section, const std::string& key) {
  auto keys = keys_of(section);
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

TEST(ConfigReference, ThePageHoldsExactlyTheTablesTheSchemaGenerates) {
  auto page = read_page();
  ASSERT_FALSE(page.empty());
  auto written = regenerate_reference(page);
  ASSERT_TRUE(written) << written.error().message;
  // On a failure, the first line that differs.
  if (*written != page) {
    std::istringstream a(page), b(*written);
    std::string la, lb;
    int line = 0;
    while (std::getline(a, la) && std::getline(b, lb)) {
      ++line;
      if (la != lb) {
        break;
      }
    }
    FAIL() << "docs/configuration.md differs from the schema's reference at line " << line
           << " (run scripts/dev config-reference):\n  page: " << la << "\n  generated: " << lb;
  }
}

TEST(ConfigReference, EveryRowNamesAKeyTheLoaderTakesAndEveryTableHasRows) {
  std::map<std::string, int> rows_per_table;
  for (const auto& r : reference_rows()) {
    SCOPED_TRACE(std::string{r.table} + "." + std::string{r.key});
    EXPECT_NE(std::find(reference_tables().begin(), reference_tables().end(), r.table),
              reference_tables().end());
    auto [section, key] = section_and_key(r.table, r.key);
    EXPECT_TRUE(takes(section, key)) << section << " takes no key " << key;
    if (!r.also.empty()) {
      auto [s2, k2] = section_and_key(r.table, r.also);
      EXPECT_TRUE(takes(s2, k2)) << s2 << " takes no key " << k2;
    }
    EXPECT_FALSE(r.meaning.empty());
    ++rows_per_table[std::string{r.table}];
  }
  for (auto t : reference_tables()) {
    EXPECT_GT(rows_per_table[std::string{t}], 0) << t;
  }
}

TEST(ConfigReference, EveryDeclaredKeyHasOneRow) {
  std::map<std::pair<std::string, std::string>, int> rows;
  for (const auto& r : reference_rows()) {
    ++rows[section_and_key(r.table, r.key)];
    if (!r.also.empty()) {
      ++rows[section_and_key(r.table, r.also)];
    }
  }
  auto one_row = [&](std::string_view section, std::string_view key) {
    EXPECT_EQ((rows[{std::string{section}, std::string{key}}]), 1)
        << section << "." << key << " should have exactly one row";
  };
  for (const auto& k : integer_keys()) {
    one_row(k.section, k.key);
  }
  for (const auto& k : flag_keys()) {
    one_row(k.section, k.key);
  }
  for (const auto& k : choice_keys()) {
    one_row(k.section, k.key);
  }
  for (const auto& k : text_keys()) {
    one_row(k.section, k.key);
  }
  for (const auto& k : endpoint_keys()) {
    one_row(k.section, k.key);
  }
}

TEST(ConfigReference, ADeclaredDefaultChangedInTheSchemaChangesThePage) {
  // The page's maxConnections row is written from node_config{}'s initializer: what the page
  // says is what a node without the key runs with.
  auto table = render_reference_table("http");
  auto want = "| `maxConnections` | " + std::to_string(node_config{}.max_connections) + " | ";
  EXPECT_NE(table.find(want), std::string::npos) << table;
  EXPECT_NE(render_reference_table("http").find("| 1–268435456 (256 MiB) |"), std::string::npos);
}

TEST(ConfigReference, APageWithoutATablesMarkersIsRefused) {
  auto page = read_page();
  auto marker = reference_begin_marker("cluster");
  auto at = page.find(marker);
  ASSERT_NE(at, std::string::npos);
  page.erase(at, marker.size());
  auto written = regenerate_reference(page);
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code, "config.invalid");
  EXPECT_NE(written.error().message.find("`cluster`"), std::string::npos)
      << written.error().message;
}

}  // namespace
}  // namespace weir::config

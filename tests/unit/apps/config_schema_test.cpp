// Tests for apps/config/config_schema: the declared keys are what the loader reads and refuses
// (each integer key's range, each flag's true and false, each choice's words, from the schema
// alone), and docs/configuration.md matches them — every such key's row with its default and
// range or words, every other key the loader takes in a row of its own or its holder's, and the
// complete file of defaults, which must hold every key and load to exactly the defaults. This is
// the check that keeps the reference true as keys are added.
#include "apps/config/config_schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "apps/config/node_config.hpp"

namespace weir::config {
namespace {

std::string read_docs() {
  std::ifstream in(std::string{WEIR_DOCS_DIR} + "/configuration.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split_cells(const std::string& row) {
  std::vector<std::string> cells;
  std::size_t at = 1;  // after the leading '|'
  while (at < row.size()) {
    auto end = row.find(" | ", at);
    if (end == std::string::npos) {
      end = row.rfind('|');
      if (end <= at) {
        break;
      }
    }
    auto cell = row.substr(at, end - at);
    while (!cell.empty() && cell.front() == ' ') {
      cell.erase(0, 1);
    }
    cells.push_back(cell);
    at = end + 2;
    if (end == row.rfind('|')) {
      break;
    }
  }
  return cells;
}

/// The rows of the docs' reference tables, as cells (key, default, range, …), under each
/// "### `section`" heading (every heading of one, even with no table).
std::map<std::string, std::vector<std::vector<std::string>>> reference_rows(
    const std::string& docs) {
  std::map<std::string, std::vector<std::vector<std::string>>> out;
  std::istringstream lines(docs);
  std::string line, section;
  while (std::getline(lines, line)) {
    if (line.rfind("### `", 0) == 0) {
      auto end = line.find('`', 5);
      section = line.substr(5, end - 5);
      out[section];
    } else if (line.rfind("## ", 0) == 0) {
      section.clear();
    } else if (!section.empty() && line.rfind("| `", 0) == 0) {
      auto cells = split_cells(line);
      if (!cells.empty() && cells[0].size() > 2) {
        out[section].push_back(std::move(cells));
      }
    }
  }
  return out;
}

/// The docs' reference tables: section → key (a row's first name) → cells.
std::map<std::string, std::map<std::string, std::vector<std::string>>> reference_tables(
    const std::string& docs) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> out;
  for (auto& [section, rows] : reference_rows(docs)) {
    for (auto& cells : rows) {
      out[section][cells[0].substr(1, cells[0].find('`', 1) - 1)] = cells;
    }
  }
  return out;
}

/// The YAML of the reference's "A complete file with every default", from a line break so that
/// every section line is found as "\n<section>:"; "" when the page has none.
std::string complete_file(const std::string& docs) {
  auto heading = docs.find("## A complete file with every default");
  auto start = heading == std::string::npos ? heading : docs.find("```yaml\n", heading);
  if (start == std::string::npos) {
    return {};
  }
  start += 8;
  return "\n" + docs.substr(start, docs.find("```", start) - start);
}

bool holds_number(const std::string& text, std::int64_t n) {
  auto digits = std::to_string(n);
  for (auto at = text.find(digits); at != std::string::npos; at = text.find(digits, at + 1)) {
    bool before = at == 0 || !std::isdigit(static_cast<unsigned char>(text[at - 1]));
    auto after_at = at + digits.size();
    bool after =
        after_at >= text.size() || !std::isdigit(static_cast<unsigned char>(text[after_at]));
    if (before && after) {
      return true;
    }
  }
  return false;
}

TEST(ConfigSchema, EveryIntegerKeyIsAKeyOfItsSectionOnce) {
  std::set<std::string> seen;
  for (const auto& k : integer_keys()) {
    auto name = std::string{k.section} + "." + std::string{k.key};
    EXPECT_TRUE(seen.insert(name).second) << name << " declared twice";
    auto keys = keys_of(k.section);
    EXPECT_EQ(std::count(keys.begin(), keys.end(), k.key), 1) << name;
    EXPECT_LT(k.min, k.max) << name;
  }
  for (auto s : sections()) {
    auto keys = keys_of(s);
    EXPECT_FALSE(keys.empty()) << "section '" << s << "'";
    EXPECT_EQ(std::set<std::string_view>(keys.begin(), keys.end()).size(), keys.size()) << s;
  }
}

TEST(ConfigSchema, TheLoaderTakesEveryKeyAtItsBoundsAndRefusesPastThem) {
  for (const auto& k : integer_keys()) {
    auto name = std::string{k.section} + "." + std::string{k.key};
    SCOPED_TRACE(name);
    auto yaml = [&](std::int64_t v) {
      return std::string{k.section} + ":\n  " + std::string{k.key} + ": " + std::to_string(v) +
             "\n";
    };
    for (auto past : {k.max + 1, k.min - 1}) {
      auto r = load_config_text(yaml(past), "weir.yaml");
      ASSERT_FALSE(r) << past << " was taken";
      EXPECT_EQ(r.error().code, "config.invalid");
      EXPECT_NE(r.error().message.find(name), std::string::npos) << r.error().message;
      EXPECT_NE(r.error().message.find("between " + std::to_string(k.min) + " and " +
                                       std::to_string(k.max)),
                std::string::npos)
          << r.error().message;
    }
    for (auto at : {k.min, k.max}) {
      auto r = load_config_text(yaml(at), "weir.yaml");
      if (r) {
        // Set as given (keepAliveIntervalMs advertises a negative value as 0).
        EXPECT_EQ(k.get(*r), k.min < 0 && at < 0 ? 0 : at);
      } else {
        // Only a rule between two keys may refuse a value in range (maxOutboundQueueBytes and
        // the frame size, downAfterMs and suspectAfterMs, leaseRenewMs and leaseMs).
        EXPECT_EQ(r.error().message.find("must be between"), std::string::npos)
            << r.error().message;
      }
    }
  }
}

/// Where the reference lists `key` of `section`: the table of its top section, the row named
/// by the rest ("store.postgres", "changeCapture" → table `store`, row `postgres.changeCapture`).
std::pair<std::string, std::string> reference_row(std::string_view section, std::string_view key) {
  auto dot = section.find('.');
  if (dot == std::string_view::npos) {
    return {std::string{section}, std::string{key}};
  }
  return {std::string{section.substr(0, dot)},
          std::string{section.substr(dot + 1)} + "." + std::string{key}};
}

/// The cells of the reference's row for `key` of `section`; null, with a failure, when it has
/// none.
const std::vector<std::string>* reference_cells(
    const std::map<std::string, std::map<std::string, std::vector<std::string>>>& tables,
    std::string_view section, std::string_view key) {
  auto [table, row_key] = reference_row(section, key);
  auto t = tables.find(table);
  if (t == tables.end()) {
    ADD_FAILURE() << "docs/configuration.md has no table for `" << table << "`";
    return nullptr;
  }
  auto row = t->second.find(row_key);
  if (row == t->second.end()) {
    ADD_FAILURE() << section << "." << key << " is not in docs/configuration.md";
    return nullptr;
  }
  return &row->second;
}

TEST(ConfigSchema, TheReferenceListsEveryIntegerKeyWithItsDefaultAndRange) {
  auto tables = reference_tables(read_docs());
  const node_config defaults = *load_config_text("", "defaults");
  for (const auto& k : integer_keys()) {
    auto name = std::string{k.section} + "." + std::string{k.key};
    SCOPED_TRACE(name);
    const auto* cells = reference_cells(tables, k.section, k.key);
    ASSERT_NE(cells, nullptr);
    ASSERT_GE(cells->size(), 3u);
    const auto& dflt = (*cells)[1];
    const auto& range = (*cells)[2];
    std::int64_t fixed = k.get(node_config{});
    if (k.derive == nullptr && fixed >= k.min && fixed <= k.max) {
      EXPECT_TRUE(holds_number(dflt, fixed)) << "default " << fixed << " not in '" << dflt << "'";
    } else {
      // Derived from another key, or computed at start: said in words.
      EXPECT_FALSE(dflt.empty());
    }
    EXPECT_TRUE(holds_number(range, k.max)) << "max " << k.max << " not in '" << range << "'";
    if (k.min >= 0 && range.find('`') == std::string::npos) {
      EXPECT_TRUE(holds_number(range, k.min)) << "min " << k.min << " not in '" << range << "'";
    }
    (void)defaults;
  }
}

TEST(ConfigSchema, TheCompleteFileOfDefaultsHoldsEveryKeyAndLoadsToTheDefaults) {
  auto docs = read_docs();
  auto file = complete_file(docs);
  ASSERT_FALSE(file.empty()) << "docs/configuration.md has no complete file of defaults";
  auto loaded = load_config_text(file, "configuration.md");
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto defaults = load_config_text("", "defaults");
  ASSERT_TRUE(defaults);
  for (const auto& k : integer_keys()) {
    auto name = std::string{k.section} + "." + std::string{k.key};
    SCOPED_TRACE(name);
    // Under its section's line, written or commented out.
    auto at = file.find("\n" + std::string{k.section} + ":");
    ASSERT_NE(at, std::string::npos);
    auto next = file.find("\n", at + 1);
    bool found = false;
    while (next != std::string::npos && next + 1 < file.size() && file[next + 1] == ' ') {
      auto line_end = file.find('\n', next + 1);
      auto line = file.substr(next + 1, line_end - next - 1);
      auto key_at = line.find_first_not_of(" #");
      if (key_at != std::string::npos &&
          line.compare(key_at, k.key.size() + 1, std::string{k.key} + ":") == 0) {
        found = true;
      }
      next = line_end;
    }
    EXPECT_TRUE(found) << name << " is missing from the complete file";
    EXPECT_EQ(k.get(*loaded), k.get(*defaults));
  }
}

TEST(ConfigSchema, EveryKeyTheLoaderTakesIsInTheReference) {
  // Not only the declared kinds: lists, rules, secrets and the token verifier's options too. A
  // key of a section is a row of its table ("`key`", "`a` / `b`", or "`key.…`" rows for a nested
  // section); a key of a nested section is a row of its parent's table ("`jwt.issuer`") or is
  // named in the row of the key that holds it (`tls`'s `{ certFile, keyFile, caFile }`).
  auto rows = reference_rows(read_docs());
  auto names = [](const std::vector<std::string>& cells, const std::string& name) {
    return cells[0].find("`" + name + "`") != std::string::npos ||
           cells[0].find("`" + name + ".") != std::string::npos;
  };
  auto mentions = [](const std::vector<std::string>& cells, std::string_view word) {
    for (const auto& c : cells) {
      for (auto at = c.find(word); at != std::string::npos; at = c.find(word, at + 1)) {
        auto end = at + word.size();
        bool alone = (at == 0 || !std::isalnum(static_cast<unsigned char>(c[at - 1]))) &&
                     (end == c.size() || !std::isalnum(static_cast<unsigned char>(c[end])));
        if (alone) {
          return true;
        }
      }
    }
    return false;
  };
  for (auto s : sections()) {
    for (auto k : keys_of(s)) {
      std::string key{k};
      SCOPED_TRACE(std::string{s} + "." + key);
      if (s.empty()) {
        EXPECT_TRUE(rows.count(key)) << "no \"### `" << key << "`\" section";
        continue;
      }
      auto dot = s.find('.');
      auto table = std::string{s.substr(0, dot)};
      ASSERT_TRUE(rows.count(table)) << "no table for `" << table << "`";
      const auto& in = rows.at(table);
      bool found = false;
      if (dot == std::string_view::npos) {
        found = std::any_of(in.begin(), in.end(), [&](auto& r) { return names(r, key); });
      } else {
        auto holder = std::string{s.substr(dot + 1)};
        if (holder.ends_with("[]")) {
          holder.resize(holder.size() - 2);
        }
        found = std::any_of(in.begin(), in.end(), [&](auto& r) {
          return names(r, holder + "." + key) ||
                 (r[0].find("`" + holder + "`") != std::string::npos && mentions(r, key));
        });
      }
      EXPECT_TRUE(found) << "not in docs/configuration.md";
    }
  }
}

// A file that sets `key` of `section` ("store.postgres": nested) to `value`.
std::string yaml_setting(std::string_view section, std::string_view key, const std::string& value) {
  std::string out, indent;
  std::string_view rest = section;
  while (!rest.empty()) {
    auto dot = rest.find('.');
    out += indent + std::string{rest.substr(0, dot)} + ":\n";
    indent += "  ";
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
  }
  return out + indent + std::string{key} + ": " + value + "\n";
}

/// `key` of `section` is declared once (`seen` holds the keys checked before) and its section
/// takes it once.
void declared_once(std::set<std::string>& seen, std::string_view section, std::string_view key) {
  auto name = std::string{section} + "." + std::string{key};
  EXPECT_TRUE(seen.insert(name).second) << name << " declared twice";
  auto keys = keys_of(section);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), key), 1) << name;
}

TEST(ConfigSchema, EveryFlagAndChoiceKeyIsAKeyOfItsSectionOnce) {
  std::set<std::string> seen;
  for (const auto& k : flag_keys()) {
    declared_once(seen, k.section, k.key);
  }
  const node_config defaults;
  for (const auto& k : choice_keys()) {
    declared_once(seen, k.section, k.key);
    EXPECT_GE(k.words.size(), 2u) << k.key;
    auto d = k.get(defaults);
    EXPECT_NE(std::find(k.words.begin(), k.words.end(), d), k.words.end())
        << k.key << ": the default '" << d << "' is not one of its words";
  }
}

TEST(ConfigSchema, TheLoaderTakesEveryFlagAndWordAndRefusesAnythingElse) {
  for (const auto& k : flag_keys()) {
    auto name = std::string{k.section} + "." + std::string{k.key};
    SCOPED_TRACE(name);
    for (bool v : {true, false}) {
      auto r = load_config_text(yaml_setting(k.section, k.key, v ? "true" : "false"), "w.yaml");
      ASSERT_TRUE(r) << r.error().message;
      EXPECT_EQ(k.get(*r), v);
    }
    for (auto bad : {"1", "yes", "\"true\""}) {
      auto r = load_config_text(yaml_setting(k.section, k.key, bad), "w.yaml");
      ASSERT_FALSE(r) << bad << " was taken";
      EXPECT_NE(r.error().message.find(name + "': must be true or false"), std::string::npos)
          << r.error().message;
    }
  }
  for (const auto& k : choice_keys()) {
    auto name = std::string{k.section} + "." + std::string{k.key};
    SCOPED_TRACE(name);
    std::string listed;
    for (auto w : k.words) {
      auto r = load_config_text(yaml_setting(k.section, k.key, std::string{w}), "w.yaml");
      if (r) {
        EXPECT_EQ(k.get(*r), w);
      } else {
        // Only a rule between keys may refuse a word.
        EXPECT_EQ(r.error().message.find("must be one of"), std::string::npos) << r.error().message;
      }
      listed += (listed.empty() ? "" : ", ") + std::string{w};
    }
    auto r = load_config_text(yaml_setting(k.section, k.key, "Bogus"), "w.yaml");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find(name + "': must be one of " + listed + " (got \"Bogus\")"),
              std::string::npos)
        << r.error().message;
  }
}

TEST(ConfigSchema, TheReferenceListsEveryFlagAndChoiceWithItsDefaultAndWords) {
  auto tables = reference_tables(read_docs());
  auto check = [&](std::string_view section, std::string_view key, std::string_view dflt,
                   std::vector<std::string_view> words) {
    auto name = std::string{section} + "." + std::string{key};
    SCOPED_TRACE(name);
    const auto* cells = reference_cells(tables, section, key);
    ASSERT_NE(cells, nullptr);
    ASSERT_GE(cells->size(), 4u) << name << ": no column for its words";
    EXPECT_NE((*cells)[1].find("`" + std::string{dflt} + "`"), std::string::npos)
        << "default `" << dflt << "` not in '" << (*cells)[1] << "'";
    for (auto w : words) {
      EXPECT_NE((*cells)[2].find("`" + std::string{w} + "`"), std::string::npos)
          << "`" << w << "` not in '" << (*cells)[2] << "'";
    }
  };
  const node_config defaults;
  for (const auto& k : flag_keys()) {
    check(k.section, k.key, k.get(defaults) ? "true" : "false", {"true", "false"});
  }
  for (const auto& k : choice_keys()) {
    check(k.section, k.key, k.get(defaults),
          std::vector<std::string_view>(k.words.begin(), k.words.end()));
  }
}

TEST(ConfigSchema, TheCompleteFileOfDefaultsGivesEveryFlagAndChoiceItsDefault) {
  auto docs = read_docs();
  auto file = complete_file(docs);
  ASSERT_FALSE(file.empty()) << "docs/configuration.md has no complete file of defaults";
  auto loaded = load_config_text(file, "configuration.md");
  ASSERT_TRUE(loaded) << loaded.error().message;
  const node_config defaults;
  for (const auto& k : flag_keys()) {
    EXPECT_NE(file.find(std::string{k.key} + ": "), std::string::npos)
        << k.key << " is missing from the complete file";
    EXPECT_EQ(k.get(*loaded), k.get(defaults)) << k.key;
  }
  for (const auto& k : choice_keys()) {
    EXPECT_NE(file.find(std::string{k.key} + ": "), std::string::npos)
        << k.key << " is missing from the complete file";
    EXPECT_EQ(k.get(*loaded), k.get(defaults)) << k.key;
  }
}

TEST(ConfigSchema, EveryTextAndEndpointKeyIsAKeyOfItsSectionOnce) {
  std::set<std::string> seen;
  for (const auto& k : text_keys()) {
    declared_once(seen, k.section, k.key);
  }
  for (const auto& k : endpoint_keys()) {
    declared_once(seen, k.section, k.key);
  }
}

TEST(ConfigSchema, TheLoaderTakesEveryTextAndAddressAndRefusesWhatIsNot) {
  for (const auto& k : text_keys()) {
    auto name = std::string{k.section} + "." + std::string{k.key};
    SCOPED_TRACE(name);
    auto r = load_config_text(yaml_setting(k.section, k.key, "\"some-text_1\""), "w.yaml");
    if (r) {
      EXPECT_EQ(k.get(*r), "some-text_1");
    } else {
      // Only a rule between keys may refuse it (a nodeId with no members, say).
      EXPECT_EQ(r.error().message.find(name + "'"), std::string::npos) << r.error().message;
    }
    for (auto bad : {"\"\"", "5", "[a]"}) {
      auto refused = load_config_text(yaml_setting(k.section, k.key, bad), "w.yaml");
      ASSERT_FALSE(refused) << bad << " was taken";
      EXPECT_NE(refused.error().message.find(name + "': must be a non-empty string"),
                std::string::npos)
          << refused.error().message;
    }
  }
  for (const auto& k : endpoint_keys()) {
    auto name = std::string{k.section} + "." + std::string{k.key};
    SCOPED_TRACE(name);
    for (auto good : {"10.1.2.3:65535", "[::1]:0", "0.0.0.0:8"}) {
      auto r = load_config_text(yaml_setting(k.section, k.key, "\"" + std::string{good} + "\""),
                                "w.yaml");
      ASSERT_TRUE(r) << r.error().message;
      EXPECT_EQ(k.get(*r), good);
    }
    for (auto bad : {"host", ":80", "h:65536", "h:-1", "[]:80"}) {
      auto r = load_config_text(yaml_setting(k.section, k.key, "\"" + std::string{bad} + "\""),
                                "w.yaml");
      ASSERT_FALSE(r) << bad << " was taken";
      EXPECT_NE(r.error().message.find(name + "': must be \"host:port\" with a port 0..65535"),
                std::string::npos)
          << r.error().message;
    }
  }
}

TEST(ConfigSchema, TheReferenceAndTheCompleteFileGiveEveryTextAndAddressItsDefault) {
  auto docs = read_docs();
  auto tables = reference_tables(docs);
  auto file = complete_file(docs);
  ASSERT_FALSE(file.empty()) << "docs/configuration.md has no complete file of defaults";
  auto loaded = load_config_text(file, "configuration.md");
  ASSERT_TRUE(loaded) << loaded.error().message;
  const node_config defaults;
  auto check = [&](std::string_view section, std::string_view key, const std::string& dflt,
                   const std::string& in_file) {
    auto name = std::string{section} + "." + std::string{key};
    SCOPED_TRACE(name);
    const auto* cells = reference_cells(tables, section, key);
    ASSERT_NE(cells, nullptr);
    ASSERT_GE(cells->size(), 2u);
    // A key with no default reads "—"; the others their value, quoted as YAML would take it.
    auto want = dflt.empty() ? std::string{"—"} : "`\"" + dflt + "\"`";
    EXPECT_NE((*cells)[1].find(want), std::string::npos)
        << "default " << want << " not in '" << (*cells)[1] << "'";
    if (!dflt.empty()) {
      EXPECT_NE(file.find(std::string{key} + ": " + in_file), std::string::npos)
          << name << ": " << in_file << " is not in the complete file";
    }
  };
  for (const auto& k : text_keys()) {
    check(k.section, k.key, k.get(defaults), k.get(defaults));
    EXPECT_EQ(k.get(*loaded), k.get(defaults)) << k.key;
  }
  for (const auto& k : endpoint_keys()) {
    check(k.section, k.key, k.get(defaults), "\"" + k.get(defaults) + "\"");
    EXPECT_EQ(k.get(*loaded), k.get(defaults)) << k.key;
  }
}

}  // namespace
}  // namespace weir::config

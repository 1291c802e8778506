// weir::config reference — the key tables of docs/configuration.md, generated: the schema
// (config_schema) gives each declared key's default (its field's initializer) and its range,
// words or form, and this reference adds what the schema cannot know — the meaning of each key
// and what happens at its bound, the default and range of the keys the loader reads with code
// of its own (lists, rules, secrets, the token verifier's options), and the words for defaults
// that follow another key or are computed at start. `weir_config_reference` writes the tables
// into the page between their markers; config_tests fails when the page differs from what this
// generates, or when a key the loader takes has no row.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace weir::config {

/// One row of a section's table.
struct reference_row {
  std::string_view table;  ///< the section whose table holds it: "node", "auth", "cluster", …
  /// The key under that section as the page names it: "ioThreads", "jwt.secret" (a key of a
  /// nested section), "postgres.url".
  std::string_view key;
  std::string_view also;  ///< a second key the same row covers ("jwt.secretFile"), or ""
  /// In words; "" for a declared key whose default is its field's initializer (written from the
  /// schema).
  std::string_view default_text;
  /// In words; "" for a declared key's range, words or form as the schema has them, or text
  /// starting with ", " or "; " to add to them (a bound that depends on another key).
  std::string_view range_text;
  std::string_view meaning;  ///< what it does and what happens at its bound (Markdown)
};

/// Every row, tables in the page's order and rows in each table's order.
std::span<const reference_row> reference_rows();

/// The sections that have a generated table, in the page's order.
std::span<const std::string_view> reference_tables();

/// `table`'s Markdown table: its header line, the separator and a line per row. Throws
/// std::logic_error for a row the schema cannot complete (a default or range it needs in words
/// and does not have): a mistake in config_reference.cpp, not in any input.
std::string render_reference_table(std::string_view table);

/// The marker lines around `table`'s generated table in the page.
std::string reference_begin_marker(std::string_view table);
std::string reference_end_marker(std::string_view table);

/// `page` with each table's text between its markers replaced by what render_reference_table
/// writes. An error (code `config.invalid`) names a table whose markers are missing or out of
/// order, or a row render_reference_table cannot complete.
core::result<std::string> regenerate_reference(std::string_view page);

}  // namespace weir::config

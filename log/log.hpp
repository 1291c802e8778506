// weir::log — the node's structured, levelled log: one line per event, as text for a terminal or
// as one JSON object per line for log shippers (`log.format`), written by spdlog to stderr. Each
// event is a fixed message and named fields (the correlation id, a unit, a code), so lines can be
// searched and counted without parsing prose. This header keeps spdlog and fmt out of the many
// files that log: only log.cpp includes them.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace weir::log {

enum class level : std::uint8_t { debug, info, warn, error, off };
enum class format : std::uint8_t { text, json };

/// "debug", "info", "warn", "error", "off"; nullopt for anything else.
std::optional<level> parse_level(std::string_view s);
/// "text", "json"; nullopt for anything else.
std::optional<format> parse_format(std::string_view s);

/// Sets what is written from now on: the lowest level, the format, and the node id every line
/// carries (empty: none). Called at startup; lines logged before it use info, text, no node.
void configure(level min, format f, std::string node = {});

/// Whether a line at `l` would be written (one relaxed atomic load): test it before building
/// fields that cost something.
bool enabled(level l);

/// One named value of a line.
struct field {
  using value_type = std::variant<std::string_view, std::int64_t, std::uint64_t, double, bool>;
  std::string_view key;
  value_type value;

  field(std::string_view k, std::string_view v) : key(k), value(v) {}
  field(std::string_view k, const std::string& v) : key(k), value(std::string_view{v}) {}
  field(std::string_view k, const char* v) : key(k), value(std::string_view{v}) {}
  field(std::string_view k, bool v) : key(k), value(v) {}
  field(std::string_view k, double v) : key(k), value(v) {}
  template <std::signed_integral T>
  field(std::string_view k, T v) : key(k), value(static_cast<std::int64_t>(v)) {}
  template <std::unsigned_integral T>
  requires(!std::same_as<T, bool>) field(std::string_view k, T v)
      : key(k), value(static_cast<std::uint64_t>(v)) {}
};

/// Writes one line at `l` (if enabled): the time (UTC, milliseconds), the level, `message` and
/// `fields`. Thread-safe; a line is never interleaved with another.
void write(level l, std::string_view message, std::initializer_list<field> fields = {});

inline void debug(std::string_view m, std::initializer_list<field> f = {}) {
  if (enabled(level::debug)) {
    write(level::debug, m, f);
  }
}
inline void info(std::string_view m, std::initializer_list<field> f = {}) {
  if (enabled(level::info)) {
    write(level::info, m, f);
  }
}
inline void warn(std::string_view m, std::initializer_list<field> f = {}) {
  if (enabled(level::warn)) {
    write(level::warn, m, f);
  }
}
inline void error(std::string_view m, std::initializer_list<field> f = {}) {
  if (enabled(level::error)) {
    write(level::error, m, f);
  }
}

/// The text of one line without the time (for tests of the format).
std::string render(format f, level l, std::string_view node, std::string_view message,
                   std::initializer_list<field> fields);

}  // namespace weir::log

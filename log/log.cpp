// The log's one spdlog logger (see log.hpp): a stderr sink, the time in UTC, and the line's body
// (message and fields) formatted here, as text or JSON.
#include "log/log.hpp"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>

#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

namespace weir::log {
namespace {

std::atomic<level> min_level{level::info};

/// What configure() set: replaced whole, never changed, so a line renders without a lock.
struct settings {
  format fmt = format::text;
  std::string node;
  std::shared_ptr<spdlog::logger> logger;
};

struct state {
  std::mutex mu;  // guards `current` (held only to copy the pointer)
  std::shared_ptr<const settings> current;
};

state& the_state() {
  static state s;
  return s;
}

spdlog::level::level_enum to_spdlog(level l) {
  switch (l) {
    case level::debug:
      return spdlog::level::debug;
    case level::info:
      return spdlog::level::info;
    case level::warn:
      return spdlog::level::warn;
    case level::error:
      return spdlog::level::err;
    case level::off:
      break;
  }
  return spdlog::level::off;
}

std::string_view name_of(level l) {
  switch (l) {
    case level::debug:
      return "debug";
    case level::info:
      return "info";
    case level::warn:
      return "warn";
    case level::error:
      return "error";
    case level::off:
      break;
  }
  return "off";
}

std::shared_ptr<spdlog::logger> make_logger(format f) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("weir", std::move(sink));
  // The level and the body are ours (render(), which also closes the JSON object): spdlog
  // adds the time.
  logger->set_formatter(std::make_unique<spdlog::pattern_formatter>(
      f == format::json ? R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ",%v)" : "%Y-%m-%dT%H:%M:%S.%eZ %v",
      spdlog::pattern_time_type::utc));
  logger->set_level(spdlog::level::trace);
  logger->flush_on(spdlog::level::trace);  // a line is on stderr before the next event
  return logger;
}

void append_json_string(std::string& out, std::string_view s) {
  out += boost::json::serialize(boost::json::string_view{s.data(), s.size()});
}

/// Text values are bare unless they hold a space, a quote, '=' or a control character (then
/// JSON-quoted, so a line still splits on spaces).
void append_text_value(std::string& out, std::string_view s) {
  bool bare = !s.empty();
  for (unsigned char c : s) {
    if (c <= ' ' || c == '"' || c == '=' || c == 0x7f) {
      bare = false;
      break;
    }
  }
  if (bare) {
    out += s;
  } else {
    append_json_string(out, s);
  }
}

void append_value(std::string& out, const field::value_type& v, format f) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string_view>) {
          if (f == format::json) {
            append_json_string(out, x);
          } else {
            append_text_value(out, x);
          }
        } else if constexpr (std::is_same_v<T, bool>) {
          out += x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.3f", x);
          out += buf;
        } else {
          out += std::to_string(x);
        }
      },
      v);
}

}  // namespace

std::optional<level> parse_level(std::string_view s) {
  for (auto l : {level::debug, level::info, level::warn, level::error, level::off}) {
    if (s == name_of(l)) {
      return l;
    }
  }
  return std::nullopt;
}

std::optional<format> parse_format(std::string_view s) {
  if (s == "text") {
    return format::text;
  }
  if (s == "json") {
    return format::json;
  }
  return std::nullopt;
}

void configure(level min, format f, std::string node) {
  auto next = std::make_shared<settings>();
  next->fmt = f;
  next->node = std::move(node);
  next->logger = make_logger(f);
  auto& st = the_state();
  {
    std::lock_guard lock{st.mu};
    st.current = std::move(next);
  }
  min_level.store(min, std::memory_order_relaxed);
}

bool enabled(level l) {
  auto min = min_level.load(std::memory_order_relaxed);
  return min != level::off && l >= min;
}

std::string render(format f, level l, std::string_view node, std::string_view message,
                   std::initializer_list<field> fields) {
  std::string out;
  out.reserve(96 + message.size());
  if (f == format::json) {
    out += R"("level":")";
    out += name_of(l);
    out += '"';
    if (!node.empty()) {
      out += R"(,"node":)";
      append_json_string(out, node);
    }
    out += R"(,"msg":)";
    append_json_string(out, message);
    for (const auto& fl : fields) {
      out += ',';
      append_json_string(out, fl.key);
      out += ':';
      append_value(out, fl.value, f);
    }
    out += '}';
    return out;
  }
  out += name_of(l);
  if (!node.empty()) {
    out += " [";
    out += node;
    out += ']';
  }
  out += ' ';
  out += message;
  for (const auto& fl : fields) {
    out += ' ';
    out += fl.key;
    out += '=';
    append_value(out, fl.value, f);
  }
  return out;
}

void write(level l, std::string_view message, std::initializer_list<field> fields) {
  if (!enabled(l)) {
    return;
  }
  auto& st = the_state();
  std::shared_ptr<const settings> s;
  {
    std::lock_guard lock{st.mu};
    if (!st.current) {
      auto defaults = std::make_shared<settings>();
      defaults->logger = make_logger(format::text);
      st.current = std::move(defaults);
    }
    s = st.current;
  }
  // Rendered outside the lock: only the sink's own mutex orders the lines.
  auto line = render(s->fmt, l, s->node, message, fields);
  s->logger->log(to_spdlog(l), spdlog::string_view_t{line.data(), line.size()});
}

}  // namespace weir::log

// The shared reading helpers of the configuration loader (config_reader.hpp).
#include "apps/config/config_reader.hpp"

namespace weir::config::reader {

core::error config_error(std::string_view file, const std::string& field, const std::string& why) {
  json::object details;
  details["file"] = file;
  details["field"] = field;
  return make_error(std::string(config_invalid),
                    std::string(file) + ": field '" + field + "': " + why, std::move(details));
}

std::string join(std::span<const std::string_view> names) {
  std::string out;
  for (auto n : names) {
    out += out.empty() ? "" : ", ";
    out += n;
  }
  return out;
}

result<section> open_section(std::string_view file, const json::object& root, std::string name,
                             const std::vector<std::string_view>& keys, std::string display) {
  section s{file, display.empty() ? name : display, nullptr};
  auto it = root.find(name);
  if (it == root.end() || it->value().is_null()) {
    return s;
  }
  if (!it->value().is_object()) {
    return config_error(file, s.name, "must be a mapping (keys: " + join(keys) + ")");
  }
  s.obj = &it->value().get_object();
  for (const auto& kv : *s.obj) {
    bool known = false;
    for (auto k : keys) {
      known = known || kv.key() == k;
    }
    if (!known) {
      return config_error(file, s.path(kv.key()), "unknown key (known: " + join(keys) + ")");
    }
  }
  return s;
}

result<bool> read_endpoint(const section& s, std::string_view key, std::string& host,
                           std::uint16_t& port) {
  auto t = s.text(key);
  if (!t) {
    return std::move(t).error();
  }
  if (!*t) {
    return false;
  }
  const std::string& text = **t;
  auto bad = [&] {
    return config_error(s.file, s.path(key),
                        "must be \"host:port\" with a port 0..65535 (got \"" + text + "\")");
  };
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return bad();
  }
  std::string h = text.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
  }
  std::string_view p = std::string_view(text).substr(colon + 1);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (h.empty() || ec != std::errc{} || ptr != p.data() + p.size() || value > 65535) {
    return bad();
  }
  host = std::move(h);
  port = static_cast<std::uint16_t>(value);
  return true;
}

result<void> read_declared(const section& s, std::string_view schema_section, node_config& cfg) {
  for (const auto& k : endpoint_keys()) {
    if (k.section != schema_section) {
      continue;
    }
    std::string host;
    std::uint16_t port = 0;
    auto read = read_endpoint(s, k.key, host, port);
    if (!read) {
      return std::move(read).error();
    }
    if (*read) {
      k.set(cfg, std::move(host), port);
    }
  }
  for (const auto& k : text_keys()) {
    if (k.section != schema_section) {
      continue;
    }
    auto t = s.text(k.key);
    if (!t) {
      return std::move(t).error();
    }
    if (*t) {
      k.set(cfg, std::move(**t));
    }
  }
  for (const auto& k : integer_keys()) {
    if (k.section != schema_section) {
      continue;
    }
    if (k.derive != nullptr) {
      k.derive(cfg);
    }
    auto v = s.integer(k.key, k.min, k.max);
    if (!v) {
      return std::move(v).error();
    }
    if (*v) {
      k.set(cfg, **v);
    }
  }
  for (const auto& k : flag_keys()) {
    if (k.section != schema_section) {
      continue;
    }
    if (const auto* v = s.get(k.key)) {
      if (!v->is_bool()) {
        return config_error(s.file, s.path(k.key), "must be true or false");
      }
      k.set(cfg, v->get_bool());
    }
  }
  for (const auto& k : choice_keys()) {
    if (k.section != schema_section) {
      continue;
    }
    auto t = s.text(k.key);
    if (!t) {
      return std::move(t).error();
    }
    if (!*t) {
      continue;
    }
    if (std::find(k.words.begin(), k.words.end(), **t) == k.words.end()) {
      return config_error(s.file, s.path(k.key),
                          "must be one of " + join(k.words) + " (got \"" + **t + "\")");
    }
    k.set(cfg, **t);
  }
  return {};
}

result<std::string> read_named_file(std::string_view file, const std::string& key,
                                    const std::string& name) {
  std::string path = name;
  if (!path.empty() && path.front() != '/') {
    if (auto slash = std::string_view{file}.rfind('/'); slash != std::string_view::npos) {
      path = std::string{file.substr(0, slash + 1)} + path;
    }
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) {
    text << in.rdbuf();
  }
  if (!in || in.bad()) {
    return config_error(file, key, "cannot read '" + path + "'");
  }
  return text.str();
}

}  // namespace weir::config::reader

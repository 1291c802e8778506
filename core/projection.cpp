// Projection parsing and application (see projection.hpp).
#include "core/projection.hpp"

#include <map>

#include <boost/json/serialize.hpp>

namespace weir::core {

struct projection::node {
  std::optional<bool> mark;  // set where the spec names this path
  std::map<std::string, node, std::less<>> children;
};

namespace {

constexpr std::size_t max_entries = 128;
constexpr std::size_t max_depth = 8;

error invalid(std::string message, std::string_view path = {}) {
  boost::json::object details;
  details["field"] = "projection";
  if (!path.empty()) {
    details["path"] = path;
  }
  return make_error("request.invalid_field", std::move(message), std::move(details));
}

std::optional<bool> read_mark(const boost::json::value& v) {
  if (v.is_bool()) {
    return v.get_bool();
  }
  if (v.is_int64()) {
    auto i = v.get_int64();
    if (i == 1) {
      return true;
    }
    if (i == 0 || i == -1) {
      return false;
    }
  }
  if (v.is_uint64()) {
    auto u = v.get_uint64();
    if (u == 1) {
      return true;
    }
    if (u == 0) {
      return false;
    }
  }
  if (v.is_double()) {
    auto d = v.get_double();
    if (d == 1.0) {
      return true;
    }
    if (d == 0.0 || d == -1.0) {
      return false;
    }
  }
  return std::nullopt;
}

using node = projection::node;

/// The effective mark of a top-level field with no mark of its own.
bool top_default(std::string_view key, bool include_mode) {
  if (key == "id" || key == "_ver") {
    return true;
  }
  if (!key.empty() && key.front() == '_') {
    return false;
  }
  return !include_mode;
}

boost::json::value project_value(const boost::json::value& v, const node& n, bool inherited,
                                 bool& keep);

boost::json::object project_object(const boost::json::object& obj, const node& n, bool inherited) {
  boost::json::object out;
  for (const auto& kv : obj) {
    auto it = n.children.find(std::string_view{kv.key()});
    if (it == n.children.end()) {
      if (inherited) {
        out.emplace(kv.key(), kv.value());
      }
      continue;
    }
    bool eff = it->second.mark.value_or(inherited);
    bool keep = false;
    auto projected = project_value(kv.value(), it->second, eff, keep);
    if (keep) {
      out.emplace(kv.key(), std::move(projected));
    }
  }
  return out;
}

/// `v` under node `n` whose effective mark is `inherited`; `keep` says whether anything of it
/// stays.
boost::json::value project_value(const boost::json::value& v, const node& n, bool inherited,
                                 bool& keep) {
  if (n.children.empty()) {
    keep = inherited;
    return inherited ? v : boost::json::value{};
  }
  if (const auto* o = v.if_object()) {
    auto sub = project_object(*o, n, inherited);
    keep = inherited || !sub.empty();
    return sub;
  }
  if (const auto* a = v.if_array()) {
    boost::json::array out;
    for (const auto& e : *a) {
      bool k = false;
      auto p = project_value(e, n, inherited, k);
      if (k) {
        out.push_back(std::move(p));
      }
    }
    keep = inherited || !out.empty();
    return out;
  }
  keep = inherited;
  return inherited ? v : boost::json::value{};
}

void canonical_walk(const node& n, std::string& prefix, boost::json::array& out) {
  for (const auto& [k, child] : n.children) {
    auto len = prefix.size();
    if (!prefix.empty()) {
      prefix.push_back('.');
    }
    prefix.append(k);
    if (child.mark) {
      out.push_back(boost::json::array{boost::json::string{prefix}, *child.mark ? 1 : 0});
    }
    canonical_walk(child, prefix, out);
    prefix.resize(len);
  }
}

}  // namespace

result<projection> projection::parse(const boost::json::value& spec) {
  projection p;
  if (spec.is_null()) {
    return p;
  }
  const auto* obj = spec.if_object();
  if (obj == nullptr) {
    return invalid("projection must be an object of dotted paths to 1 or 0");
  }
  if (obj->empty()) {
    return p;
  }
  if (obj->size() > max_entries) {
    return invalid("projection has " + std::to_string(obj->size()) + " entries; at most " +
                   std::to_string(max_entries) + " are allowed");
  }
  auto root = std::make_shared<node>();
  for (const auto& kv : *obj) {
    std::string_view path = kv.key();
    auto mark = read_mark(kv.value());
    if (!mark) {
      return invalid("projection of \"" + std::string{path} +
                         "\" must be 1, 0, -1, true or false",
                     path);
    }
    if (path.empty()) {
      return invalid("projection has an empty path", path);
    }
    std::vector<std::string_view> segs;
    std::size_t start = 0;
    for (;;) {
      auto dot = path.find('.', start);
      auto seg = path.substr(start, dot == std::string_view::npos ? dot : dot - start);
      if (seg.empty()) {
        return invalid("projection path \"" + std::string{path} + "\" has an empty segment",
                       path);
      }
      if (seg == "*") {
        return invalid("projection path \"" + std::string{path} + "\" has a \"*\" segment", path);
      }
      segs.push_back(seg);
      if (dot == std::string_view::npos) {
        break;
      }
      start = dot + 1;
    }
    if (segs.size() > max_depth) {
      return invalid("projection path \"" + std::string{path} + "\" is deeper than " +
                         std::to_string(max_depth) + " segments",
                     path);
    }
    if (segs.size() == 1 && segs[0] == "id" && !*mark) {
      return invalid("\"id\" is always part of a record and cannot be excluded", path);
    }
    node* n = root.get();
    for (auto s : segs) {
      n = &n->children[std::string{s}];
    }
    n->mark = *mark;
    if (*mark && !(segs[0].front() == '_')) {
      p.include_mode_ = true;
    }
  }
  std::string prefix;
  boost::json::array marks;
  canonical_walk(*root, prefix, marks);
  p.canonical_ = boost::json::serialize(marks);
  p.root_ = std::move(root);
  return p;
}

boost::json::object projection::apply(const boost::json::object& doc) const {
  if (!root_) {
    return doc;
  }
  boost::json::object out;
  for (const auto& kv : doc) {
    std::string_view key = kv.key();
    if (key == "id") {
      out.emplace(key, kv.value());
      continue;
    }
    bool inherited = top_default(key, include_mode_);
    auto it = root_->children.find(key);
    if (it == root_->children.end()) {
      if (inherited) {
        out.emplace(key, kv.value());
      }
      continue;
    }
    bool eff = it->second.mark.value_or(inherited);
    bool keep = false;
    auto projected = project_value(kv.value(), it->second, eff, keep);
    if (keep) {
      out.emplace(key, std::move(projected));
    }
  }
  return out;
}

projection::coverage projection::classify(const std::vector<std::string>& path) const {
  if (!root_) {
    return coverage::included;
  }
  if (path.empty()) {
    return coverage::partial;
  }
  if (path.front() == "id") {
    return coverage::included;
  }
  bool eff = top_default(path.front(), include_mode_);
  const node* n = root_.get();
  for (const auto& seg : path) {
    auto it = n->children.find(std::string_view{seg});
    if (it == n->children.end()) {
      return eff ? coverage::included : coverage::excluded;
    }
    n = &it->second;
    eff = n->mark.value_or(eff);
  }
  if (!n->children.empty()) {
    return coverage::partial;
  }
  return eff ? coverage::included : coverage::excluded;
}

std::optional<boost::json::value> projection::apply_at(const std::vector<std::string>& path,
                                                       const boost::json::value& value) const {
  if (!root_ || path.empty()) {
    return value;
  }
  if (path.front() == "id") {
    return value;
  }
  bool eff = top_default(path.front(), include_mode_);
  const node* n = root_.get();
  for (const auto& seg : path) {
    auto it = n->children.find(std::string_view{seg});
    if (it == n->children.end()) {
      return eff ? std::optional<boost::json::value>{value} : std::nullopt;
    }
    n = &it->second;
    eff = n->mark.value_or(eff);
  }
  bool keep = false;
  auto out = project_value(value, *n, eff, keep);
  if (!keep) {
    return std::nullopt;
  }
  return out;
}

}  // namespace weir::core

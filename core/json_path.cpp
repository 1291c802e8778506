// Parsing and resolution of dotted field paths (see json_path.hpp for the rules).
#include "core/json_path.hpp"

namespace weir::core {

namespace {

// Enters one level: by key into an object, by canonical index into an array.
const boost::json::value* step(const boost::json::value& v, std::string_view segment,
                               std::size_t index) {
  if (const auto* obj = v.if_object()) {
    return obj->if_contains(segment);
  }
  if (const auto* arr = v.if_array()) {
    if (index != json_path::not_an_index && index < arr->size()) {
      return &(*arr)[index];
    }
  }
  return nullptr;
}

}  // namespace

std::size_t parse_array_index(std::string_view segment) {
  if (segment.empty() || segment.size() > 19) {
    return json_path::not_an_index;
  }
  if (segment.size() > 1 && segment[0] == '0') {
    return json_path::not_an_index;
  }
  std::size_t value = 0;
  for (char c : segment) {
    if (c < '0' || c > '9') {
      return json_path::not_an_index;
    }
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  return value;
}

result<json_path> json_path::parse(std::string_view dotted) {
  json_path path;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', start);
    const std::string_view segment =
        dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (segment.empty()) {
      boost::json::object details;
      details["field"] = dotted;
      return make_error("request.invalid_field",
                        dotted.empty()
                            ? std::string("empty field path")
                            : "field path \"" + std::string(dotted) + "\" has an empty segment",
                        std::move(details));
    }
    path.segments_.emplace_back(segment);
    path.indexes_.push_back(parse_array_index(segment));
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  path.text_ = std::string(dotted);
  return path;
}

const boost::json::value* json_path::find(const boost::json::object& doc) const {
  if (segments_.empty()) {
    return nullptr;
  }
  const boost::json::value* cur = doc.if_contains(segments_[0]);
  for (std::size_t i = 1; cur != nullptr && i < segments_.size(); ++i) {
    cur = step(*cur, segments_[i], indexes_[i]);
  }
  return cur;
}

const boost::json::value* json_path::find(const boost::json::value& root) const {
  if (segments_.empty()) {
    return nullptr;
  }
  const boost::json::value* cur = &root;
  for (std::size_t i = 0; cur != nullptr && i < segments_.size(); ++i) {
    cur = step(*cur, segments_[i], indexes_[i]);
  }
  return cur;
}

bool json_path::is_prefix_of(const json_path& other) const {
  if (segments_.size() > other.segments_.size()) {
    return false;
  }
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    if (segments_[i] != other.segments_[i]) {
      return false;
    }
  }
  return true;
}

const boost::json::value* find_path(const boost::json::object& doc, std::string_view dotted) {
  std::size_t dot = dotted.find('.');
  std::string_view segment = dotted.substr(0, dot);
  if (segment.empty()) {
    return nullptr;
  }
  const boost::json::value* cur = doc.if_contains(segment);
  while (cur != nullptr && dot != std::string_view::npos) {
    const std::size_t start = dot + 1;
    dot = dotted.find('.', start);
    segment =
        dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (segment.empty()) {
      return nullptr;
    }
    cur = step(*cur, segment, parse_array_index(segment));
  }
  return cur;
}

}  // namespace weir::core

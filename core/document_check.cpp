// Document checks: an iterative walk over trees, a SAX pass over text (see document_check.hpp).
// Neither recurses, so a document of any depth is refused without touching the stack.
#include "core/document_check.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>

#include "core/json_pointer.hpp"
#include "core/utf8.hpp"

namespace weir::core {
namespace {

namespace json = boost::json;

// One open container of the walk (an object or an array): which child comes next.
struct frame {
  const json::object* obj = nullptr;
  const json::array* arr = nullptr;
  std::size_t next = 0;

  static frame of(const json::value& v) {
    return v.is_object() ? frame{&v.get_object(), nullptr} : frame{nullptr, &v.get_array()};
  }
  std::size_t size() const { return obj ? obj->size() : arr->size(); }
};

// The JSON Pointer of the child the walk is at (the last frame's previous child), plus the
// member name `key` inside it when given.
std::string pointer_of(const std::vector<frame>& stack) {
  std::string out;
  for (const auto& f : stack) {
    if (f.next == 0) {
      break;
    }
    out += '/';
    if (f.obj) {
      out += escape_pointer_token((f.obj->begin() + (f.next - 1))->key());
    } else {
      out += std::to_string(f.next - 1);
    }
  }
  return out;
}

error limit_error(std::string code, std::string message, std::string path, std::size_t max) {
  boost::json::object details;
  details["path"] = std::move(path);
  if (max > 0) {
    details["max"] = max;
  }
  return make_error(std::move(code), std::move(message), std::move(details));
}

std::string where(const std::string& path) {
  return path.empty() ? std::string{"the document"} : "\"" + path + "\"";
}

// A container entered at `depth`: within the depth and member bounds?
result<void> check_container(const frame& c, std::size_t depth, const document_limits& limits,
                             const std::vector<frame>& stack) {
  if (depth > max_document_depth) {
    auto path = pointer_of(stack);
    return limit_error("record.too_deep",
                       where(path) + " nests deeper than " + std::to_string(max_document_depth) +
                           " levels of objects and arrays",
                       std::move(path), max_document_depth);
  }
  std::size_t n = c.size();
  if (n > limits.max_members) {
    auto path = pointer_of(stack);
    return limit_error("record.too_many_members",
                       where(path) + " holds " + std::to_string(n) + " " +
                           (c.obj ? "members" : "elements") + "; at most " +
                           std::to_string(limits.max_members) + " are allowed",
                       std::move(path), limits.max_members);
  }
  return {};
}

result<void> check_scalar(const json::value& v, const std::vector<frame>& stack) {
  if (v.is_double() && !std::isfinite(v.get_double())) {
    auto path = pointer_of(stack);
    return limit_error("record.invalid_number",
                       where(path) +
                           " is a number outside what JSON can carry (a double overflows past "
                           "1.7976931348623157e308)",
                       std::move(path), 0);
  }
  if (v.is_string() && !valid_utf8(v.get_string())) {
    auto path = pointer_of(stack);
    return limit_error("request.invalid_utf8", "the string at " + where(path) + " is not UTF-8",
                       std::move(path), 0);
  }
  return {};
}

result<void> check_key(std::string_view key, const document_limits& limits,
                       const std::vector<frame>& stack) {
  if (key.size() > limits.max_key_bytes) {
    auto path = pointer_of(stack);
    return limit_error("record.key_too_long",
                       "a member name at " + where(path) + " is " + std::to_string(key.size()) +
                           " bytes long; at most " + std::to_string(limits.max_key_bytes) +
                           " are allowed",
                       std::move(path), limits.max_key_bytes);
  }
  if (!valid_utf8(key)) {
    auto path = pointer_of(stack);
    return limit_error("request.invalid_utf8", "a member name at " + where(path) + " is not UTF-8",
                       std::move(path), 0);
  }
  return {};
}

// The SAX handler of check_document_text: depth is Boost's (max_depth), the rest is counted here.
struct text_checker {
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);

  const document_limits* limits = nullptr;
  std::optional<error> failure;

  bool fail(error e, json::error_code& ec) {
    failure = std::move(e);
    ec = json::error::exception;  // any code: it stops the parser, `failure` says why
    return false;
  }
  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_array_begin(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return true; }
  bool on_array_end(std::size_t n, json::error_code& ec) { return members(n, "elements", ec); }
  bool on_object_end(std::size_t n, json::error_code& ec) { return members(n, "members", ec); }
  bool members(std::size_t n, const char* what, json::error_code& ec) {
    if (n <= limits->max_members) {
      return true;
    }
    return fail(make_error("record.too_many_members",
                           "an object or array holds " + std::to_string(n) + " " + what +
                               "; at most " + std::to_string(limits->max_members) + " are allowed",
                           {{"max", limits->max_members}}),
                ec);
  }
  bool on_string_part(std::string_view, std::size_t, json::error_code&) { return true; }
  bool on_string(std::string_view, std::size_t, json::error_code&) { return true; }
  bool on_key_part(std::string_view, std::size_t, json::error_code&) { return true; }
  bool on_key(std::string_view, std::size_t n, json::error_code& ec) {
    if (n <= limits->max_key_bytes) {
      return true;
    }
    return fail(make_error("record.key_too_long",
                           "a member name is " + std::to_string(n) + " bytes long; at most " +
                               std::to_string(limits->max_key_bytes) + " are allowed",
                           {{"max", limits->max_key_bytes}}),
                ec);
  }
  bool on_number_part(std::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t, std::string_view, json::error_code&) { return true; }
  bool on_uint64(std::uint64_t, std::string_view, json::error_code&) { return true; }
  bool on_double(double d, std::string_view, json::error_code& ec) {
    if (std::isfinite(d)) {
      return true;
    }
    return fail(make_error("record.invalid_number",
                           "a number is outside what JSON can carry (a double overflows past "
                           "1.7976931348623157e308)"),
                ec);
  }
  bool on_bool(bool, json::error_code&) { return true; }
  bool on_null(json::error_code&) { return true; }
  bool on_comment_part(std::string_view, json::error_code&) { return true; }
  bool on_comment(std::string_view, json::error_code&) { return true; }
};

error parse_failure(std::string_view text, const json::error_code& ec) {
  if (ec == json::error::too_deep) {
    return make_error("record.too_deep",
                      "the document nests deeper than " + std::to_string(max_document_depth) +
                          " levels of objects and arrays",
                      {{"max", max_document_depth}});
  }
  if (!valid_utf8(text)) {
    return make_error("request.invalid_utf8", "the body is not UTF-8 text");
  }
  return make_error("request.bad_json", "the body is not valid JSON: " + ec.message());
}

}  // namespace

json::parse_options document_parse_options() {
  json::parse_options po;
  po.max_depth = max_document_depth;
  return po;
}

namespace {

// The walk of check_document from a container `root` at `depth_offset`.
result<void> walk(frame root, const document_limits& limits, std::size_t depth_offset) {
  std::vector<frame> stack;
  if (auto ok = check_container(root, depth_offset + 1, limits, stack); !ok) {
    return ok;
  }
  stack.push_back(root);
  while (!stack.empty()) {
    auto& f = stack.back();
    if (f.next == f.size()) {
      stack.pop_back();
      continue;
    }
    const json::value* child = nullptr;
    if (f.obj) {
      const auto& kv = *(f.obj->begin() + f.next++);
      if (auto ok = check_key(kv.key(), limits, stack); !ok) {
        return ok;
      }
      child = &kv.value();
    } else {
      child = &(*f.arr)[f.next++];
    }
    if (child->is_object() || child->is_array()) {
      auto c = frame::of(*child);
      if (auto ok = check_container(c, depth_offset + stack.size() + 1, limits, stack); !ok) {
        return ok;
      }
      stack.push_back(c);
    } else if (auto ok = check_scalar(*child, stack); !ok) {
      return ok;
    }
  }
  return {};
}

}  // namespace

result<void> check_document(const json::value& doc, const document_limits& limits,
                            std::size_t depth_offset) {
  if (!doc.is_object() && !doc.is_array()) {
    return check_scalar(doc, {});
  }
  return walk(frame::of(doc), limits, depth_offset);
}

result<void> check_document(const json::object& doc, const document_limits& limits) {
  return walk(frame{&doc, nullptr}, limits, 0);
}

result<void> check_document_text(std::string_view text, const document_limits& limits) {
  if (text.size() > limits.max_bytes) {
    return record_too_large(text.size(), limits, {});
  }
  json::basic_parser<text_checker> p(document_parse_options());
  p.handler().limits = &limits;
  json::error_code ec;
  auto n = p.write_some(false, text.data(), text.size(), ec);
  if (p.handler().failure) {
    return std::move(*p.handler().failure);
  }
  if (!ec && n != text.size()) {
    ec = json::error::extra_data;
  }
  if (ec) {
    return parse_failure(text, ec);
  }
  return {};
}

result<json::value> parse_json(std::string_view text, std::size_t extra_depth) {
  json::error_code ec;
  auto options = document_parse_options();
  options.max_depth += extra_depth;
  auto v = json::parse(text, ec, {}, options);
  if (ec) {
    return parse_failure(text, ec);
  }
  return v;
}

result<json::value> parse_document(std::string_view text, const document_limits& limits) {
  auto v = parse_json(text);
  if (!v) {
    return v;
  }
  if (auto ok = check_document(*v, limits); !ok) {
    return std::move(ok).error();
  }
  return v;
}

document_measure measure_document(const json::value& v) {
  document_measure m;
  auto scalar_bytes = [](const json::value& s) -> std::size_t {
    if (s.is_string()) {
      return s.get_string().size() + 2;
    }
    if (s.is_bool()) {
      return s.get_bool() ? 4 : 5;
    }
    return 1;  // null, or a number: at least one digit
  };
  if (!v.is_object() && !v.is_array()) {
    m.bytes = scalar_bytes(v);
    return m;
  }
  std::vector<frame> stack;
  auto enter = [&](const json::value& c) {
    stack.push_back(frame::of(c));
    m.depth = std::max(m.depth, stack.size());
    const std::size_t n = stack.back().size();
    m.bytes += 2 + (n > 0 ? n - 1 : 0);  // brackets and commas
  };
  enter(v);
  while (!stack.empty()) {
    auto& f = stack.back();
    if (f.next == f.size()) {
      stack.pop_back();
      continue;
    }
    const json::value* child = nullptr;
    if (f.obj) {
      const auto& kv = *(f.obj->begin() + f.next++);
      m.bytes += kv.key().size() + 3;  // "key":
      child = &kv.value();
    } else {
      child = &(*f.arr)[f.next++];
    }
    if (child->is_object() || child->is_array()) {
      enter(*child);
    } else {
      m.bytes += scalar_bytes(*child);
    }
  }
  return m;
}

error record_too_large(std::size_t bytes, const document_limits& limits, std::string_view id) {
  boost::json::object details;
  details["bytes"] = bytes;
  details["max"] = limits.max_bytes;
  if (!id.empty()) {
    details["id"] = id;
  }
  return make_error("record.too_large",
                    std::string{id.empty() ? "the record" : "record '" + std::string{id} + "'"} +
                        " would be " + std::to_string(bytes) + " bytes; at most " +
                        std::to_string(limits.max_bytes) + " are allowed (records.maxBytes)",
                    std::move(details));
}

}  // namespace weir::core

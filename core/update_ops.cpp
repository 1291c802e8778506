// Parsing and applying $set / $unset / $inc updates (see update_ops.hpp).
#include "core/update_ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace weir::core {

namespace {

using boost::json::object;
using boost::json::value;

error with_path(std::string code, std::string message, std::string_view key,
                std::string_view path) {
  object details;
  details[key] = path;
  return make_error(std::move(code), std::move(message), std::move(details));
}

bool forbidden(const json_path& path) {
  const std::string& head = path.segments().front();
  return head == "id" || head == "_ver";
}

std::string_view op_name(update_op_kind kind) {
  switch (kind) {
    case update_op_kind::set:
      return "$set";
    case update_op_kind::unset:
      return "$unset";
    case update_op_kind::inc:
      return "$inc";
  }
  return "";
}

value sum(const value& a, const value& b) {
  if (a.is_double() || b.is_double()) {
    return value(a.to_number<double>() + b.to_number<double>());
  }
  if (a.is_int64() && b.is_int64()) {
    std::int64_t out = 0;
    if (!__builtin_add_overflow(a.get_int64(), b.get_int64(), &out)) {
      return value(out);
    }
    return value(static_cast<double>(a.get_int64()) + static_cast<double>(b.get_int64()));
  }
  // At least one uint64: add exactly in 128 bits, then pick the narrowest kind that holds it.
  auto wide = [](const value& v) {
    return v.is_int64() ? static_cast<__int128>(v.get_int64())
                        : static_cast<__int128>(v.get_uint64());
  };
  const __int128 s = wide(a) + wide(b);
  if (s >= std::numeric_limits<std::int64_t>::min() &&
      s <= std::numeric_limits<std::int64_t>::max()) {
    return value(static_cast<std::int64_t>(s));
  }
  if (s >= 0 && s <= static_cast<__int128>(std::numeric_limits<std::uint64_t>::max())) {
    return value(static_cast<std::uint64_t>(s));
  }
  return value(static_cast<double>(s));
}

// What a $set/$inc would find when walking `path` in `doc`, without changing it.
// Returns the error the op would cause, if any.
result<void> check_writable(const update_op& op, const object& doc) {
  const auto& segs = op.path.segments();
  const auto& idx = op.path.indexes();
  const value* cur = doc.if_contains(segs[0]);
  for (std::size_t i = 1; cur != nullptr && i < segs.size(); ++i) {
    if (const auto* obj = cur->if_object()) {
      cur = obj->if_contains(segs[i]);
    } else if (const auto* arr = cur->if_array();
               arr != nullptr && idx[i] != json_path::not_an_index) {
      if (idx[i] > arr->size() + max_array_padding) {
        // Padding is bounded: a small body must not make the record (and the node) huge.
        return with_path("update.index_out_of_range",
                         std::string(op_name(op.kind)) + " of \"" + op.path.text() +
                             "\" would pad the array with more than " +
                             std::to_string(max_array_padding) + " nulls",
                         "path", op.path.text());
      }
      cur = idx[i] < arr->size() ? &(*arr)[idx[i]] : nullptr;
    } else {
      return with_path("update.type_mismatch",
                       std::string(op_name(op.kind)) + " of \"" + op.path.text() +
                           "\" would have to go through a non-object value",
                       "path", op.path.text());
    }
  }
  if (op.kind == update_op_kind::inc && cur != nullptr && !cur->is_number()) {
    return with_path("update.type_mismatch",
                     "$inc of \"" + op.path.text() + "\" targets a non-number value", "path",
                     op.path.text());
  }
  if (op.kind == update_op_kind::inc && cur != nullptr) {
    auto s = sum(*cur, op.value);
    if (s.is_double() && !std::isfinite(s.get_double())) {
      return with_path("record.invalid_number",
                       "$inc of \"" + op.path.text() +
                           "\" would go past the largest number JSON can carry "
                           "(1.7976931348623157e308)",
                       "path", op.path.text());
    }
  }
  return {};
}

// Finds or creates the slot for path segment `i` inside container `parent`. The caller has
// already verified (check_writable) that the walk never meets a scalar.
value* slot(value& parent, const json_path& path, std::size_t i) {
  const std::string& seg = path.segments()[i];
  if (auto* arr = parent.if_array()) {
    const std::size_t index = path.indexes()[i];
    while (arr->size() <= index) {
      arr->emplace_back(nullptr);
    }
    return &(*arr)[index];
  }
  return &parent.as_object()[seg];
}

void apply_set_or_inc(const update_op& op, object& doc) {
  const auto& segs = op.path.segments();
  value* cur = &doc[segs[0]];
  for (std::size_t i = 1; i < segs.size(); ++i) {
    if (cur->is_null()) {
      // A fresh slot (or a null in the way): make it the intermediate object.
      *cur = object(doc.storage());
    }
    cur = slot(*cur, op.path, i);
  }
  if (op.kind == update_op_kind::set) {
    *cur = value(op.value, doc.storage());
  } else if (cur->is_number()) {
    *cur = sum(*cur, op.value);
  } else {
    *cur = value(op.value, doc.storage());
  }
}

void apply_unset(const update_op& op, object& doc) {
  const auto& segs = op.path.segments();
  if (segs.size() == 1) {
    doc.stable_erase(segs[0]);
    return;
  }
  value* parent = doc.if_contains(segs[0]);
  for (std::size_t i = 1; parent != nullptr && i + 1 < segs.size(); ++i) {
    if (auto* obj = parent->if_object()) {
      parent = obj->if_contains(segs[i]);
    } else if (auto* arr = parent->if_array();
               arr != nullptr && op.path.indexes()[i] < arr->size()) {
      parent = &(*arr)[op.path.indexes()[i]];
    } else {
      parent = nullptr;
    }
  }
  if (parent == nullptr) {
    return;
  }
  if (auto* obj = parent->if_object()) {
    obj->stable_erase(segs.back());
  } else if (auto* arr = parent->if_array()) {
    const std::size_t index = op.path.indexes().back();
    if (index < arr->size()) {
      (*arr)[index] = nullptr;
    }
  }
}

}  // namespace

result<update_spec> parse_update(const value& body, const document_limits& limits) {
  const auto* root = body.if_object();
  if (root == nullptr) {
    return make_error("request.not_object", "update body must be a JSON object");
  }
  update_spec spec;
  std::unordered_set<std::string> paths;
  std::unordered_map<std::string, std::string> ancestors;
  for (const auto& member : *root) {
    const std::string_view name = member.key();
    update_op_kind kind;
    if (name == "$set") {
      kind = update_op_kind::set;
    } else if (name == "$unset") {
      kind = update_op_kind::unset;
    } else if (name == "$inc") {
      kind = update_op_kind::inc;
    } else {
      return with_path(
          "update.unknown_operator",
          "unknown update operator \"" + std::string(name) + "\"; accepted: $set, $unset, $inc",
          "operator", name);
    }
    const auto* fields = member.value().if_object();
    if (fields == nullptr) {
      return with_path("update.invalid",
                       "the value of " + std::string(name) + " must be an object of paths",
                       "operator", name);
    }
    for (const auto& field : *fields) {
      if (static_cast<std::size_t>(std::count(field.key().begin(), field.key().end(), '.')) >=
          max_document_depth) {
        // Refused before it is split: a path this long names nothing a record can hold.
        error err = with_path("record.too_deep",
                              "the path of " + std::string(name) + " has more than " +
                                  std::to_string(max_document_depth) +
                                  " segments; a record nests at most that deep",
                              "operator", name);
        err.details["max"] = max_document_depth;
        return err;
      }
      auto path = json_path::parse(field.key());
      if (!path) {
        return std::move(path).error();
      }
      if (forbidden(*path)) {
        return with_path(
            "update.forbidden_field",
            "\"" + path->text() + "\" is maintained by the server and cannot be updated", "path",
            path->text());
      }
      if (kind == update_op_kind::inc && !field.value().is_number()) {
        return with_path("update.invalid", "$inc of \"" + path->text() + "\" needs a number",
                         "path", path->text());
      }
      if (kind != update_op_kind::unset) {
        // The value sits as deep as its path: a container in it is one level further down
        // for each segment.
        if (auto ok = check_document(field.value(), limits, path->segments().size()); !ok) {
          auto err = std::move(ok).error();
          err.details["field"] = path->text();
          return err;
        }
        for (const auto& seg : path->segments()) {
          if (seg.size() > limits.max_key_bytes) {
            error err = with_path("record.key_too_long",
                                  "a segment of \"" + path->text() + "\" is longer than " +
                                      std::to_string(limits.max_key_bytes) + " bytes",
                                  "path", path->text());
            err.details["max"] = limits.max_key_bytes;
            return err;
          }
        }
      }
      // Conflicts by hashing rather than comparing every pair: a body of many paths must not
      // cost their square. `paths`: each path so far; `ancestors`: each proper prefix of one,
      // with the path it came from.
      auto conflict = [&](const std::string& other) {
        error err = with_path(
            "update.conflict",
            "\"" + path->text() + "\" conflicts with \"" + other + "\" in the same update", "path",
            path->text());
        err.details["conflictsWith"] = other;
        return err;
      };
      const std::string& text = path->text();
      if (paths.count(text)) {
        return conflict(text);
      }
      if (auto a = ancestors.find(text); a != ancestors.end()) {
        return conflict(a->second);
      }
      for (auto dot = text.find('.'); dot != std::string::npos; dot = text.find('.', dot + 1)) {
        if (auto prefix = text.substr(0, dot); paths.count(prefix)) {
          return conflict(prefix);
        }
      }
      for (auto dot = text.find('.'); dot != std::string::npos; dot = text.find('.', dot + 1)) {
        ancestors.emplace(text.substr(0, dot), text);
      }
      paths.insert(text);
      spec.ops.push_back(update_op{kind, std::move(path).value(),
                                   kind == update_op_kind::unset ? value() : field.value()});
    }
  }
  if (spec.ops.empty()) {
    return make_error("update.empty", "update has no operations");
  }
  return spec;
}

result<void> apply_update(const update_spec& spec, object& doc) {
  // Ops never overlap (parse_update guarantees it), so checking each against the original record
  // is the same as checking it after the others ran: validate all, then mutate.
  for (const auto& op : spec.ops) {
    if (op.kind == update_op_kind::unset) {
      continue;
    }
    if (auto ok = check_writable(op, doc); !ok) {
      return ok;
    }
  }
  for (const auto& op : spec.ops) {
    if (op.kind == update_op_kind::unset) {
      apply_unset(op, doc);
    } else {
      apply_set_or_inc(op, doc);
    }
  }
  return {};
}

}  // namespace weir::core

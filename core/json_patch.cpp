// weir::core json patch — validation first, then the operations on a copy that replaces the
// document only when every one succeeded.
#include "core/json_patch.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "core/json_pointer.hpp"

namespace weir::core {

namespace json = boost::json;

namespace {

enum class op_kind { add, remove, replace, move, copy, test };

std::optional<op_kind> op_of(std::string_view name) {
  if (name == "add")
    return op_kind::add;
  if (name == "remove")
    return op_kind::remove;
  if (name == "replace")
    return op_kind::replace;
  if (name == "move")
    return op_kind::move;
  if (name == "copy")
    return op_kind::copy;
  if (name == "test")
    return op_kind::test;
  return std::nullopt;
}

struct operation {
  std::size_t index = 0;  // in the patch as sent
  op_kind kind = op_kind::add;
  std::string op_name;
  json_pointer path;
  json_pointer from;
  const json::value* value = nullptr;
};

error op_error(std::string code, const operation& o, std::string why) {
  return make_error(std::move(code),
                    "operation " + std::to_string(o.index) + " (" + o.op_name + " " +
                        o.path.to_string() + "): " + why,
                    {{"index", o.index}, {"op", o.op_name}, {"path", o.path.to_string()}});
}

error invalid(std::size_t index, std::string why) {
  return make_error("patch.invalid", "operation " + std::to_string(index) + ": " + why,
                    {{"index", index}});
}

/// The position `token` names in `arr`: an index below its size, or up to its size where an
/// element may be inserted (`at_end`).
result<std::size_t> index_in(const json::array& arr, const std::string& token, bool at_end,
                             const operation& o) {
  auto i = pointer_array_index(token);
  if (!i) {
    return op_error("patch.invalid_target", o, "'" + token + "' is not an index of an array");
  }
  if (*i > arr.size() || (*i == arr.size() && !at_end)) {
    return op_error(
        "patch.out_of_bounds", o,
        "index " + token + " is past the end of an array of " + std::to_string(arr.size()));
  }
  return *i;
}

/// The value a pointer names, or an error naming why it does not exist.
result<json::value*> locate(json::value& root, const json_pointer& p, const operation& o) {
  json::value* cur = &root;
  for (const auto& t : p.tokens()) {
    if (auto* obj = cur->if_object()) {
      auto* next = obj->if_contains(t);
      if (!next) {
        return op_error("patch.path_not_found", o, "no member '" + t + "'");
      }
      cur = next;
    } else if (auto* arr = cur->if_array()) {
      auto i = index_in(*arr, t, false, o);
      if (!i) {
        return std::move(i).error();
      }
      cur = &(*arr)[*i];
    } else {
      return op_error("patch.invalid_target", o, "'" + t + "' names a member of a scalar");
    }
  }
  return cur;
}

/// The container the last token of `p` is in (p must not be the root).
result<json::value*> locate_parent(json::value& root, const json_pointer& p, const operation& o) {
  json_pointer parent;
  for (std::size_t i = 0; i + 1 < p.tokens().size(); ++i) {
    parent = parent.child(p.tokens()[i]);
  }
  auto r = locate(root, parent, o);
  if (!r) {
    return op_error("patch.path_not_found", o, "its parent does not exist");
  }
  return r;
}

result<void> add(json::value& root, const json_pointer& p, json::value v, const operation& o) {
  if (p.is_root()) {
    root = std::move(v);
    return {};
  }
  auto parent = locate_parent(root, p, o);
  if (!parent) {
    return std::move(parent).error();
  }
  const auto& last = p.tokens().back();
  if (auto* obj = (*parent)->if_object()) {
    (*obj)[last] = std::move(v);
    return {};
  }
  if (auto* arr = (*parent)->if_array()) {
    if (last == "-") {
      arr->push_back(std::move(v));
      return {};
    }
    auto i = index_in(*arr, last, true, o);
    if (!i) {
      return std::move(i).error();
    }
    arr->insert(arr->begin() + static_cast<std::ptrdiff_t>(*i), std::move(v));
    return {};
  }
  return op_error("patch.invalid_target", o, "its parent is a scalar");
}

result<json::value> remove(json::value& root, const json_pointer& p, const operation& o) {
  if (p.is_root()) {
    return op_error("patch.invalid_target", o, "the whole document cannot be removed");
  }
  auto parent = locate_parent(root, p, o);
  if (!parent) {
    return std::move(parent).error();
  }
  const auto& last = p.tokens().back();
  if (auto* obj = (*parent)->if_object()) {
    auto it = obj->find(last);
    if (it == obj->end()) {
      return op_error("patch.path_not_found", o, "no member '" + last + "'");
    }
    json::value out = std::move(it->value());
    obj->erase(it);
    return out;
  }
  if (auto* arr = (*parent)->if_array()) {
    auto i = index_in(*arr, last, false, o);
    if (!i) {
      return std::move(i).error();
    }
    json::value out = std::move((*arr)[*i]);
    arr->erase(arr->begin() + static_cast<std::ptrdiff_t>(*i));
    return out;
  }
  return op_error("patch.invalid_target", o, "its parent is a scalar");
}

result<void> apply_one(json::value& doc, const operation& o) {
  switch (o.kind) {
    case op_kind::add:
      return add(doc, o.path, *o.value, o);
    case op_kind::remove: {
      auto r = remove(doc, o.path, o);
      if (!r) {
        return std::move(r).error();
      }
      return {};
    }
    case op_kind::replace: {
      auto target = locate(doc, o.path, o);
      if (!target) {
        return std::move(target).error();
      }
      **target = *o.value;
      return {};
    }
    case op_kind::move: {
      if (o.from.is_proper_prefix_of(o.path)) {
        return op_error("patch.move_into_child", o,
                        "'" + o.from.to_string() + "' cannot move into its own child");
      }
      auto source = locate(doc, o.from, o);
      if (!source) {
        return std::move(source).error();
      }
      if (o.from.tokens() == o.path.tokens()) {
        return {};
      }
      auto v = remove(doc, o.from, o);
      if (!v) {
        return std::move(v).error();
      }
      return add(doc, o.path, std::move(*v), o);
    }
    case op_kind::copy: {
      auto source = locate(doc, o.from, o);
      if (!source) {
        return std::move(source).error();
      }
      json::value v = **source;  // a deep copy: later changes must not alias the source
      return add(doc, o.path, std::move(v), o);
    }
    case op_kind::test: {
      auto target = locate(doc, o.path, o);
      if (!target) {
        return std::move(target).error();
      }
      if (!json_equal(**target, *o.value)) {
        return op_error("patch.test_failed", o, "the value differs");
      }
      return {};
    }
  }
  return {};
}

}  // namespace

result<patched_document> patched(json::value doc, const json::value& patch, patch_mode mode) {
  patch_outcome out;
  const auto* ops = patch.if_array();
  if (!ops) {
    return make_error("patch.invalid", "a JSON Patch is an array of operations");
  }
  // Every operation is checked before any applies: a malformed one fails the patch whole.
  std::vector<operation> todo;
  todo.reserve(ops->size());
  for (std::size_t i = 0; i < ops->size(); ++i) {
    const auto* o = (*ops)[i].if_object();
    if (!o) {
      return invalid(i, "not an object");
    }
    const auto* op = o->if_contains("op");
    if (!op || !op->is_string()) {
      return invalid(i, "op is missing or not a string");
    }
    operation item;
    item.index = i;
    item.op_name = std::string{op->get_string()};
    auto kind = op_of(op->get_string());
    if (!kind) {
      if (mode == patch_mode::lenient) {
        out.warnings.push_back("operation " + std::to_string(i) + ": unknown op '" + item.op_name +
                               "' dropped");
        continue;
      }
      return invalid(i, "unknown op '" + item.op_name + "'");
    }
    item.kind = *kind;
    const auto* path = o->if_contains("path");
    if (!path || !path->is_string()) {
      return invalid(i, "path is missing or not a string");
    }
    auto p = json_pointer::parse(std::string_view{path->get_string()});
    if (!p) {
      auto e = std::move(p).error();
      e.details["index"] = i;
      return e;
    }
    item.path = std::move(*p);
    if (*kind == op_kind::add || *kind == op_kind::replace || *kind == op_kind::test) {
      item.value = o->if_contains("value");
      if (!item.value) {
        return invalid(i, item.op_name + " needs a value");
      }
    }
    if (*kind == op_kind::move || *kind == op_kind::copy) {
      const auto* from = o->if_contains("from");
      if (!from || !from->is_string()) {
        return invalid(i, item.op_name + " needs from (a string)");
      }
      auto f = json_pointer::parse(std::string_view{from->get_string()});
      if (!f) {
        auto e = std::move(f).error();
        e.details["index"] = i;
        return e;
      }
      item.from = std::move(*f);
    }
    todo.push_back(std::move(item));
  }
  for (const auto& o : todo) {
    if (auto r = apply_one(doc, o); !r) {
      return std::move(r).error();
    }
  }
  return patched_document{std::move(doc), std::move(out)};
}

result<patch_outcome> apply_patch(json::value& doc, const json::value& patch, patch_mode mode) {
  // Applied to a copy that replaces the document only when every operation succeeded.
  auto r = patched(doc, patch, mode);
  if (!r) {
    return std::move(r).error();
  }
  doc = std::move(r->doc);
  return std::move(r->outcome);
}

}  // namespace weir::core

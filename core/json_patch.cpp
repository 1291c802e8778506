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

// What a patch has done so far, against the limits (see apply_patch): a lower bound of the
// document's serialized size, and the bytes of the values its ops copied, moved deeper,
// replaced or removed (each measured once, so the measuring is part of the bounded work).
struct accounting {
  const document_limits& limits;
  std::size_t size = 0;
  std::size_t work = 0;

  document_measure measure(const json::value& v) {
    auto m = measure_document(v);
    work += m.bytes;
    return m;
  }
  void shrink(std::size_t bytes) { size = bytes < size ? size - bytes : 0; }
  result<void> fits(const json_pointer& at, std::size_t depth, const operation& o) const {
    if (at.tokens().size() + depth > max_document_depth) {
      auto e = op_error("record.too_deep", o,
                        "the value would nest deeper than " + std::to_string(max_document_depth) +
                            " levels of objects and arrays");
      e.details["max"] = max_document_depth;
      return e;
    }
    return {};
  }
  result<void> within(const operation& o) const {
    if (size > limits.max_bytes) {
      auto e = op_error("record.too_large", o,
                        "the document would grow past " + std::to_string(limits.max_bytes) +
                            " bytes (records.maxBytes)");
      e.details["max"] = limits.max_bytes;
      return e;
    }
    if (work > 4 * limits.max_bytes) {
      auto e = op_error("record.too_large", o,
                        "the patch copies, moves or replaces more than " +
                            std::to_string(4 * limits.max_bytes) + " bytes in all");
      e.details["max"] = 4 * limits.max_bytes;
      return e;
    }
    return {};
  }
};

result<void> add(json::value& root, const json_pointer& p, json::value v, const operation& o,
                 accounting& acc, std::size_t bytes) {
  if (p.is_root()) {
    acc.size = bytes;
    root = std::move(v);
    return {};
  }
  auto parent = locate_parent(root, p, o);
  if (!parent) {
    return std::move(parent).error();
  }
  const auto& last = p.tokens().back();
  if (auto* obj = (*parent)->if_object()) {
    if (const auto* old = obj->if_contains(last)) {
      acc.shrink(acc.measure(*old).bytes);  // replaced, not added (RFC 6902 §4.1)
    } else {
      acc.size += last.size() + 4;  // "key": and a comma
    }
    acc.size += bytes;
    (*obj)[last] = std::move(v);
    return {};
  }
  if (auto* arr = (*parent)->if_array()) {
    acc.size += bytes + 1;
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

result<void> apply_one(json::value& doc, const operation& o, accounting& acc) {
  switch (o.kind) {
    case op_kind::add: {
      auto m = acc.measure(*o.value);
      if (auto ok = acc.fits(o.path, m.depth, o); !ok) {
        return ok;
      }
      return add(doc, o.path, *o.value, o, acc, m.bytes);
    }
    case op_kind::remove: {
      auto r = remove(doc, o.path, o);
      if (!r) {
        return std::move(r).error();
      }
      acc.shrink(acc.measure(*r).bytes);
      return {};
    }
    case op_kind::replace: {
      auto target = locate(doc, o.path, o);
      if (!target) {
        return std::move(target).error();
      }
      auto m = acc.measure(*o.value);
      if (auto ok = acc.fits(o.path, m.depth, o); !ok) {
        return ok;
      }
      acc.shrink(acc.measure(**target).bytes);
      acc.size += m.bytes;
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
      // Only a move deeper can nest past the bound: the value fitted where it was.
      std::size_t bytes = 0;
      if (o.path.tokens().size() > o.from.tokens().size()) {
        auto m = acc.measure(**source);
        if (auto ok = acc.fits(o.path, m.depth, o); !ok) {
          return ok;
        }
        bytes = m.bytes;
      }
      auto v = remove(doc, o.from, o);
      if (!v) {
        return std::move(v).error();
      }
      acc.shrink(bytes);  // it comes back in add(); a shallower move is not measured at all
      return add(doc, o.path, std::move(*v), o, acc, bytes);
    }
    case op_kind::copy: {
      auto source = locate(doc, o.from, o);
      if (!source) {
        return std::move(source).error();
      }
      // Measured before the copy is made: a copy that would take the document past its bound
      // is refused without building it.
      auto m = acc.measure(**source);
      if (auto ok = acc.fits(o.path, m.depth, o); !ok) {
        return ok;
      }
      if (acc.size + m.bytes > acc.limits.max_bytes || acc.work > 4 * acc.limits.max_bytes) {
        acc.size += m.bytes;
        return acc.within(o);
      }
      json::value v = **source;  // a deep copy: later changes must not alias the source
      return add(doc, o.path, std::move(v), o, acc, m.bytes);
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

// A pointer with more tokens than a document may nest levels names nothing that can exist, and
// resolving its parent costs the square of its length: refused before anything runs.
result<void> too_deep(const json_pointer& p, const operation& o) {
  if (p.tokens().size() <= max_document_depth) {
    return {};
  }
  auto e = op_error("record.too_deep", o,
                    "the pointer has " + std::to_string(p.tokens().size()) +
                        " tokens; a document nests at most " + std::to_string(max_document_depth) +
                        " levels");
  e.details["max"] = max_document_depth;
  return e;
}

// The operations of `patch`, each checked (its members, its pointers, its value against the
// limits) before any applies: a malformed one fails the patch whole.
result<std::vector<operation>> parse_ops(const json::value& patch, patch_mode mode,
                                         patch_outcome& out, const document_limits& limits) {
  const auto* ops = patch.if_array();
  if (!ops) {
    return make_error("patch.invalid", "a JSON Patch is an array of operations");
  }
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
    if (auto deep = too_deep(item.path, item); !deep) {
      return std::move(deep).error();
    }
    if (*kind == op_kind::add || *kind == op_kind::replace || *kind == op_kind::test) {
      item.value = o->if_contains("value");
      if (!item.value) {
        return invalid(i, item.op_name + " needs a value");
      }
      if (auto ok = check_document(*item.value, limits); !ok) {
        auto e = std::move(ok).error();
        e.details["index"] = i;
        return e;
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
      if (auto deep = too_deep(item.from, item); !deep) {
        return std::move(deep).error();
      }
    }
    todo.push_back(std::move(item));
  }
  return todo;
}

}  // namespace

result<void> check_patch(const json::value& patch, patch_mode mode, const document_limits& limits) {
  patch_outcome out;
  auto ops = parse_ops(patch, mode, out, limits);
  if (!ops) {
    return std::move(ops).error();
  }
  return {};
}

result<patched_document> patched(json::value doc, const json::value& patch, patch_mode mode,
                                 const document_limits& limits) {
  patch_outcome out;
  auto ops = parse_ops(patch, mode, out, limits);
  if (!ops) {
    return std::move(ops).error();
  }
  auto& todo = ops.value();
  accounting acc{limits};
  acc.size = measure_document(doc).bytes;
  for (const auto& o : todo) {
    if (auto r = apply_one(doc, o, acc); !r) {
      return std::move(r).error();
    }
    if (auto ok = acc.within(o); !ok) {
      return std::move(ok).error();
    }
  }
  return patched_document{std::move(doc), std::move(out)};
}

result<patch_outcome> apply_patch(json::value& doc, const json::value& patch, patch_mode mode,
                                  const document_limits& limits) {
  // Applied to a copy that replaces the document only when every operation succeeded.
  auto r = patched(doc, patch, mode, limits);
  if (!r) {
    return std::move(r).error();
  }
  doc = std::move(r->doc);
  return std::move(r->outcome);
}

}  // namespace weir::core

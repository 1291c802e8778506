// weir::core json diff — a recursive walk emitting add/remove/replace, with an id-keyed pass for
// arrays of objects that carry unique "id" members (the shape of Weir's datasets). The walk runs on
// a work budget proportional to the two documents' size: trying both array strategies at every
// level of nested keyed arrays would otherwise cost 2^depth, and matching ids in place n² — a
// record a caller shaped for it could hold a shard for minutes. Past the budget the diff is the
// whole document, which is always a correct patch.
#include "core/json_diff.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "core/document_check.hpp"
#include "core/json_patch.hpp"
#include "core/json_pointer.hpp"

namespace weir::core {

namespace json = boost::json;

namespace {

json::object op(const char* name, const std::string& path) {
  return json::object{{"op", name}, {"path", path}};
}

void add_op(json::array& out, const std::string& path, const json::value& v) {
  auto o = op("add", path);
  o["value"] = v;
  out.push_back(std::move(o));
}

void replace_op(json::array& out, const std::string& path, const json::value& v) {
  auto o = op("replace", path);
  o["value"] = v;
  out.push_back(std::move(o));
}

/// What the walk may still spend, in units of about one element visited or byte serialized.
struct budget {
  std::size_t left;
  bool spend(std::size_t n) {
    left = n > left ? 0 : left - n;
    return left > 0;
  }
  bool spent() const { return left == 0; }
};

void diff_into(json::array& out, const std::string& path, const json::value& a,
               const json::value& b, budget& w);

/// The id of an array element, when it is an object with a string or integer "id".
std::optional<std::string> id_of(const json::value& v) {
  const auto* o = v.if_object();
  if (!o) {
    return std::nullopt;
  }
  const auto* id = o->if_contains("id");
  if (!id) {
    return std::nullopt;
  }
  if (id->is_string()) {
    return "s" + std::string{id->get_string()};
  }
  if (id->is_int64() || id->is_uint64()) {
    return "n" + json::serialize(*id);
  }
  return std::nullopt;
}

/// Both arrays hold only objects with unique ids.
bool keyed_by_id(const json::array& a, const json::array& b) {
  for (const auto* arr : {&a, &b}) {
    std::unordered_set<std::string> seen;
    for (const auto& v : *arr) {
      auto id = id_of(v);
      if (!id || !seen.insert(*id).second) {
        return false;
      }
    }
  }
  return true;
}

/// Position by position: changed elements recursed into, the tail added or removed.
void diff_by_position(json::array& out, const std::string& path, const json::array& a,
                      const json::array& b, budget& w) {
  std::size_t common = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < common && !w.spent(); ++i) {
    diff_into(out, path + "/" + std::to_string(i), a[i], b[i], w);
  }
  for (std::size_t i = common; i < b.size(); ++i) {
    add_op(out, path + "/-", b[i]);
  }
  for (std::size_t i = a.size(); i > common; --i) {
    out.push_back(op("remove", path + "/" + std::to_string(i - 1)));
  }
}

/// By id: elements whose id is gone are removed, the rest moved into place and recursed into,
/// new ones added where they belong.
void diff_by_id(json::array& out, const std::string& path, const json::array& a,
                const json::array& b, budget& w) {
  std::unordered_set<std::string> wanted;
  for (const auto& v : b) {
    wanted.insert(*id_of(v));
  }
  std::vector<std::string> cur;  // ids of the working array, as the ops so far leave it
  std::vector<const json::value*> vals;
  for (std::size_t i = a.size(); i > 0; --i) {
    if (!wanted.count(*id_of(a[i - 1]))) {
      out.push_back(op("remove", path + "/" + std::to_string(i - 1)));
    }
  }
  for (const auto& v : a) {
    auto id = *id_of(v);
    if (wanted.count(id)) {
      cur.push_back(std::move(id));
      vals.push_back(&v);
    }
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    auto id = *id_of(b[i]);
    std::size_t j = i;
    while (j < cur.size() && cur[j] != id) {
      ++j;
    }
    // The scan, and the shifts of insert and erase below.
    if (!w.spend(1 + (j - i) + (cur.size() - i))) {
      return;
    }
    auto at = path + "/" + std::to_string(i);
    if (j == cur.size()) {
      add_op(out, at, b[i]);
      cur.insert(cur.begin() + static_cast<std::ptrdiff_t>(i), id);
      vals.insert(vals.begin() + static_cast<std::ptrdiff_t>(i), &b[i]);
      continue;
    }
    if (j != i) {
      auto m = op("move", at);
      m["from"] = path + "/" + std::to_string(j);
      out.push_back(std::move(m));
      auto moved_id = cur[j];
      auto moved_val = vals[j];
      cur.erase(cur.begin() + static_cast<std::ptrdiff_t>(j));
      vals.erase(vals.begin() + static_cast<std::ptrdiff_t>(j));
      cur.insert(cur.begin() + static_cast<std::ptrdiff_t>(i), moved_id);
      vals.insert(vals.begin() + static_cast<std::ptrdiff_t>(i), moved_val);
    }
    diff_into(out, at, *vals[i], b[i], w);
  }
}

std::size_t size_of(const json::array& patch, budget& w) {
  auto n = json::serialize(patch).size();
  w.spend(n);
  return n;
}

void diff_into(json::array& out, const std::string& path, const json::value& a,
               const json::value& b, budget& w) {
  if (!w.spend(1) || json_equal(a, b)) {
    return;
  }
  if (a.is_object() && b.is_object()) {
    const auto& x = a.get_object();
    const auto& y = b.get_object();
    for (const auto& kv : x) {
      if (!y.contains(kv.key())) {
        out.push_back(op("remove", path + "/" + escape_pointer_token(kv.key())));
      }
    }
    for (const auto& kv : y) {
      auto child = path + "/" + escape_pointer_token(kv.key());
      if (const auto* old = x.if_contains(kv.key())) {
        diff_into(out, child, *old, kv.value(), w);
      } else {
        add_op(out, child, kv.value());
      }
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    json::array positional;
    diff_by_position(positional, path, a.get_array(), b.get_array(), w);
    json::array best = std::move(positional);
    if (keyed_by_id(a.get_array(), b.get_array())) {
      json::array by_id;
      diff_by_id(by_id, path, a.get_array(), b.get_array(), w);
      if (size_of(by_id, w) < size_of(best, w)) {
        best = std::move(by_id);
      }
    }
    json::array whole;
    replace_op(whole, path, b);
    if (size_of(whole, w) < size_of(best, w)) {
      best = std::move(whole);
    }
    for (auto& o : best) {
      out.push_back(std::move(o));
    }
    return;
  }
  replace_op(out, path, b);
}

}  // namespace

json::array json_diff(const json::value& a, const json::value& b) {
  budget w{16 * (measure_document(a).bytes + measure_document(b).bytes) + 65536};
  json::array out;
  diff_into(out, "", a, b, w);
  json::array whole;
  replace_op(whole, "", b);
  if (w.spent()) {
    return whole;
  }
  budget unlimited{std::size_t(-1)};
  if (!out.empty() && size_of(out, unlimited) > size_of(whole, unlimited)) {
    return whole;
  }
  return out;
}

}  // namespace weir::core

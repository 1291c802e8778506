// Change-set computation of Arc hub §5.1: identity walk when every item has a unique identity,
// JSON-set comparison otherwise.
#include "core/change_set.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <boost/json/serialize.hpp>

namespace weir::core {

namespace {

constexpr double max_safe_integer = 9007199254740991.0;  // 2^53 - 1
constexpr std::int64_t max_safe_int64 = 9007199254740991;

bool is_id_key(std::string_view key) {
  return key.size() == 2 && (key[0] == 'i' || key[0] == 'I') && (key[1] == 'd' || key[1] == 'D');
}

bool valid_identity_value(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::string:
    case boost::json::kind::bool_:
      return true;
    case boost::json::kind::int64: {
      const std::int64_t i = v.get_int64();
      return i >= -max_safe_int64 && i <= max_safe_int64;
    }
    case boost::json::kind::uint64:
      return v.get_uint64() <= static_cast<std::uint64_t>(max_safe_int64);
    case boost::json::kind::double_: {
      const double d = v.get_double();
      if (!std::isfinite(d)) {
        return false;
      }
      const double t = std::trunc(d);
      return t >= -max_safe_integer && t <= max_safe_integer;
    }
    default:
      return false;
  }
}

bool is_number(const boost::json::value& v) {
  return v.is_int64() || v.is_uint64() || v.is_double();
}

// Identity numbers are bounded by |trunc(x)| <= 2^53-1, so every integer kind converts to double
// exactly and double comparison is exact numeric comparison.
double as_double(const boost::json::value& v) {
  if (v.is_int64()) {
    return static_cast<double>(v.get_int64());
  }
  if (v.is_uint64()) {
    return static_cast<double>(v.get_uint64());
  }
  return v.get_double();
}

std::string serialize_item(const boost::json::value& v) {
  return boost::json::serialize(v);
}

using id_index =
    std::unordered_map<const boost::json::value*, std::size_t, identity_hasher, identity_key_equal>;

// Maps each item's identity to its position. Returns false when an item has no identity or an
// identity repeats, which sends the caller to the JSON-set fallback.
bool index_identities(const boost::json::array& items, id_index& out) {
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const boost::json::value* id = item_identity(items[i]);
    if (id == nullptr) {
      return false;
    }
    if (!out.emplace(id, i).second) {
      return false;
    }
  }
  return true;
}

change_set compute_by_json(const boost::json::array& previous, const boost::json::array& current) {
  std::vector<std::string> prev_text;
  prev_text.reserve(previous.size());
  for (const auto& item : previous) {
    prev_text.push_back(serialize_item(item));
  }
  std::vector<std::string> cur_text;
  cur_text.reserve(current.size());
  for (const auto& item : current) {
    cur_text.push_back(serialize_item(item));
  }
  const std::unordered_set<std::string_view> prev_set(prev_text.begin(), prev_text.end());
  const std::unordered_set<std::string_view> cur_set(cur_text.begin(), cur_text.end());

  change_set cs;
  for (std::size_t i = 0; i < current.size(); ++i) {
    if (!prev_set.contains(cur_text[i])) {
      cs.added.push_back(current[i]);
    }
  }
  for (std::size_t i = 0; i < previous.size(); ++i) {
    if (!cur_set.contains(prev_text[i])) {
      cs.removed.push_back(previous[i]);
    }
  }
  return cs;
}

}  // namespace

const boost::json::value* item_identity(const boost::json::value& item) {
  const boost::json::object* obj = item.if_object();
  if (obj == nullptr) {
    return nullptr;
  }
  const boost::json::value* found = nullptr;
  for (const auto& member : *obj) {
    if (is_id_key(member.key())) {
      if (found != nullptr) {
        return nullptr;  // more than one id-like member: ambiguous, so no identity
      }
      found = &member.value();
    }
  }
  if (found == nullptr || !valid_identity_value(*found)) {
    return nullptr;
  }
  return found;
}

bool identity_equal(const boost::json::value& a, const boost::json::value& b) {
  if (is_number(a) && is_number(b)) {
    return as_double(a) == as_double(b);
  }
  if (a.kind() != b.kind()) {
    return false;
  }
  if (a.is_string()) {
    return a.get_string() == b.get_string();
  }
  if (a.is_bool()) {
    return a.get_bool() == b.get_bool();
  }
  return a == b;  // not an identity kind; plain JSON equality keeps the function total
}

std::size_t identity_hash(const boost::json::value& id) {
  // Kind tags keep "1", 1 and true apart in the hash as well as in equality.
  if (is_number(id)) {
    double d = as_double(id);
    if (d == 0.0) {
      d = 0.0;  // -0 and +0 are the same number
    }
    return std::hash<double>{}(d) ^ 0x9e3779b97f4a7c15ULL;
  }
  if (id.is_string()) {
    const auto& s = id.get_string();
    return std::hash<std::string_view>{}(std::string_view(s.data(), s.size()));
  }
  if (id.is_bool()) {
    return id.get_bool() ? 0x51ed2701ULL : 0x2545f491ULL;
  }
  return std::hash<std::string>{}(boost::json::serialize(id));
}

change_set compute_change_set(const boost::json::array& previous,
                              const boost::json::array& current) {
  id_index prev_ids;
  id_index cur_ids;
  if (!index_identities(previous, prev_ids) || !index_identities(current, cur_ids)) {
    return compute_by_json(previous, current);
  }

  change_set cs;
  for (const auto& item : current) {
    const boost::json::value* id = item_identity(item);
    const auto it = prev_ids.find(id);
    if (it == prev_ids.end()) {
      cs.added.push_back(item);
    } else if (serialize_item(previous[it->second]) != serialize_item(item)) {
      cs.replaced.push_back(item);
    }
  }
  for (const auto& item : previous) {
    if (!cur_ids.contains(item_identity(item))) {
      cs.removed.push_back(item);
    }
  }
  return cs;
}

void append_change_set_json(std::string& out, const change_set& cs) {
  out += "{\"added\":";
  out += boost::json::serialize(cs.added);
  out += ",\"replaced\":";
  out += boost::json::serialize(cs.replaced);
  out += ",\"removed\":";
  out += boost::json::serialize(cs.removed);
  out += '}';
}

}  // namespace weir::core

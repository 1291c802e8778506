// Sort specifications and the JSON total order (see sort_spec.hpp).
#include "core/sort_spec.hpp"

#include <boost/json/parse.hpp>

#include "core/json_scan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace weir::core {

namespace {

template <class T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Exact comparison of an integer with a double in (-2^63, 2^63] range handled by the callers;
// compares the integer part first, then the sign of the fraction.
template <class Int>
int compare_int_with_truncated(Int i, double d) {
  const double t = std::trunc(d);
  const Int ti = static_cast<Int>(t);
  if (i != ti) {
    return i < ti ? -1 : 1;
  }
  const double frac = d - t;
  return frac > 0 ? -1 : (frac < 0 ? 1 : 0);
}

constexpr double two_pow_63 = 9223372036854775808.0;
constexpr double two_pow_64 = 18446744073709551616.0;

int compare_int64_double(std::int64_t i, double d) {
  if (std::isnan(d)) {
    return 1;
  }
  if (d >= two_pow_63) {
    return -1;
  }
  if (d < -two_pow_63) {
    return 1;
  }
  return compare_int_with_truncated<std::int64_t>(i, d);
}

int compare_uint64_double(std::uint64_t u, double d) {
  if (std::isnan(d)) {
    return 1;
  }
  if (d < 0) {
    return 1;
  }
  if (d >= two_pow_64) {
    return -1;
  }
  return compare_int_with_truncated<std::uint64_t>(u, d);
}

int compare_double(double a, double b) {
  const bool na = std::isnan(a);
  const bool nb = std::isnan(b);
  if (na || nb) {
    return na == nb ? 0 : (na ? -1 : 1);
  }
  return three_way(a, b);
}

int compare_strings(const boost::json::string& a, const boost::json::string& b) {
  // char_traits<char>::compare orders bytes as unsigned char, as memcmp does.
  const int c = std::string_view(a).compare(std::string_view(b));
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

result<sort_spec> invalid_sort(std::string message) {
  boost::json::object details;
  details["field"] = "sort";
  return make_error("request.invalid_field", std::move(message), std::move(details));
}

}  // namespace

int json_type_rank(const boost::json::value* v) {
  if (v == nullptr) {
    return 0;
  }
  switch (v->kind()) {
    case boost::json::kind::null:
      return 0;
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_:
      return 1;
    case boost::json::kind::string:
      return 2;
    case boost::json::kind::object:
      return 3;
    case boost::json::kind::array:
      return 4;
    case boost::json::kind::bool_:
      return 5;
  }
  return 0;
}

int compare_numbers(const boost::json::value& a, const boost::json::value& b) {
  using boost::json::kind;
  switch (a.kind()) {
    case kind::int64: {
      const std::int64_t x = a.get_int64();
      if (b.is_int64()) {
        return three_way(x, b.get_int64());
      }
      if (b.is_uint64()) {
        return x < 0 ? -1 : three_way(static_cast<std::uint64_t>(x), b.get_uint64());
      }
      return compare_int64_double(x, b.get_double());
    }
    case kind::uint64: {
      const std::uint64_t x = a.get_uint64();
      if (b.is_uint64()) {
        return three_way(x, b.get_uint64());
      }
      if (b.is_int64()) {
        const std::int64_t y = b.get_int64();
        return y < 0 ? 1 : three_way(x, static_cast<std::uint64_t>(y));
      }
      return compare_uint64_double(x, b.get_double());
    }
    default: {
      const double x = a.get_double();
      if (b.is_double()) {
        return compare_double(x, b.get_double());
      }
      return -compare_numbers(b, a);
    }
  }
}

int compare_json(const boost::json::value* a, const boost::json::value* b) {
  const int ra = json_type_rank(a);
  const int rb = json_type_rank(b);
  if (ra != rb) {
    return ra < rb ? -1 : 1;
  }
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return compare_numbers(*a, *b);
    case 2:
      return compare_strings(a->get_string(), b->get_string());
    case 3: {
      const auto& oa = a->get_object();
      const auto& ob = b->get_object();
      auto ia = oa.begin();
      auto ib = ob.begin();
      for (; ia != oa.end() && ib != ob.end(); ++ia, ++ib) {
        const int ck = std::string_view(ia->key()).compare(std::string_view(ib->key()));
        if (ck != 0) {
          return ck < 0 ? -1 : 1;
        }
        const int cv = compare_json(&ia->value(), &ib->value());
        if (cv != 0) {
          return cv;
        }
      }
      return three_way(oa.size(), ob.size());
    }
    case 4: {
      const auto& xa = a->get_array();
      const auto& xb = b->get_array();
      const std::size_t n = std::min(xa.size(), xb.size());
      for (std::size_t i = 0; i < n; ++i) {
        const int c = compare_json(&xa[i], &xb[i]);
        if (c != 0) {
          return c;
        }
      }
      return three_way(xa.size(), xb.size());
    }
    default:
      return three_way(a->get_bool(), b->get_bool());
  }
}

result<sort_spec> sort_spec::parse(const std::vector<std::string>& keys) {
  if (keys.size() > max_sort_keys) {
    return invalid_sort("sort has " + std::to_string(keys.size()) + " keys; at most " +
                        std::to_string(max_sort_keys) + " are allowed");
  }
  sort_spec spec;
  spec.keys_.reserve(keys.size());
  spec.paths_.reserve(keys.size());
  for (const auto& raw : keys) {
    std::string_view text = raw;
    const bool descending = !text.empty() && text.front() == '-';
    if (descending) {
      text.remove_prefix(1);
    }
    if (text.empty()) {
      return invalid_sort("sort key \"" + raw + "\" names no field");
    }
    auto path = json_path::parse(text);
    if (!path) {
      return invalid_sort("sort key \"" + raw + "\": " + path.error().message);
    }
    spec.keys_.push_back(sort_key{std::string(text), descending});
    spec.paths_.push_back(std::move(path).value());
  }
  return spec;
}

result<sort_spec> sort_spec::parse(const boost::json::value& v) {
  const auto* arr = v.if_array();
  if (arr == nullptr) {
    return invalid_sort("sort must be an array of strings");
  }
  std::vector<std::string> keys;
  keys.reserve(arr->size());
  for (const auto& item : *arr) {
    const auto* s = item.if_string();
    if (s == nullptr) {
      return invalid_sort("sort must be an array of strings");
    }
    keys.emplace_back(*s);
  }
  return parse(keys);
}

void sort_spec::prepend(sort_key key) {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i].path == key.path) {
      keys_.erase(keys_.begin() + static_cast<std::ptrdiff_t>(i));
      paths_.erase(paths_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  auto path = json_path::parse(key.path);
  paths_.insert(paths_.begin(), path ? std::move(path).value() : json_path{});
  keys_.insert(keys_.begin(), std::move(key));
}

int sort_spec::compare(const boost::json::object& a, const boost::json::object& b) const {
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    const int c = compare_json(paths_[i].find(a), paths_[i].find(b));
    if (c != 0) {
      return keys_[i].descending ? -c : c;
    }
  }
  return compare_json(a.if_contains("id"), b.if_contains("id"));
}

namespace {

/// A string's summary: its type class, then its first seven bytes, big-endian (byte-wise order
/// on what fits, ties beyond).
std::uint64_t string_prefix(std::string_view s) {
  std::uint64_t payload = 0;
  for (std::size_t i = 0; i < 7; ++i) {
    payload = (payload << 8) | (i < s.size() ? static_cast<unsigned char>(s[i]) : 0u);
  }
  return (std::uint64_t{2} << 61) | (payload << 5);
}

/// Order-preserving 61-bit summary of one value (see sort_position): the type class in the top
/// three bits, then what fits of the value.
std::uint64_t value_prefix(const boost::json::value* v) {
  const auto rank = static_cast<std::uint64_t>(json_type_rank(v));
  std::uint64_t payload = 0;
  switch (rank) {
    case 1: {
      double d = v->is_double()  ? v->get_double()
                 : v->is_int64() ? static_cast<double>(v->get_int64())
                                 : static_cast<double>(v->get_uint64());
      if (std::isnan(d)) {
        payload = 0;  // NaN sorts below every other number
        break;
      }
      if (d == 0) {
        d = 0;  // -0.0 equals 0.0: one summary for both
      }
      std::uint64_t u = 0;
      std::memcpy(&u, &d, sizeof u);
      u = (u >> 63) ? ~u : (u | (std::uint64_t{1} << 63));
      payload = u >> 3;  // never 0 for a non-NaN number
      break;
    }
    case 2:
      return string_prefix(v->get_string());
    case 5:
      payload = v->get_bool() ? 1 : 0;
      break;
    default:
      break;
  }
  return (rank << 61) | payload;
}

}  // namespace

namespace {

/// Whether a value's summary pins it down: two equal exact summaries mean equal values. Holds
/// for null and missing, booleans, integers of magnitude below 2^50 (the summary keeps every bit
/// of them), and strings of at most six bytes without a NUL (the seventh summary byte is then a
/// padding zero no longer string can share).
bool exact_value(const boost::json::value* v) {
  switch (json_type_rank(v)) {
    case 0:
    case 5:
      return true;
    case 1: {
      constexpr double limit = 1125899906842624.0;  // 2^50
      if (v->is_int64()) {
        auto i = v->get_int64();
        return i > -static_cast<std::int64_t>(limit) && i < static_cast<std::int64_t>(limit);
      }
      if (v->is_uint64()) {
        return v->get_uint64() < static_cast<std::uint64_t>(limit);
      }
      auto d = v->get_double();
      return std::trunc(d) == d && std::fabs(d) < limit;
    }
    case 2: {
      std::string_view s = v->get_string();
      return s.size() <= 6 && s.find('\0') == std::string_view::npos;
    }
    default:
      return false;
  }
}

}  // namespace

sort_spec::key_prefix sort_spec::key_prefix_of(const boost::json::object& doc,
                                               std::size_t k) const {
  const boost::json::value* v = k < paths_.size() ? paths_[k].find(doc) : doc.if_contains("id");
  auto p = value_prefix(v);
  bool descending = k < keys_.size() && keys_[k].descending;
  return {descending ? ~p : p, exact_value(v)};
}

std::optional<std::string_view> sort_spec::key_text(std::string_view json, std::size_t k) const {
  static const std::vector<std::string> id_path{"id"};
  const auto& segs = k < paths_.size() ? paths_[k].segments() : id_path;
  if (segs.empty()) {
    return std::string_view{};  // a malformed path sorts every record as missing
  }
  if (k < paths_.size()) {
    for (auto idx : paths_[k].indexes()) {
      if (idx != json_path::not_an_index) {
        return std::nullopt;  // an index segment may enter an array
      }
    }
  }
  return scan_path(json, segs);
}

std::optional<std::string_view> sort_spec::plain_string_of_text(std::string_view json,
                                                                std::size_t k) const {
  auto raw = key_text(json, k);
  if (!raw || raw->empty() || raw->front() != '"') {
    return std::nullopt;
  }
  auto body = raw->substr(1, raw->size() - 2);
  if (body.find('\\') != std::string_view::npos) {
    return std::nullopt;
  }
  return body;
}

std::optional<sort_spec::key_prefix> sort_spec::key_prefix_of_text(std::string_view json,
                                                                   std::size_t k) const {
  bool descending = k < keys_.size() && keys_[k].descending;
  auto finish = [&](const boost::json::value* v) {
    auto p = value_prefix(v);
    return key_prefix{descending ? ~p : p, exact_value(v)};
  };
  auto raw = key_text(json, k);
  if (!raw) {
    return std::nullopt;
  }
  if (raw->empty()) {
    return finish(nullptr);
  }
  switch (raw->front()) {
    case '"': {
      auto body = raw->substr(1, raw->size() - 2);
      if (body.find('\\') != std::string_view::npos) {
        return std::nullopt;
      }
      auto p = string_prefix(body);
      bool exact = body.size() <= 6;
      return key_prefix{descending ? ~p : p, exact};
    }
    case 't':
    case 'f': {
      boost::json::value v = raw->front() == 't';
      return finish(&v);
    }
    case 'n':
      return finish(nullptr);
    case '{': {
      boost::json::value v = boost::json::object{};
      auto kp = finish(&v);
      kp.exact = false;
      return kp;
    }
    case '[': {
      boost::json::value v = boost::json::array{};
      auto kp = finish(&v);
      kp.exact = false;
      return kp;
    }
    default: {
      boost::system::error_code ec;
      auto v = boost::json::parse(*raw, ec);
      if (ec || !v.is_number()) {
        return std::nullopt;
      }
      return finish(&v);
    }
  }
}

std::optional<std::uint64_t> sort_spec::prefix_of_text(std::string_view json) const {
  auto kp = key_prefix_of_text(json, 0);
  return kp ? std::optional<std::uint64_t>{kp->prefix} : std::nullopt;
}

std::uint64_t sort_spec::prefix_of_first_key(const boost::json::value& v) const {
  auto p = value_prefix(&v);
  return !keys_.empty() && keys_[0].descending ? ~p : p;
}

int sort_spec::compare_key(std::size_t k, const boost::json::value* a,
                           const boost::json::value* b) const {
  const int c = compare_json(a, b);
  return k < keys_.size() && keys_[k].descending ? -c : c;
}

json_path sort_spec::first_key_path() const {
  return paths_.empty() ? json_path::parse("id").value() : paths_[0];
}

std::uint64_t sort_spec::prefix_of(const boost::json::object& doc) const {
  return key_prefix_of(doc, 0).prefix;
}

sort_position sort_spec::position_of(const boost::json::object& doc) const {
  sort_position out;
  out.prefix = prefix_of(doc);
  out.values.reserve(paths_.size());
  for (const auto& p : paths_) {
    const auto* v = p.find(doc);
    // Onto the default resource: `doc` may be a doc_reader's, whose arena the next read reuses.
    out.values.push_back(v ? boost::json::value(*v, boost::json::storage_ptr{})
                           : boost::json::value{});
  }
  if (const auto* id = doc.if_contains("id"); id && id->is_string()) {
    out.id = std::string{id->get_string()};
  }
  return out;
}

int sort_spec::compare(const sort_position& a, const sort_position& b) const {
  if (a.prefix != b.prefix) {
    return a.prefix < b.prefix ? -1 : 1;
  }
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const int c = compare_json(&a.values[i], &b.values[i]);
    if (c != 0) {
      return keys_[i].descending ? -c : c;
    }
  }
  const int c = std::string_view{a.id}.compare(b.id);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

namespace {

/// json_type_rank of the value whose JSON text is `raw` (empty: missing); -1 if not a value.
int text_type_rank(std::string_view raw) {
  if (raw.empty()) {
    return 0;
  }
  switch (raw.front()) {
    case 'n':
      return 0;
    case '"':
      return 2;
    case '{':
      return 3;
    case '[':
      return 4;
    case 't':
    case 'f':
      return 5;
    default:
      return raw.front() == '-' || (raw.front() >= '0' && raw.front() <= '9') ? 1 : -1;
  }
}

}  // namespace

std::optional<int> sort_spec::compare_text(const sort_position& a, std::string_view json,
                                           std::string_view id) const {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    auto raw = key_text(json, i);
    if (!raw) {
      return std::nullopt;
    }
    const int ra = json_type_rank(&a.values[i]);
    const int rb = text_type_rank(*raw);
    int c = 0;
    if (rb < 0) {
      return std::nullopt;
    } else if (ra != rb) {
      c = ra < rb ? -1 : 1;
    } else if (ra == 2) {
      auto body = raw->substr(1, raw->size() - 2);
      if (body.find('\\') != std::string_view::npos) {
        return std::nullopt;  // the document decides (its value is the unescaped text)
      }
      c = std::string_view(a.values[i].get_string()).compare(body);
      c = c < 0 ? -1 : (c > 0 ? 1 : 0);
    } else if (ra == 5) {
      c = int(raw->front() == 't') - int(a.values[i].get_bool());
      c = -c;
    } else if (ra != 0) {
      return std::nullopt;  // numbers, objects, arrays: the document decides
    }
    if (c != 0) {
      return keys_[i].descending ? -c : c;
    }
  }
  const int c = std::string_view{a.id}.compare(id);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

int sort_spec::compare(const sort_position& a, const boost::json::object& b) const {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const int c = compare_json(&a.values[i], paths_[i].find(b));
    if (c != 0) {
      return keys_[i].descending ? -c : c;
    }
  }
  const auto* id = b.if_contains("id");
  std::string_view bid = id && id->is_string() ? std::string_view{id->get_string()} : "";
  const int c = std::string_view{a.id}.compare(bid);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace weir::core

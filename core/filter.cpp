// Parsing and evaluation of Mongo-style filters (see filter.hpp for grammar and semantics).
#include "core/filter.hpp"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <boost/json/serialize.hpp>
#include <boost/regex.hpp>

#include "core/json_path.hpp"
#include "core/sort_spec.hpp"

namespace weir::core {

namespace {

using boost::json::array;
using boost::json::object;
using boost::json::value;

enum class op_kind : std::uint8_t {
  eq,
  ne,
  gt,
  gte,
  lt,
  lte,
  in,
  nin,
  exists,
  all,
  size,
  type,
  regex,
  not_,
  elem_match
};

// $type bits.
enum type_bit : std::uint32_t {
  type_null = 1U << 0,
  type_int = 1U << 1,
  type_double = 1U << 2,
  type_string = 1U << 3,
  type_object = 1U << 4,
  type_array = 1U << 5,
  type_bool = 1U << 6,
};

struct filter_node;

struct op {
  op_kind kind = op_kind::eq;
  value operand;             // eq..lte: the operand; in/nin/all: an array
  std::uint64_t number = 0;  // $size: the size; $exists: 0/1; $type: the type bits
  // $not: the ops it negates; $elemMatch (operator form): the ops one element must satisfy.
  std::vector<op> inner;
  // $elemMatch (filter form): the filter one object element must satisfy. Null otherwise.
  std::unique_ptr<filter_node> element_filter;
  boost::regex regex;  // $regex: compiled at parse, so matching never re-reads the pattern
  // $regex "^literal" (options none or s): the literal, which every match starts with and every
  // string starting with it matches. Unset for any other pattern.
  std::optional<std::string> regex_prefix;
};

// Recursion bound for nested $and/$or/$nor/$not/$elemMatch, well above what real queries use.
constexpr int max_depth = 32;

struct filter_node {
  enum class kind : std::uint8_t { all_of, any_of, none_of, field };
  kind k = kind::all_of;
  std::vector<filter_node> children;  // all_of / any_of / none_of
  json_path path;                     // field
  std::vector<op> ops;                // field: all must hold
};

}  // namespace

struct filter::impl {
  filter_node root;
  std::vector<std::string> fields;
};

namespace {

// ---------------------------------------------------------------------------------------------
// Evaluation

std::uint32_t type_of(const value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      return type_null;
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
      return type_int;
    case boost::json::kind::double_:
      return type_double;
    case boost::json::kind::string:
      return type_string;
    case boost::json::kind::object:
      return type_object;
    case boost::json::kind::array:
      return type_array;
    case boost::json::kind::bool_:
      return type_bool;
  }
  return 0;
}

// `contains` is Mongo's "a scalar against an array field matches when any element matches". It is
// off inside $elemMatch's operator form, which tests each element as a whole value: there, [[3]]
// has no element equal to 3.

bool match_eq(const value* v, const value& operand, bool contains) {
  if (v == nullptr) {
    return operand.is_null();
  }
  if (json_equal(*v, operand)) {
    return true;
  }
  if (const auto* arr = v->if_array(); arr != nullptr && contains) {
    for (const auto& e : *arr) {
      if (json_equal(e, operand)) {
        return true;
      }
    }
  }
  return false;
}

bool compare_holds(op_kind kind, int c) {
  switch (kind) {
    case op_kind::gt:
      return c > 0;
    case op_kind::gte:
      return c >= 0;
    case op_kind::lt:
      return c < 0;
    default:
      return c <= 0;
  }
}

bool match_compare(const value* v, const op& o, bool contains) {
  const int rank = json_type_rank(&o.operand);
  // Missing reads as null, so {$gte: null} and {$lte: null} match it.
  if (json_type_rank(v) == rank && compare_holds(o.kind, compare_json(v, &o.operand))) {
    return true;
  }
  if (v != nullptr && contains) {
    if (const auto* arr = v->if_array()) {
      for (const auto& e : *arr) {
        if (json_type_rank(&e) == rank && compare_holds(o.kind, compare_json(&e, &o.operand))) {
          return true;
        }
      }
    }
  }
  return false;
}

bool match_in(const value* v, const array& candidates, bool contains) {
  for (const auto& c : candidates) {
    if (match_eq(v, c, contains)) {
      return true;
    }
  }
  return false;
}

bool match_type(const value* v, std::uint32_t bits, bool contains) {
  if (v == nullptr) {
    return false;
  }
  if ((type_of(*v) & bits) != 0) {
    return true;
  }
  if (const auto* arr = v->if_array(); arr != nullptr && contains) {
    for (const auto& e : *arr) {
      if ((type_of(e) & bits) != 0) {
        return true;
      }
    }
  }
  return false;
}

// One unanchored search. Boost.Regex throws when a match exceeds its complexity bound
// (catastrophic backtracking, e.g. "(x+x+)+y"); that counts as no match, so one hostile pattern
// cannot fail the evaluation of every change.
bool regex_found(const boost::json::string& s, const boost::regex& re) {
  // The regex_search overload without match_results builds one, and allocates, on every call;
  // a per-thread scratch keeps its capacity. Nothing reads it after the call.
  thread_local boost::cmatch scratch;
  try {
    return boost::regex_search(s.data(), s.data() + s.size(), scratch, re, boost::match_any);
  } catch (const std::runtime_error&) {
    return false;
  }
}

bool match_regex(const value* v, const boost::regex& re, bool contains) {
  if (v == nullptr) {
    return false;
  }
  if (const auto* s = v->if_string()) {
    return regex_found(*s, re);
  }
  if (const auto* arr = v->if_array(); arr != nullptr && contains) {
    for (const auto& e : *arr) {
      if (const auto* s = e.if_string(); s != nullptr && regex_found(*s, re)) {
        return true;
      }
    }
  }
  return false;
}

bool match_ops(const value* v, const std::vector<op>& ops, bool contains);
bool match_node(const filter_node& n, const object& doc);

// $elemMatch: some element of an array field satisfies the operators as a whole value (operator
// form) or is an object that satisfies the filter (filter form). Anything but an array fails.
bool match_elem(const value* v, const op& o) {
  const auto* arr = v != nullptr ? v->if_array() : nullptr;
  if (arr == nullptr) {
    return false;
  }
  for (const auto& e : *arr) {
    if (o.element_filter != nullptr) {
      if (const auto* obj = e.if_object(); obj != nullptr && match_node(*o.element_filter, *obj)) {
        return true;
      }
    } else if (match_ops(&e, o.inner, false)) {
      return true;
    }
  }
  return false;
}

bool match_op(const value* v, const op& o, bool contains) {
  switch (o.kind) {
    case op_kind::eq:
      return match_eq(v, o.operand, contains);
    case op_kind::ne:
      return !match_eq(v, o.operand, contains);
    case op_kind::gt:
    case op_kind::gte:
    case op_kind::lt:
    case op_kind::lte:
      return match_compare(v, o, contains);
    case op_kind::in:
      return match_in(v, o.operand.get_array(), contains);
    case op_kind::nin:
      return !match_in(v, o.operand.get_array(), contains);
    case op_kind::exists:
      return (v != nullptr) == (o.number != 0);
    case op_kind::all: {
      const auto& wanted = o.operand.get_array();
      if (wanted.empty()) {
        return false;
      }
      for (const auto& w : wanted) {
        if (!match_eq(v, w, contains)) {
          return false;
        }
      }
      return true;
    }
    case op_kind::size:
      return v != nullptr && v->is_array() && v->get_array().size() == o.number;
    case op_kind::type:
      return match_type(v, static_cast<std::uint32_t>(o.number), contains);
    case op_kind::regex:
      return match_regex(v, o.regex, contains);
    case op_kind::not_:
      return !match_ops(v, o.inner, contains);
    case op_kind::elem_match:
      return match_elem(v, o);
  }
  return false;
}

bool match_ops(const value* v, const std::vector<op>& ops, bool contains) {
  for (const auto& o : ops) {
    if (!match_op(v, o, contains)) {
      return false;
    }
  }
  return true;
}

bool match_node(const filter_node& n, const object& doc) {
  switch (n.k) {
    case filter_node::kind::field:
      return match_ops(n.path.find(doc), n.ops, true);
    case filter_node::kind::all_of:
      for (const auto& c : n.children) {
        if (!match_node(c, doc)) {
          return false;
        }
      }
      return true;
    case filter_node::kind::any_of:
      for (const auto& c : n.children) {
        if (match_node(c, doc)) {
          return true;
        }
      }
      return false;
    case filter_node::kind::none_of:
      for (const auto& c : n.children) {
        if (match_node(c, doc)) {
          return false;
        }
      }
      return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Parsing

error invalid(std::string message, std::string_view path, std::string_view op_name = {}) {
  object details;
  details["path"] = path;
  if (!op_name.empty()) {
    details["operator"] = op_name;
  }
  return make_error("filter.invalid", std::move(message), std::move(details));
}

error unknown_operator(std::string_view op_name, std::string_view path) {
  object details;
  details["operator"] = op_name;
  details["path"] = path;
  std::string message = "unknown filter operator \"" + std::string(op_name) + "\"";
  if (!path.empty()) {
    message += " at \"" + std::string(path) + "\"";
  }
  return make_error("filter.unknown_operator", std::move(message), std::move(details));
}

bool is_operator_key(std::string_view key) {
  return !key.empty() && key.front() == '$';
}

// An object whose keys are operators, as opposed to a literal sub-document.
bool is_operator_object(const value& v) {
  const auto* obj = v.if_object();
  if (obj == nullptr) {
    return false;
  }
  for (const auto& m : *obj) {
    if (is_operator_key(m.key())) {
      return true;
    }
  }
  return false;
}

// The literal that a pattern "^literal" requires at the start of a string, when that is all it
// requires: no metacharacter after the anchor, and no option that changes what ^ or a letter
// match (i, m, x; s only concerns '.', which a literal has none of).
std::optional<std::string> literal_prefix(std::string_view pattern, const value* options) {
  if (options != nullptr) {
    const auto& letters = options->get_string();
    if (letters.find_first_not_of("s") != boost::json::string::npos) {
      return std::nullopt;
    }
  }
  if (pattern.empty() || pattern.front() != '^') {
    return std::nullopt;
  }
  pattern.remove_prefix(1);
  if (pattern.find_first_of("\\^$.|?*+()[]{}") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::string{pattern};
}

struct parser {
  std::vector<std::string> fields;

  void note_field(const json_path& path) {
    const std::string& head = path.segments().front();
    for (const auto& f : fields) {
      if (f == head) {
        return;
      }
    }
    fields.push_back(head);
  }

  result<void> parse_type_alias(const value& v, std::string_view path, std::uint32_t& bits) {
    if (const auto* s = v.if_string()) {
      const std::string_view name = *s;
      if (name == "double") {
        bits |= type_double;
      } else if (name == "string") {
        bits |= type_string;
      } else if (name == "object") {
        bits |= type_object;
      } else if (name == "array") {
        bits |= type_array;
      } else if (name == "bool") {
        bits |= type_bool;
      } else if (name == "null") {
        bits |= type_null;
      } else if (name == "int" || name == "long") {
        bits |= type_int;
      } else if (name == "number") {
        bits |= type_int | type_double;
      } else {
        return invalid("$type: unknown type \"" + std::string(name) + "\"", path, "$type");
      }
      return {};
    }
    if (v.is_number()) {
      std::error_code ec;
      const auto code = v.to_number<std::int64_t>(ec);
      if (!ec) {
        switch (code) {
          case 1:
            bits |= type_double;
            return {};
          case 2:
            bits |= type_string;
            return {};
          case 3:
            bits |= type_object;
            return {};
          case 4:
            bits |= type_array;
            return {};
          case 8:
            bits |= type_bool;
            return {};
          case 10:
            bits |= type_null;
            return {};
          case 16:
          case 18:
            bits |= type_int;
            return {};
          default:
            break;
        }
      }
      return invalid("$type: unsupported type code " + boost::json::serialize(v), path, "$type");
    }
    return invalid("$type needs a type name, a type code or an array of them", path, "$type");
  }

  // Compiles a $regex once, with its $options. Boost's Perl syntax lets ^ and $ match at line
  // breaks and . match a newline by default; Mongo's (PCRE's) defaults are the opposite, so both
  // are switched off unless m or s asks for them.
  result<void> parse_regex(const value& pattern, const value* options, const std::string& path,
                           boost::regex& out) {
    const auto* text = pattern.if_string();
    if (text == nullptr) {
      return invalid("$regex needs a pattern string", path, "$regex");
    }
    boost::regex::flag_type flags = boost::regex::perl;
    bool multiline = false;
    bool dot_all = false;
    if (options != nullptr) {
      const auto* letters = options->if_string();
      if (letters == nullptr) {
        return invalid("$options needs a string of the letters i, m, s and x", path, "$options");
      }
      for (const char c : *letters) {
        switch (c) {
          case 'i':
            flags |= boost::regex::icase;
            break;
          case 'm':
            multiline = true;
            break;
          case 's':
            dot_all = true;
            break;
          case 'x':
            flags |= boost::regex::mod_x;
            break;
          default:
            // The whole string, serialized: a lone byte of a UTF-8 letter is not valid text.
            return invalid("$options " + boost::json::serialize(*options) +
                               " has an unknown option (allowed: i, m, s, x)",
                           path, "$options");
        }
      }
    }
    if (!multiline) {
      flags |= boost::regex::no_mod_m;
    }
    flags |= dot_all ? boost::regex::mod_s : boost::regex::no_mod_s;
    try {
      out.assign(text->data(), text->data() + text->size(), flags);
    } catch (const boost::regex_error& e) {
      // Boost's what() goes on to quote the pattern around the error, cut at byte offsets that
      // can split a UTF-8 sequence; keep the description and give the offset instead.
      std::string reason = e.what();
      if (const auto cut = reason.find("  The error occurred"); cut != std::string::npos) {
        reason.resize(cut);
      }
      return invalid(
          "$regex: invalid pattern at offset " + std::to_string(e.position()) + ": " + reason, path,
          "$regex");
    }
    return {};
  }

  // $elemMatch. Mongo's rule for its two forms: a spec whose keys are all operators other than
  // $and/$or/$nor tests each element as a value; anything else is a filter over the object
  // elements, whose errors report paths as "<path>.<inner path>".
  result<void> parse_elem_match(const value& operand, const std::string& path, op& o, int depth) {
    const auto* spec = operand.if_object();
    if (spec == nullptr || spec->empty()) {
      return invalid(
          "$elemMatch needs a non-empty object: operators such as {\"$gt\": 1} or a filter", path,
          "$elemMatch");
    }
    bool operator_form = true;
    for (const auto& m : *spec) {
      const std::string_view key = m.key();
      if (!is_operator_key(key) || key == "$and" || key == "$or" || key == "$nor") {
        operator_form = false;
        break;
      }
    }
    if (operator_form) {
      return parse_ops(*spec, path, o.inner, depth);
    }
    o.element_filter = std::make_unique<filter_node>();
    return parse_filter(*spec, *o.element_filter, depth, path);
  }

  result<void> parse_ops(const object& spec, const std::string& path, std::vector<op>& out,
                         int depth) {
    if (depth > max_depth) {
      return invalid("filter is nested too deeply", path);
    }
    for (const auto& m : spec) {
      const std::string_view name = m.key();
      const value& operand = m.value();
      if (!is_operator_key(name)) {
        return invalid("\"" + path + "\": cannot mix operators and field \"" + std::string(name) +
                           "\" in one object",
                       path);
      }
      op o;
      if (name == "$eq" || name == "$ne" || name == "$gt" || name == "$gte" || name == "$lt" ||
          name == "$lte") {
        o.kind = name == "$eq"    ? op_kind::eq
                 : name == "$ne"  ? op_kind::ne
                 : name == "$gt"  ? op_kind::gt
                 : name == "$gte" ? op_kind::gte
                 : name == "$lt"  ? op_kind::lt
                                  : op_kind::lte;
        o.operand = operand;
      } else if (name == "$in" || name == "$nin" || name == "$all") {
        o.kind = name == "$in" ? op_kind::in : name == "$nin" ? op_kind::nin : op_kind::all;
        const auto* arr = operand.if_array();
        if (arr == nullptr) {
          return invalid(std::string(name) + " needs an array", path, name);
        }
        for (const auto& e : *arr) {
          if (is_operator_object(e)) {
            return invalid(std::string(name) + " cannot hold operator objects", path, name);
          }
        }
        o.operand = operand;
      } else if (name == "$exists") {
        o.kind = op_kind::exists;
        if (operand.is_bool()) {
          o.number = operand.get_bool() ? 1 : 0;
        } else if (operand.is_number()) {
          o.number = operand.to_number<double>() != 0 ? 1 : 0;
        } else {
          return invalid("$exists needs true or false", path, name);
        }
      } else if (name == "$size") {
        o.kind = op_kind::size;
        std::error_code ec;
        const auto n = operand.is_number() ? operand.to_number<std::uint64_t>(ec) : 0;
        if (!operand.is_number() || ec) {
          return invalid("$size needs a non-negative integer", path, name);
        }
        o.number = n;
      } else if (name == "$type") {
        o.kind = op_kind::type;
        std::uint32_t bits = 0;
        if (const auto* arr = operand.if_array()) {
          if (arr->empty()) {
            return invalid("$type needs at least one type", path, name);
          }
          for (const auto& e : *arr) {
            if (auto ok = parse_type_alias(e, path, bits); !ok) {
              return ok;
            }
          }
        } else if (auto ok = parse_type_alias(operand, path, bits); !ok) {
          return ok;
        }
        o.number = bits;
      } else if (name == "$not") {
        o.kind = op_kind::not_;
        const auto* inner = operand.if_object();
        if (inner == nullptr || inner->empty()) {
          return invalid("$not needs an operator object such as {\"$gt\": 1}", path, name);
        }
        if (auto ok = parse_ops(*inner, path, o.inner, depth + 1); !ok) {
          return ok;
        }
      } else if (name == "$regex") {
        o.kind = op_kind::regex;
        if (auto ok = parse_regex(operand, spec.if_contains("$options"), path, o.regex); !ok) {
          return ok;
        }
        o.regex_prefix = literal_prefix(operand.get_string(), spec.if_contains("$options"));
      } else if (name == "$options") {
        // Read by its $regex; on its own it would silently do nothing.
        if (!spec.contains("$regex")) {
          return invalid("$options is only valid next to $regex", path, name);
        }
        continue;
      } else if (name == "$elemMatch") {
        o.kind = op_kind::elem_match;
        if (auto ok = parse_elem_match(operand, path, o, depth + 1); !ok) {
          return ok;
        }
      } else {
        return unknown_operator(name, path);
      }
      out.push_back(std::move(o));
    }
    return {};
  }

  // `prefix` is "" for the filter itself and the array's path for an $elemMatch filter: error
  // paths are reported under it, and the element's fields are not top-level fields.
  result<void> parse_filter(const object& spec, filter_node& out, int depth,
                            std::string_view prefix) {
    if (depth > max_depth) {
      return invalid("filter is nested too deeply", prefix);
    }
    out.k = filter_node::kind::all_of;
    for (const auto& m : spec) {
      const std::string_view key = m.key();
      if (is_operator_key(key)) {
        filter_node group;
        if (key == "$and") {
          group.k = filter_node::kind::all_of;
        } else if (key == "$or") {
          group.k = filter_node::kind::any_of;
        } else if (key == "$nor") {
          group.k = filter_node::kind::none_of;
        } else {
          return unknown_operator(key, prefix);
        }
        const auto* arr = m.value().if_array();
        if (arr == nullptr || arr->empty()) {
          return invalid(std::string(key) + " needs a non-empty array of filters", prefix, key);
        }
        for (const auto& e : *arr) {
          const auto* sub = e.if_object();
          if (sub == nullptr) {
            return invalid(std::string(key) + " elements must be filter objects", prefix, key);
          }
          filter_node child;
          if (auto ok = parse_filter(*sub, child, depth + 1, prefix); !ok) {
            return ok;
          }
          group.children.push_back(std::move(child));
        }
        out.children.push_back(std::move(group));
        continue;
      }
      const std::string shown =
          prefix.empty() ? std::string(key) : std::string(prefix) + "." + std::string(key);
      auto path = json_path::parse(key);
      if (!path) {
        return invalid("invalid field path \"" + shown + "\"", shown);
      }
      filter_node leaf;
      leaf.k = filter_node::kind::field;
      leaf.path = std::move(path).value();
      if (prefix.empty()) {
        note_field(leaf.path);
      }
      if (is_operator_object(m.value())) {
        if (auto ok = parse_ops(m.value().get_object(), shown, leaf.ops, depth + 1); !ok) {
          return ok;
        }
      } else {
        op o;
        o.kind = op_kind::eq;
        o.operand = m.value();
        leaf.ops.push_back(std::move(o));
      }
      out.children.push_back(std::move(leaf));
    }
    return {};
  }
};

}  // namespace

bool json_equal(const value& a, const value& b) {
  if (a.is_number() && b.is_number()) {
    return compare_numbers(a, b) == 0;
  }
  if (a.kind() != b.kind()) {
    return false;
  }
  switch (a.kind()) {
    case boost::json::kind::null:
      return true;
    case boost::json::kind::bool_:
      return a.get_bool() == b.get_bool();
    case boost::json::kind::string:
      return a.get_string() == b.get_string();
    case boost::json::kind::array: {
      const auto& x = a.get_array();
      const auto& y = b.get_array();
      if (x.size() != y.size()) {
        return false;
      }
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!json_equal(x[i], y[i])) {
          return false;
        }
      }
      return true;
    }
    case boost::json::kind::object: {
      const auto& x = a.get_object();
      const auto& y = b.get_object();
      if (x.size() != y.size()) {
        return false;
      }
      for (const auto& m : x) {
        const auto* other = y.if_contains(m.key());
        if (other == nullptr || !json_equal(m.value(), *other)) {
          return false;
        }
      }
      return true;
    }
    default:
      return false;
  }
}

filter::filter() : impl_(std::make_shared<const impl>()) {}

result<filter> filter::parse(const value& spec) {
  if (spec.is_null()) {
    return filter();
  }
  const auto* obj = spec.if_object();
  if (obj == nullptr) {
    return invalid("filter must be an object", "");
  }
  auto built = std::make_shared<impl>();
  parser p;
  if (auto ok = p.parse_filter(*obj, built->root, 0, ""); !ok) {
    return std::move(ok).error();
  }
  built->fields = std::move(p.fields);
  return filter(std::move(built));
}

bool filter::matches(const object& doc) const {
  return match_node(impl_->root, doc);
}

bool filter::matches_all() const {
  return impl_->root.children.empty();
}

const std::vector<std::string>& filter::fields() const {
  return impl_->fields;
}

namespace {

// The smallest string greater than every string starting with `s` (byte-wise), or nullopt
// when there is none (s is empty or all 0xff bytes).
std::optional<std::string> prefix_successor(std::string s) {
  while (!s.empty() && static_cast<unsigned char>(s.back()) == 0xff) {
    s.pop_back();
  }
  if (s.empty()) {
    return std::nullopt;
  }
  s.back() = static_cast<char>(static_cast<unsigned char>(s.back()) + 1);
  return s;
}

// Narrows `r` by one operator; false when the operator gives no interval (the clause then
// constrains the records in a way the interval does not say).
bool narrow(value_range& r, const op& o) {
  value lower, upper;
  bool lower_set = false, upper_set = false, lower_incl = true, upper_incl = true;
  int rank = 0;
  switch (o.kind) {
    case op_kind::eq:
    case op_kind::gt:
    case op_kind::gte:
    case op_kind::lt:
    case op_kind::lte:
      rank = json_type_rank(&o.operand);
      if (rank != 1 && rank != 2) {
        return false;
      }
      if (o.kind != op_kind::lt && o.kind != op_kind::lte) {
        lower = o.operand;
        lower_set = true;
        lower_incl = o.kind != op_kind::gt;
      }
      if (o.kind != op_kind::gt && o.kind != op_kind::gte) {
        upper = o.operand;
        upper_set = true;
        upper_incl = o.kind != op_kind::lt;
      }
      break;
    case op_kind::regex:
      if (!o.regex_prefix) {
        return false;
      }
      rank = 2;
      lower = value(*o.regex_prefix);
      lower_set = true;
      if (auto next = prefix_successor(*o.regex_prefix)) {
        upper = value(std::move(*next));
        upper_set = true;
        upper_incl = false;
      }
      break;
    default:
      return false;
  }
  if (r.type_rank == 0) {
    r.type_rank = rank;
  } else if (r.type_rank != rank) {
    r.none = true;
  }
  if (lower_set) {
    const int c = r.lower ? compare_json(&lower, &*r.lower) : 1;
    if (c > 0 || (c == 0 && !lower_incl)) {
      r.lower = std::move(lower);
      r.lower_inclusive = lower_incl;
    }
  }
  if (upper_set) {
    const int c = r.upper ? compare_json(&upper, &*r.upper) : -1;
    if (c < 0 || (c == 0 && !upper_incl)) {
      r.upper = std::move(upper);
      r.upper_inclusive = upper_incl;
    }
  }
  return true;
}

}  // namespace

std::optional<value_range> filter::range_on(const json_path& path) const {
  const auto& root = impl_->root;
  value_range r;
  bool found = false;
  bool whole = true;  // every clause and operator went into r
  for (const auto& c : root.children) {
    if (c.k != filter_node::kind::field || !(c.path == path)) {
      whole = false;
      continue;
    }
    for (const auto& o : c.ops) {
      if (narrow(r, o)) {
        found = true;
      } else {
        whole = false;
      }
    }
  }
  if (!found) {
    return std::nullopt;
  }
  r.exact = whole;
  return r;
}

}  // namespace weir::core

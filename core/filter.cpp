// Parsing and evaluation of Mongo-style filters (see filter.hpp for grammar and semantics).
#include "core/filter.hpp"

#include <cstdint>
#include <string_view>
#include <utility>

#include <boost/json/serialize.hpp>

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
  not_
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

struct op {
  op_kind kind = op_kind::eq;
  value operand;             // eq..lte: the operand; in/nin/all: an array
  std::uint64_t number = 0;  // $size: the size; $exists: 0/1; $type: the type bits
  std::vector<op> negated;   // $not: the ops it negates
};

// Recursion bound for nested $and/$or/$nor/$not, well above what real queries use.
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

bool match_eq(const value* v, const value& operand) {
  if (v == nullptr) {
    return operand.is_null();
  }
  if (json_equal(*v, operand)) {
    return true;
  }
  if (const auto* arr = v->if_array()) {
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

bool match_compare(const value* v, const op& o) {
  const int rank = json_type_rank(&o.operand);
  // Missing reads as null, so {$gte: null} and {$lte: null} match it.
  if (json_type_rank(v) == rank && compare_holds(o.kind, compare_json(v, &o.operand))) {
    return true;
  }
  if (v != nullptr) {
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

bool match_in(const value* v, const array& candidates) {
  for (const auto& c : candidates) {
    if (match_eq(v, c)) {
      return true;
    }
  }
  return false;
}

bool match_type(const value* v, std::uint32_t bits) {
  if (v == nullptr) {
    return false;
  }
  if ((type_of(*v) & bits) != 0) {
    return true;
  }
  if (const auto* arr = v->if_array()) {
    for (const auto& e : *arr) {
      if ((type_of(e) & bits) != 0) {
        return true;
      }
    }
  }
  return false;
}

bool match_ops(const value* v, const std::vector<op>& ops);

bool match_op(const value* v, const op& o) {
  switch (o.kind) {
    case op_kind::eq:
      return match_eq(v, o.operand);
    case op_kind::ne:
      return !match_eq(v, o.operand);
    case op_kind::gt:
    case op_kind::gte:
    case op_kind::lt:
    case op_kind::lte:
      return match_compare(v, o);
    case op_kind::in:
      return match_in(v, o.operand.get_array());
    case op_kind::nin:
      return !match_in(v, o.operand.get_array());
    case op_kind::exists:
      return (v != nullptr) == (o.number != 0);
    case op_kind::all: {
      const auto& wanted = o.operand.get_array();
      if (wanted.empty()) {
        return false;
      }
      for (const auto& w : wanted) {
        if (!match_eq(v, w)) {
          return false;
        }
      }
      return true;
    }
    case op_kind::size:
      return v != nullptr && v->is_array() && v->get_array().size() == o.number;
    case op_kind::type:
      return match_type(v, static_cast<std::uint32_t>(o.number));
    case op_kind::not_:
      return !match_ops(v, o.negated);
  }
  return false;
}

bool match_ops(const value* v, const std::vector<op>& ops) {
  for (const auto& o : ops) {
    if (!match_op(v, o)) {
      return false;
    }
  }
  return true;
}

bool match_node(const filter_node& n, const object& doc) {
  switch (n.k) {
    case filter_node::kind::field:
      return match_ops(n.path.find(doc), n.ops);
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
        if (auto ok = parse_ops(*inner, path, o.negated, depth + 1); !ok) {
          return ok;
        }
      } else {
        return unknown_operator(name, path);
      }
      out.push_back(std::move(o));
    }
    return {};
  }

  result<void> parse_filter(const object& spec, filter_node& out, int depth) {
    if (depth > max_depth) {
      return invalid("filter is nested too deeply", "");
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
          return unknown_operator(key, "");
        }
        const auto* arr = m.value().if_array();
        if (arr == nullptr || arr->empty()) {
          return invalid(std::string(key) + " needs a non-empty array of filters", "", key);
        }
        for (const auto& e : *arr) {
          const auto* sub = e.if_object();
          if (sub == nullptr) {
            return invalid(std::string(key) + " elements must be filter objects", "", key);
          }
          filter_node child;
          if (auto ok = parse_filter(*sub, child, depth + 1); !ok) {
            return ok;
          }
          group.children.push_back(std::move(child));
        }
        out.children.push_back(std::move(group));
        continue;
      }
      auto path = json_path::parse(key);
      if (!path) {
        return invalid("invalid field path \"" + std::string(key) + "\"", key);
      }
      filter_node leaf;
      leaf.k = filter_node::kind::field;
      leaf.path = std::move(path).value();
      note_field(leaf.path);
      if (is_operator_object(m.value())) {
        if (auto ok = parse_ops(m.value().get_object(), leaf.path.text(), leaf.ops, depth + 1);
            !ok) {
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
  if (auto ok = p.parse_filter(*obj, built->root, 0); !ok) {
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

}  // namespace weir::core

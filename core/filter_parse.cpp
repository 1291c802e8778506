// Parsing of Mongo-style filters (see filter.hpp for the grammar): a filter's JSON into the
// tree filter.cpp evaluates, every operand checked and every $regex compiled once.
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <boost/json/serialize.hpp>

#include "core/filter.hpp"
#include "core/filter_tree.hpp"
#include "core/sort_spec.hpp"
#include "core/utf8.hpp"

namespace weir::core {

using namespace filter_detail;
using boost::json::array;
using boost::json::object;
using boost::json::value;

namespace {

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

// The length of the whitespace PCRE's extended mode skips at p[i], 0 if none: ASCII space,
// \t \n \v \f \r, and in UTF mode U+0085, U+200E, U+200F, U+2028 and U+2029.
std::size_t extended_space(std::string_view p, std::size_t i) {
  const char c = p[i];
  if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') {
    return 1;
  }
  const auto rest = p.substr(i);
  if (rest.starts_with("\xC2\x85")) {
    return 2;
  }
  for (const char* u : {"\xE2\x80\x8E", "\xE2\x80\x8F", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
    if (rest.starts_with(u)) {
      return 3;
    }
  }
  return 0;
}

bool word_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// PCRE's extended mode (the x option), which RE2 does not have: whitespace outside a character
// class is dropped and an unescaped '#' there starts a comment to the end of the line. Escapes
// (an escaped space or '#' stays a literal) and \Q…\E are kept as written. Dropped whitespace
// still ends a token in PCRE ("{2, 3}" is no repeat count before PCRE2 10.43; "\x {41}" is NUL
// repeated, not "A"), so where the characters either side of it could join into one, an empty
// group "(?:)" keeps them apart; before a quantifier it does not (PCRE applies "a +" to the a).
std::string strip_extended(std::string_view p) {
  std::string out;
  out.reserve(p.size());
  bool in_class = false;
  bool gap = false;            // whitespace or a comment was dropped since the last character kept
  bool braced_escape = false;  // the last text kept is \x, \p or \P, which take a {…}
  auto keep = [&](std::string_view text) {
    if (gap && !out.empty() && !text.empty()) {
      const char before = out.back();
      const char after = text.front();
      const bool joins = ((word_char(before) || before == ',' || before == '{') &&
                          (word_char(after) || after == ',' || after == '}')) ||
                         (braced_escape && after == '{');
      if (joins) {
        out += "(?:)";
      }
    }
    gap = false;
    braced_escape = text == "\\x" || text == "\\p" || text == "\\P";
    out.append(text);
  };
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      if (p[i + 1] == 'Q') {
        const auto end = p.find("\\E", i + 2);
        const auto stop = end == std::string_view::npos ? p.size() : end + 2;
        keep(p.substr(i, stop - i));
        i = stop - 1;
      } else {
        keep(p.substr(i, 2));
        ++i;
      }
      continue;
    }
    if (in_class) {
      if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
        // A POSIX class inside the class ([[:alpha:] ]): its ']' does not end the outer one.
        // Only a name of letters closed by ":]" is one; otherwise '[' is itself.
        std::size_t k = i + 2;
        while (k < p.size() && ((p[k] >= 'a' && p[k] <= 'z') || p[k] == '^')) {
          ++k;
        }
        if (k + 1 < p.size() && p[k] == ':' && p[k + 1] == ']') {
          out.append(p.substr(i, k + 2 - i));
          i = k + 1;
          continue;
        }
      }
      in_class = c != ']';
      out += c;
      continue;
    }
    if (c == '[') {
      keep("[");
      in_class = true;
      // A ']' first in the class (after an optional '^') is a literal, not its end.
      if (i + 1 < p.size() && p[i + 1] == '^') {
        out += p[++i];
      }
      if (i + 1 < p.size() && p[i + 1] == ']') {
        out += p[++i];
      }
      continue;
    }
    if (const auto n = extended_space(p, i); n > 0) {
      gap = true;
      i += n - 1;
      continue;
    }
    if (c == '#') {
      const auto end = p.find('\n', i);
      i = end == std::string_view::npos ? p.size() : end;
      gap = true;
      continue;
    }
    keep(p.substr(i, 1));
  }
  return out;
}

// What RE2 says is wrong with a pattern, as text a client can act on. Its message quotes the
// offending part of the pattern, less the flags `added` for the options; where that part is not
// UTF-8 only the kind of error is given.
std::string regex_error_text(const re2::RE2& re, std::string_view added) {
  std::string reason = re.error();
  if (!added.empty()) {
    if (const auto at = reason.find(added); at != std::string::npos) {
      reason.erase(at, added.size());
    }
  }
  if (!valid_utf8(reason)) {
    reason = "error code " + std::to_string(static_cast<int>(re.error_code()));
  }
  switch (re.error_code()) {
    case re2::RE2::ErrorBadEscape:
    case re2::RE2::ErrorBadPerlOp:
    case re2::RE2::ErrorRepeatOp:
    case re2::RE2::ErrorBadNamedCapture:
      reason +=
          " (patterns are RE2's syntax: Perl's without backreferences, lookaround, "
          "possessive or atomic groups, or an inline (?x))";
      break;
    case re2::RE2::ErrorPatternTooLarge:
      reason += " (its compiled form is over the " + std::to_string(regex_max_mem >> 10) +
                " KiB a pattern may take)";
      break;
    default:
      break;
  }
  return reason;
}

struct parser {
  std::vector<std::string> fields;
  std::vector<std::string> paths;
  std::size_t terms = 0;
  std::size_t regexes = 0;

  // Counts `n` more terms of the filter (max_terms bounds them).
  result<void> add_terms(std::size_t n, std::string_view path) {
    terms += n;
    if (terms > max_terms) {
      return invalid("the filter has more than " + std::to_string(max_terms) +
                         " terms (field tests and operators, $and/$or/$nor branches, $all values, "
                         "arrays and objects in $in or $nin); a list of scalar values to match "
                         "belongs in one $in",
                     path);
    }
    return {};
  }

  // $in / $nin: sorts the positions of the operand's scalars for lookup (op::in_scalars); its
  // arrays and objects stay a list, one term each.
  result<void> index_in(op& o, std::string_view path) {
    const auto& arr = o.operand.get_array();
    for (std::uint32_t i = 0; i < arr.size(); ++i) {
      const int rank = json_type_rank(&arr[i]);
      (rank == 3 || rank == 4 ? o.in_compounds : o.in_scalars).push_back(i);
    }
    std::sort(o.in_scalars.begin(), o.in_scalars.end(),
              [&](std::uint32_t a, std::uint32_t b) { return compare_json(&arr[a], &arr[b]) < 0; });
    return add_terms(o.in_compounds.size(), path);
  }

  void note_field(const json_path& path) {
    if (std::find(paths.begin(), paths.end(), path.text()) == paths.end()) {
      paths.push_back(path.text());
    }
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

  // Compiles a $regex once, with its $options, on RE2: matching is linear in the string for
  // every pattern (a backtracking engine can be made to take seconds a record, and a pass reads
  // every record). RE2's syntax is Perl's without backreferences and lookaround; like Mongo's
  // (PCRE's) defaults, ^ and $ match only at the ends and . does not match a newline unless m or
  // s asks. RE2 has no x; strip_extended does what it would.
  result<void> parse_regex(const value& pattern, const value* options, const std::string& path,
                           std::unique_ptr<const re2::RE2>& out) {
    const auto* text = pattern.if_string();
    if (text == nullptr) {
      return invalid("$regex needs a pattern string", path, "$regex");
    }
    if (text->size() > max_regex_bytes) {
      return invalid("$regex: the pattern has " + std::to_string(text->size()) +
                         " bytes; at most " + std::to_string(max_regex_bytes) + " are allowed",
                     path, "$regex");
    }
    if (++regexes > max_regexes) {
      return invalid("the filter has more than " + std::to_string(max_regexes) + " $regex", path,
                     "$regex");
    }
    re2::RE2::Options opts;
    opts.set_log_errors(false);
    opts.set_never_capture(true);  // nothing reads a group; and backreferences are refused
    opts.set_max_mem(regex_max_mem);
    bool multiline = false;
    bool dot_all = false;
    bool extended = false;
    if (options != nullptr) {
      const auto* letters = options->if_string();
      if (letters == nullptr) {
        return invalid("$options needs a string of the letters i, m, s and x", path, "$options");
      }
      for (const char c : *letters) {
        switch (c) {
          case 'i':
            opts.set_case_sensitive(false);
            break;
          case 'm':
            multiline = true;
            break;
          case 's':
            dot_all = true;
            break;
          case 'x':
            extended = true;
            break;
          default:
            // The whole string, serialized: a lone byte of a UTF-8 letter is not valid text.
            return invalid("$options " + boost::json::serialize(*options) +
                               " has an unknown option (allowed: i, m, s, x)",
                           path, "$options");
        }
      }
    }
    std::string source = extended ? strip_extended(*text) : std::string{*text};
    // A pattern from JSON is UTF-8, and matches by character; one built otherwise that is not
    // (a test's, say) matches byte by byte rather than being refused.
    if (!valid_utf8(source)) {
      opts.set_encoding(re2::RE2::Options::EncodingLatin1);
    }
    std::string flags;
    if (multiline || dot_all) {
      flags = std::string{"(?"} + (multiline ? "m" : "") + (dot_all ? "s" : "") + ")";
    }
    auto re = std::make_unique<const re2::RE2>(flags + source, opts);
    if (!re->ok()) {
      return invalid("$regex: invalid pattern: " + regex_error_text(*re, flags), path, "$regex");
    }
    out = std::move(re);
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
        if (auto ok = o.kind == op_kind::all ? add_terms(arr->size(), path) : index_in(o, path);
            !ok) {
          return ok;
        }
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
      // Counted once the operator is known, so an unknown one is reported as such.
      if (auto ok = add_terms(1, path); !ok) {
        return ok;
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
          if (auto ok = add_terms(1, prefix); !ok) {
            return ok;
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
        if (auto ok = add_terms(1, shown); !ok) {
          return ok;
        }
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
  built->paths = std::move(p.paths);
  return filter(std::move(built));
}

}  // namespace weir::core

// Building, projecting and encoding the ops of a change (see change_ops.hpp).
#include "core/change_ops.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/document_check.hpp"
#include "core/filter.hpp"

namespace weir::core {
namespace {

bool server_field(std::string_view key) {
  return key == "id" || key == "_ver";
}

bool has_dot(std::string_view key) {
  return key.find('.') != std::string_view::npos;
}

std::vector<std::string> split(std::string_view dotted) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto dot = dotted.find('.', start);
    out.emplace_back(dotted.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) {
      return out;
    }
    start = dot + 1;
  }
}

void append_op(std::string& out, const change_op& op, const boost::json::value* payload) {
  out.append(op.unset ? R"({"type":"$unset","path":[)" : R"({"type":"$set","path":[)");
  for (std::size_t i = 0; i < op.path.size(); ++i) {
    if (i) {
      out.push_back(',');
    }
    out.append(boost::json::serialize(boost::json::string_view{op.path[i]}));
  }
  out.push_back(']');
  if (payload) {
    out.append(",\"payload\":");
    out.append(boost::json::serialize(*payload));
  }
  out.push_back('}');
}

void finish(change_ops& ops) {
  ops.json = encode_ops(ops, projection{});
  if (ops.json.empty()) {
    ops.json = "[]";
  }
}

}  // namespace

change_ops ops_for_replace(const boost::json::object* before, const boost::json::object& after) {
  change_ops out;
  boost::json::object set, unset;
  for (const auto& kv : after) {
    std::string_view key = kv.key();
    if (server_field(key)) {
      continue;
    }
    if (before) {
      const auto* old = before->if_contains(key);
      if (old && json_equal(*old, kv.value()) && old->kind() == kv.value().kind()) {
        continue;
      }
    }
    if (has_dot(key)) {
      out.ops.push_back(change_op{false, {std::string{key}}, kv.value()});
    } else {
      set.emplace(key, kv.value());
    }
  }
  if (before) {
    for (const auto& kv : *before) {
      std::string_view key = kv.key();
      if (server_field(key) || after.contains(key)) {
        continue;
      }
      if (has_dot(key)) {
        out.ops.push_back(change_op{true, {std::string{key}}, nullptr});
      } else {
        unset.emplace(key, true);
      }
    }
  }
  if (!set.empty()) {
    out.ops.insert(out.ops.begin(), change_op{false, {}, std::move(set)});
  }
  if (!unset.empty()) {
    out.ops.push_back(change_op{true, {}, std::move(unset)});
  }
  finish(out);
  return out;
}

change_ops ops_for_update(const update_spec& spec, const boost::json::object& after) {
  change_ops out;
  for (const auto& op : spec.ops) {
    change_op c;
    c.path = op.path.segments();
    switch (op.kind) {
      case update_op_kind::set:
        c.payload = op.value;
        break;
      case update_op_kind::unset:
        c.unset = true;
        break;
      case update_op_kind::inc:
        if (const auto* v = op.path.find(after)) {
          c.payload = *v;
        }
        break;
    }
    out.ops.push_back(std::move(c));
  }
  finish(out);
  return out;
}

change_ops parse_change_ops(std::string_view json) {
  change_ops out;
  boost::system::error_code ec;
  // Ops carry whole records (payloads) two levels below the top.
  boost::json::parse_options opts = document_parse_options();
  opts.max_depth += 4;
  auto v = boost::json::parse(json, ec, {}, opts);
  if (ec || !v.is_array()) {
    out.json = "[]";
    return out;
  }
  for (const auto& item : v.as_array()) {
    const auto* o = item.if_object();
    if (!o) {
      continue;
    }
    const auto* type = o->if_contains("type");
    const auto* path = o->if_contains("path");
    if (!type || !type->is_string() || !path || !path->is_array()) {
      continue;
    }
    change_op op;
    op.unset = type->get_string() == "$unset";
    for (const auto& seg : path->get_array()) {
      if (seg.is_string()) {
        op.path.emplace_back(seg.get_string());
      }
    }
    if (const auto* payload = o->if_contains("payload")) {
      op.payload = *payload;
    }
    out.ops.push_back(std::move(op));
  }
  out.json = std::string{json};
  return out;
}

std::string encode_ops(const change_ops& ops, const projection& proj) {
  std::string out;
  bool first = true;
  auto sep = [&] {
    out.push_back(first ? '[' : ',');
    first = false;
  };
  for (const auto& op : ops.ops) {
    if (op.path.empty()) {
      // A root multi-operation: keep the covered keys (projected where partly covered).
      const auto* payload = op.payload.if_object();
      if (!payload) {
        continue;
      }
      if (!proj.active()) {
        sep();
        append_op(out, op, &op.payload);
        continue;
      }
      boost::json::object kept;
      for (const auto& kv : *payload) {
        auto path = split(kv.key());
        switch (proj.classify(path)) {
          case projection::coverage::included:
            kept.emplace(kv.key(), kv.value());
            break;
          case projection::coverage::excluded:
            break;
          case projection::coverage::partial:
            if (op.unset) {
              kept.emplace(kv.key(), kv.value());
            } else if (auto v = proj.apply_at(path, kv.value())) {
              kept.emplace(kv.key(), std::move(*v));
            }
            break;
        }
      }
      if (!kept.empty()) {
        sep();
        boost::json::value v = std::move(kept);
        append_op(out, op, &v);
      }
      continue;
    }
    auto cov = proj.classify(op.path);
    if (cov == projection::coverage::excluded) {
      continue;
    }
    if (op.unset) {
      sep();
      append_op(out, op, nullptr);
      continue;
    }
    if (cov == projection::coverage::partial) {
      auto v = proj.apply_at(op.path, op.payload);
      if (!v) {
        continue;
      }
      sep();
      append_op(out, op, &*v);
      continue;
    }
    sep();
    append_op(out, op, &op.payload);
  }
  if (!first) {
    out.push_back(']');
  }
  return out;
}

}  // namespace weir::core

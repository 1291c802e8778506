// Watch stream encoding (see watch_codec.hpp).
#include "cluster/watch_codec.hpp"

#include <boost/json/parse.hpp>

#include "core/record_rules.hpp"

namespace weir::cluster {
namespace {

core::removal_reason reason_from(const std::string& s) {
  if (s == "deleted") {
    return core::removal_reason::deleted;
  }
  if (s == "filtered-out") {
    return core::removal_reason::filtered_out;
  }
  return core::removal_reason::displaced;
}

core::record_ptr read_record(const std::string& json, core::doc_ptr* doc = nullptr) {
  if (json.empty()) {
    return nullptr;
  }
  if (!doc) {
    return core::parse_record(json);
  }
  boost::json::object parsed;
  auto r = core::parse_record(json, &parsed);
  if (r) {
    *doc = std::make_shared<const boost::json::object>(std::move(parsed));
  }
  return r;
}

std::shared_ptr<const core::change_ops> read_ops(bool has, const std::string& json) {
  if (!has) {
    return nullptr;
  }
  return std::make_shared<const core::change_ops>(core::parse_change_ops(json));
}

/// A stand-in for a row a window drops: the gateway's query actor finds the row it holds by id.
core::record_ptr id_only(const std::string& id) {
  auto r = std::make_shared<core::record>();
  r->id = id;
  r->has_identity = true;
  return r;
}

}  // namespace

v1::BoundQuery to_proto(const core::bound_query& query) {
  v1::BoundQuery q;
  q.set_key(query.key);
  if (query.windowed) {
    const auto& w = *query.windowed;
    q.set_windowed_json(w.canonical_body());
    q.set_windowed_scope(std::string{core::to_string(w.scope)});
    q.set_space(w.space);
    q.set_windowed_subscribe(w.subscribe);
    q.set_member_part(!query.key.empty() && query.key.front() == 'm');
    return q;
  }
  if (query.from.query_name.empty() && query.single_id) {
    q.set_space(query.space);
    q.set_document_object(*query.single_id);
    return q;
  }
  q.set_query_name(query.from.query_name);
  for (auto& [name, value] : query.from.arguments) {
    auto* a = q.add_arguments();
    a->set_name(name);
    a->set_value(value);
  }
  q.set_page(query.page);
  q.set_page_size(query.page_size);
  q.set_sort_by(query.from.sort_by.value_or(""));
  q.set_descending(query.from.descending);
  q.set_definition(query.from.definition);
  q.set_claims_json(query.from.claims);
  return q;
}

core::result<core::bound_query> bind_watched(const v1::BoundQuery& q,
                                             const actors::query_catalog& catalog) {
  if (q.query_name().empty() && !q.document_object().empty()) {
    if (auto ok = core::validate_id(q.space(), "space"); !ok) {
      return std::move(ok).error();
    }
    if (auto ok = core::validate_id(q.document_object(), "objectId"); !ok) {
      return std::move(ok).error();
    }
    auto bound = core::bind_object_document(q.space(), q.document_object());
    if (bound.key != q.key()) {
      return core::make_error("cluster.mismatch",
                              "the document query binds differently on the owner: every member "
                              "needs the same version");
    }
    return bound;
  }
  if (q.query_name().empty()) {
    core::windowed_scope scope = core::windowed_scope::object;
    if (q.windowed_scope() == "objects") {
      scope = core::windowed_scope::objects;
    } else if (q.windowed_scope() == "datasets") {
      scope = core::windowed_scope::datasets;
    } else if (q.windowed_scope() != "object") {
      return core::make_error("cluster.mismatch",
                              "unknown windowed scope '" + q.windowed_scope() + "'");
    }
    auto req = core::parse_windowed_request(scope, q.windowed_subscribe(), q.space(),
                                            std::string_view{q.windowed_json()});
    if (!req) {
      return core::make_error(
          "cluster.mismatch",
          "the windowed request does not parse on the owner: " + req.error().message);
    }
    auto shared = std::make_shared<const core::windowed_request>(std::move(req.value()));
    core::bound_query bound = scope == core::windowed_scope::datasets
                                  ? core::bind_windowed_merge(shared, q.member_part())
                                  : core::bind_windowed(shared);
    if (bound.key != q.key()) {
      return core::make_error("cluster.mismatch",
                              "the windowed request binds differently on the owner: every member "
                              "needs the same version");
    }
    return bound;
  }
  const auto* def = catalog.by_name(q.query_name());
  if (!def) {
    return core::make_error("cluster.mismatch", "unknown query '" + q.query_name() +
                                                    "' on the owner: the nodes' queries differ");
  }
  std::vector<std::pair<std::string, std::string>> args;
  for (auto& a : q.arguments()) {
    args.emplace_back(a.name(), a.value());
  }
  std::optional<std::string> sort_by;
  if (!q.sort_by().empty()) {
    sort_by = q.sort_by();
  }
  boost::json::object claims;
  if (!q.claims_json().empty()) {
    boost::json::error_code ec;
    auto v = boost::json::parse(q.claims_json(), ec);
    if (ec || !v.is_object()) {
      return core::make_error("cluster.mismatch", "a member sent claims this member cannot read");
    }
    claims = std::move(v.get_object());
  }
  auto bound =
      core::bind_query(*def, args, q.page(), q.page_size(), sort_by, q.descending(), claims);
  if (!bound) {
    return std::move(bound).error();
  }
  if (bound->key != q.key() || bound->from.definition != q.definition()) {
    return core::make_error("cluster.mismatch",
                            "query '" + q.query_name() +
                                "' is configured differently on this owner: every member needs "
                                "the same queries");
  }
  return bound;
}

void to_proto(const actors::view_snapshot& s, v1::Snapshot* out) {
  out->mutable_records_json()->Reserve(static_cast<int>(s.rows.size()));
  for (const auto& r : s.rows) {
    out->add_records_json(r->json);
  }
  if (s.total) {
    out->set_has_total(true);
    out->set_total(*s.total);
  }
}

void to_proto(const actors::view_update& u, v1::Update* out) {
  out->set_object_deleted(u.object_deleted);
  out->set_synthetic(u.synthetic);
  if (u.total) {
    out->set_has_total(true);
    out->set_total(*u.total);
  }
  if (u.delta) {
    for (const auto& r : u.delta->removed) {
      auto* x = out->add_removed();
      x->set_id(r.rec->id);
      x->set_reason(std::string{core::to_string(r.reason)});
    }
    for (const auto& x : u.delta->upserts) {
      auto* y = out->add_upserts();
      y->set_index(x.index);
      y->set_json(x.rec->json);
      y->set_added(x.added);
      if (x.ops) {
        y->set_has_ops(true);
        y->set_ops_json(x.ops->json);
      }
    }
  }
  if (u.changes) {
    for (const auto& c : *u.changes) {
      auto* y = out->add_changes();
      if (c.before) {
        y->set_before_json(c.before->json);
      }
      if (c.after) {
        y->set_after_json(c.after->json);
      }
      y->set_after_exists(c.after_exists);
      if (c.ops) {
        y->set_has_ops(true);
        y->set_ops_json(c.ops->json);
      }
    }
  }
}

actors::view_snapshot from_proto(std::uint64_t seq, const v1::Snapshot& s) {
  actors::view_snapshot out;
  out.seq = seq;
  out.rows.reserve(static_cast<std::size_t>(s.records_json_size()));
  for (const auto& r : s.records_json()) {
    if (auto rec = core::parse_record(r)) {
      out.rows.push_back(std::move(rec));
    }
  }
  if (s.has_total()) {
    out.total = s.total();
  }
  return out;
}

actors::view_update from_proto(std::uint64_t seq, const std::string& version_id,
                               const v1::Update& u) {
  actors::view_update out;
  out.seq = seq;
  out.version_id = version_id;
  out.object_deleted = u.object_deleted();
  out.synthetic = u.synthetic();
  if (u.has_total()) {
    out.total = u.total();
  }
  if (u.removed_size() > 0 || u.upserts_size() > 0) {
    auto d = std::make_shared<core::window_delta>();
    for (const auto& r : u.removed()) {
      d->removed.push_back(core::window_removal{id_only(r.id()), reason_from(r.reason())});
    }
    for (const auto& x : u.upserts()) {
      if (auto rec = core::parse_record(x.json())) {
        d->upserts.push_back(core::window_upsert{static_cast<std::size_t>(x.index()),
                                                 std::move(rec), x.added(),
                                                 read_ops(x.has_ops(), x.ops_json())});
      }
    }
    d->total = out.total;
    out.delta = std::move(d);
  } else if (u.changes_size() > 0) {
    auto list = std::make_shared<std::vector<actors::view_change>>();
    for (const auto& c : u.changes()) {
      actors::view_change v;
      v.before = read_record(c.before_json(), &v.before_doc);
      v.after = read_record(c.after_json(), &v.after_doc);
      v.after_exists = c.after_exists();
      v.ops = read_ops(c.has_ops(), c.ops_json());
      list->push_back(std::move(v));
    }
    out.changes = std::move(list);
  } else {
    // Only the total changed (a bounded query), or an object's rows all went.
    auto d = std::make_shared<core::window_delta>();
    d->total = out.total;
    out.delta = std::move(d);
  }
  return out;
}

}  // namespace weir::cluster

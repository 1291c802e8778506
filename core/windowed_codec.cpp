// Windowed frame encoding (see windowed_codec.hpp).
#include "core/windowed_codec.hpp"

#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

void append_string(std::string& out, std::string_view s) {
  out.append(boost::json::serialize(boost::json::string_view{s}));
}

void append_ops(std::string& out, const window_upsert& u, const projection& proj) {
  if (!u.ops || u.ops->empty()) {
    return;
  }
  if (!proj.active()) {
    out.append(",\"ops\":").append(u.ops->json);
    return;
  }
  auto ops = encode_ops(*u.ops, proj);
  if (!ops.empty()) {
    out.append(",\"ops\":").append(ops);
  }
}

}  // namespace

void append_windowed_doc(std::string& out, const record& r, const projection& proj) {
  if (!proj.active()) {
    out.append(r.json);
    return;
  }
  out.append(boost::json::serialize(proj.apply(thread_doc_reader().read(r))));
}

std::string encode_windowed_records(const std::vector<record_ptr>& rows, const projection& proj) {
  std::string out = "[";
  bool first = true;
  for (const auto& r : rows) {
    if (!first) {
      out.push_back(',');
    }
    first = false;
    append_windowed_doc(out, *r, proj);
  }
  out.push_back(']');
  return out;
}

std::string encode_windowed_snapshot(std::string_view records_json,
                                     std::optional<std::uint64_t> total, std::uint64_t offset,
                                     std::size_t count) {
  std::string out = "{\"records\":";
  out.append(records_json);
  if (total) {
    out.append(",\"total\":").append(std::to_string(*total));
    out.append(",\"hasNext\":").append(offset + count < *total ? "true" : "false");
  }
  out.push_back('}');
  return out;
}

std::string encode_windowed_event(std::string_view version_id, const window_delta& d,
                                  const projection& proj) {
  if (d.empty()) {
    return {};
  }
  std::string out = "{\"versionId\":";
  append_string(out, version_id);
  for (bool added : {true, false}) {
    bool first = true;
    for (const auto& u : d.upserts) {
      if (u.added != added) {
        continue;
      }
      out.append(first ? (added ? ",\"added\":[" : ",\"updated\":[") : ",");
      first = false;
      out.append("{\"id\":");
      append_string(out, u.rec->id);
      out.append(",\"doc\":");
      append_windowed_doc(out, *u.rec, proj);
      append_ops(out, u, proj);
      out.push_back('}');
    }
    if (!first) {
      out.push_back(']');
    }
  }
  if (!d.removed.empty()) {
    out.append(",\"removed\":[");
    bool first = true;
    for (const auto& r : d.removed) {
      if (!first) {
        out.push_back(',');
      }
      first = false;
      out.append("{\"id\":");
      append_string(out, r.rec->id);
      out.append(",\"reason\":\"").append(to_string(r.reason)).append("\"}");
    }
    out.push_back(']');
  }
  out.push_back('}');
  return out;
}

}  // namespace weir::core

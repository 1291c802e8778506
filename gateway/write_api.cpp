// Write API routes:
//   PUT|PATCH|DELETE /v1/spaces/{space}/objects/{objectId}  (PATCH: an RFC 6902 JSON Patch)
//   PUT|PATCH|DELETE /v1/spaces/{space}/objects/{objectId}/datasets/{dataset}/records/{id}
//   POST        /v1/spaces/{space}/objects/{objectId}/datasets/{dataset}/records
// (POST /v1/spaces/{space}/batch, writes to several datasets, is gateway/cross_unit_batch.)
#include "gateway/write_api.hpp"

#include "core/document_check.hpp"
#include "core/url.hpp"

namespace weir::gateway {
namespace {

core::error not_allowed(std::string_view allow) {
  return core::make_error("method.not_allowed", "this path accepts only " + std::string{allow},
                          {{"allow", std::string{allow}}});
}

}  // namespace

core::result<write_route> match_write_route(std::string_view method, std::string_view path) {
  auto raw = core::split_path(path);
  auto no_route = core::make_error("route.not_found", "no such route: " + std::string{path});
  if (raw.size() < 4 || raw[0] != "v1" || raw[1] != "spaces" || raw[3] != "objects") {
    return no_route;
  }
  std::vector<std::string> seg;
  for (auto s : raw) {
    auto d = core::percent_decode(s);
    if (!d) {
      return core::make_error("request.invalid_field", "bad percent-escape in the path",
                              {{"field", "path"}});
    }
    seg.push_back(std::move(*d));
  }
  write_route r{};
  r.cmd.space = seg[2];
  if (seg.size() == 5) {
    r.cmd.object = seg[4];
    if (method == "PUT") {
      r.kind = actors::write_kind::put_object;
    } else if (method == "PATCH") {
      r.kind = actors::write_kind::json_patch_object;
    } else if (method == "DELETE") {
      r.kind = actors::write_kind::delete_object;
    } else {
      return not_allowed("PUT, PATCH, DELETE");
    }
  } else if (seg.size() == 8 && seg[5] == "datasets" && seg[7] == "records") {
    r.cmd.object = seg[4];
    r.cmd.dataset = seg[6];
    if (method != "POST") {
      return not_allowed("POST");
    }
    r.kind = actors::write_kind::batch;
  } else if (seg.size() == 9 && seg[5] == "datasets" && seg[7] == "records") {
    r.cmd.object = seg[4];
    r.cmd.dataset = seg[6];
    r.cmd.id = seg[8];
    if (method == "PUT") {
      r.kind = actors::write_kind::put_record;
    } else if (method == "PATCH") {
      r.kind = actors::write_kind::patch_record;
    } else if (method == "DELETE") {
      r.kind = actors::write_kind::delete_record;
    } else {
      return not_allowed("PUT, PATCH, DELETE");
    }
  } else {
    return no_route;
  }
  r.cmd.kind = r.kind;
  return r;
}

core::result<boost::json::value> parse_body(std::string_view body) {
  return core::parse_json(body);
}

}  // namespace weir::gateway

// The cross-unit batch's body and answer (see cross_unit_batch.hpp).
#include "gateway/cross_unit_batch.hpp"

#include <map>
#include <utility>

#include <boost/json/serialize.hpp>

#include "actors/write_check.hpp"
#include "core/idempotency_key.hpp"
#include "core/record_rules.hpp"
#include "core/url.hpp"
#include "gateway/http_errors.hpp"

namespace weir::gateway {
namespace {

core::error at_write(core::error e, std::size_t i) {
  e.details["write"] = i;
  return e;
}

}  // namespace

std::optional<core::result<std::string>> match_cross_unit_batch(std::string_view method,
                                                                std::string_view path) {
  auto raw = core::split_path(path);
  if (raw.size() != 4 || raw[0] != "v1" || raw[1] != "spaces" || raw[3] != "batch") {
    return std::nullopt;
  }
  if (method != "POST") {
    return core::result<std::string>{
        core::make_error("method.not_allowed", "this path accepts only POST", {{"allow", "POST"}})};
  }
  auto space = core::percent_decode(raw[2]);
  if (!space) {
    return core::result<std::string>{core::make_error(
        "request.invalid_field", "bad percent-escape in the path", {{"field", "path"}})};
  }
  return core::result<std::string>{std::move(*space)};
}

core::result<std::vector<actors::write_command>> parse_cross_unit_batch(
    const std::string& space, boost::json::value body, std::string_view idempotency_key,
    const core::document_limits& limits, bool nul_allowed) {
  auto* root = body.if_object();
  if (root == nullptr) {
    return core::make_error("request.not_object", "a batch body must be a JSON object");
  }
  for (const auto& kv : *root) {
    if (kv.key() != "writes") {
      return core::make_error(
          "request.unknown_field",
          "unknown field \"" + std::string{kv.key()} + "\"; accepted fields: writes",
          {{"fields", boost::json::array{kv.key()}}, {"accepted", boost::json::array{"writes"}}});
    }
  }
  auto* writes_v = root->if_contains("writes");
  if (writes_v == nullptr) {
    return core::make_error("request.missing_field",
                            "a batch needs \"writes\": an array of "
                            "{\"objectId\",\"dataset\",\"upsert\",\"delete\"}",
                            {{"field", "writes"}});
  }
  auto* writes = writes_v->if_array();
  if (writes == nullptr || writes->empty()) {
    return core::make_error("request.invalid_field",
                            "\"writes\" must be a non-empty array of "
                            "{\"objectId\",\"dataset\",\"upsert\",\"delete\"}",
                            {{"field", "writes"}});
  }
  if (writes->size() > max_cross_unit_writes) {
    return core::make_error("batch.too_many_writes",
                            "a batch carries at most " + std::to_string(max_cross_unit_writes) +
                                " writes; split it into several requests",
                            {{"max", max_cross_unit_writes}, {"writes", writes->size()}});
  }
  std::vector<actors::write_command> out;
  out.reserve(writes->size());
  // (objectId, dataset) → index: one write per dataset, so that none depends on another's order.
  std::map<std::pair<std::string, std::string>, std::size_t> targets;
  for (std::size_t i = 0; i < writes->size(); ++i) {
    auto* item = (*writes)[i].if_object();
    if (item == nullptr) {
      return at_write(core::make_error("request.not_object",
                                       "each of \"writes\" must be a JSON object: "
                                       "{\"objectId\",\"dataset\",\"upsert\",\"delete\"}"),
                      i);
    }
    actors::write_command cmd;
    cmd.kind = actors::write_kind::batch;
    cmd.space = space;
    boost::json::object part;
    for (auto& kv : *item) {
      auto key = kv.key();
      if (key == "objectId" || key == "dataset") {
        auto* s = kv.value().if_string();
        if (s == nullptr) {
          return at_write(
              core::make_error("request.invalid_field",
                               "\"" + std::string{key} + "\" must be a string", {{"field", key}}),
              i);
        }
        (key == "objectId" ? cmd.object : cmd.dataset) = std::string{*s};
      } else if (key == "upsert" || key == "delete") {
        part[key] = std::move(kv.value());
      } else {
        return at_write(
            core::make_error(
                "request.unknown_field",
                "unknown field \"" + std::string{key} +
                    "\"; accepted fields: objectId, dataset, upsert, delete",
                {{"fields", boost::json::array{key}},
                 {"accepted", boost::json::array{"objectId", "dataset", "upsert", "delete"}}}),
            i);
      }
    }
    for (auto field : {"objectId", "dataset"}) {
      if (!item->contains(field)) {
        return at_write(core::make_error("request.missing_field",
                                         "each write names its \"objectId\" and \"dataset\"",
                                         {{"field", field}}),
                        i);
      }
    }
    cmd.body = std::move(part);
    if (auto ok = actors::check_write(cmd, limits); !ok) {
      return at_write(std::move(ok).error(), i);
    }
    if (auto ok = actors::check_batch_as_stored(cmd, limits, nul_allowed); !ok) {
      return at_write(std::move(ok).error(), i);
    }
    if (auto [it, fresh] = targets.emplace(std::pair{cmd.object, cmd.dataset}, i); !fresh) {
      return at_write(
          core::make_error(
              "batch.duplicate_target",
              "dataset '" + cmd.dataset + "' of object '" + cmd.object +
                  "' appears in two writes; put both in one",
              {{"objectId", cmd.object}, {"dataset", cmd.dataset}, {"firstWrite", it->second}}),
          i);
    }
    if (!idempotency_key.empty()) {
      cmd.idempotency_key = core::batch_write_key(idempotency_key, cmd.object, cmd.dataset);
    }
    out.push_back(std::move(cmd));
  }
  return out;
}

std::string cross_unit_batch_answer(
    const std::vector<std::optional<core::result<actors::write_outcome>>>& outcomes) {
  boost::json::array writes;
  writes.reserve(outcomes.size());
  std::size_t failed = 0;
  for (const auto& o : outcomes) {
    boost::json::object w;
    if (o && *o) {
      w["status"] = 200;
      w["versionId"] = (*o)->version_id;
      if ((*o)->replayed) {
        w["replayed"] = true;
      }
    } else {
      // A write never answered would be a bug in the runtime (it answers each write once); it
      // is reported as the runtime reports a write that did not complete.
      auto e = o ? o->error()
                 : core::make_error("server.unavailable",
                                    "the write did not complete; read it back before retrying");
      w["status"] = status_for(e);
      w["error"] = error_object(e);
      ++failed;
    }
    writes.push_back(std::move(w));
  }
  boost::json::object root;
  root["writes"] = std::move(writes);
  root["failed"] = failed;
  return boost::json::serialize(root);
}

}  // namespace weir::gateway

// The checks a write passes on the node that receives it (see write_check.hpp).
#include "actors/write_check.hpp"

#include <string_view>
#include <unordered_set>

#include "core/document_check.hpp"
#include "core/json_patch.hpp"
#include "core/record_rules.hpp"
#include "core/update_ops.hpp"
#include "core/version_id.hpp"

#include <boost/json/serialize.hpp>

namespace weir::actors {
namespace {

core::result<void> check_record(const boost::json::value& body,
                                std::optional<std::string_view> path_id,
                                const core::document_limits& limits) {
  const auto* obj = body.if_object();
  if (obj == nullptr) {
    return core::make_error("request.not_object", "record must be a JSON object");
  }
  if (auto ok = core::check_record_id(*obj, path_id); !ok) {
    return ok;
  }
  return core::check_document(body, limits);
}

core::result<void> check_batch(const boost::json::value& body,
                               const core::document_limits& limits) {
  if (auto ok = core::check_batch_fields(body); !ok) {
    return ok;
  }
  const auto* b = body.if_object();
  // Ids are checked here, as the shard checks them again, so that a bad batch is refused
  // before any unit takes it: a cross-unit batch (POST …/batch) applies none of its writes
  // when one of them is bad.
  std::unordered_set<std::string_view> upserted;
  std::unordered_set<std::string_view> deleted;
  auto duplicate = [](std::string_view id, std::string_view where) {
    return core::make_error(
        "batch.duplicate_id",
        "record '" + std::string{id} + "' appears more than once " + std::string{where},
        {{"id", id}});
  };
  if (const auto* up = b->if_contains("upsert")) {
    if (!up->is_array()) {
      return core::make_error("request.invalid_field", "\"upsert\" must be an array of records",
                              {{"field", "upsert"}});
    }
    std::size_t i = 0;
    for (const auto& item : up->get_array()) {
      if (auto ok = check_record(item, std::nullopt, limits); !ok) {
        auto e = std::move(ok).error();
        e.details["index"] = i;
        return e;
      }
      // check_record_id made it a valid string id.
      std::string_view id = item.get_object().at("id").get_string();
      if (!upserted.insert(id).second) {
        return duplicate(id, "in the batch");
      }
      ++i;
    }
  }
  if (const auto* del = b->if_contains("delete")) {
    if (!del->is_array()) {
      return core::make_error("request.invalid_field", "\"delete\" must be an array of ids",
                              {{"field", "delete"}});
    }
    for (const auto& v : del->get_array()) {
      if (!v.is_string()) {
        return core::make_error("request.invalid_field", "\"delete\" must hold only string ids",
                                {{"field", "delete"}});
      }
      if (auto ok = core::validate_id(v.get_string(), "delete"); !ok) {
        return ok;
      }
      std::string_view id = v.get_string();
      if (!deleted.insert(id).second) {
        return duplicate(id, "in \"delete\"");
      }
      if (upserted.count(id)) {
        return core::make_error(
            "batch.conflict",
            "record '" + std::string{id} + "' is both upserted and deleted in one batch",
            {{"id", id}});
      }
    }
  }
  return {};
}

}  // namespace

core::result<void> check_write(const write_command& cmd, const core::document_limits& limits) {
  if (cmd.kind == write_kind::refresh_records) {
    return {};  // internal (change capture): its rows are checked when they are read
  }
  if (auto ok = core::validate_id(cmd.space, "space"); !ok) {
    return ok;
  }
  if (cmd.kind == write_kind::delete_object_document) {
    return core::validate_id(cmd.id, "objectId");
  }
  if (auto ok = core::validate_id(cmd.object, "objectId"); !ok) {
    return ok;
  }
  const bool record_op =
      cmd.kind == write_kind::put_record || cmd.kind == write_kind::patch_record ||
      cmd.kind == write_kind::delete_record || cmd.kind == write_kind::json_patch_record;
  if (record_op || cmd.kind == write_kind::batch) {
    if (auto ok = core::validate_id(cmd.dataset, "dataset"); !ok) {
      return ok;
    }
  }
  if (record_op) {
    if (auto ok = core::validate_id(cmd.id, "id"); !ok) {
      return ok;
    }
  }
  switch (cmd.kind) {
    case write_kind::put_object:
      return check_record(cmd.body, cmd.object, limits);
    case write_kind::put_record:
      return check_record(cmd.body, cmd.id, limits);
    case write_kind::patch_record: {
      auto spec = core::parse_update(cmd.body, limits);
      if (!spec) {
        return std::move(spec).error();
      }
      return {};
    }
    case write_kind::json_patch_record:
    case write_kind::json_patch_object:
      return core::check_patch(cmd.body, core::patch_mode::strict, limits);
    case write_kind::batch:
      return check_batch(cmd.body, limits);
    case write_kind::delete_object:
    case write_kind::delete_record:
    case write_kind::delete_object_document:
    case write_kind::refresh_records:
      return {};
  }
  return {};
}

core::result<void> check_batch_as_stored(const write_command& cmd,
                                         const core::document_limits& limits, bool nul_allowed) {
  const auto* up = cmd.body.get_object().if_contains("upsert");
  if (up == nullptr) {
    return {};
  }
  // `,"_ver":{"id":"…"}` at its longest; without the comma when it is the only member.
  constexpr std::size_t stamp =
      std::string_view{R"(,"_ver":{"id":""})"}.size() + core::max_version_id_size;
  std::size_t i = 0;
  for (const auto& item : up->get_array()) {
    auto rec = item.get_object();  // a copy: the client's _ver goes, as the owner drops it
    rec.erase("_ver");
    const std::string_view id = rec.at("id").get_string();
    auto text = boost::json::serialize(rec);
    auto at = [&](core::error e) {
      e.details["index"] = i;
      return e;
    };
    if (auto bytes = text.size() + stamp - (rec.empty() ? 1 : 0); bytes > limits.max_bytes) {
      auto e = core::record_too_large(bytes, limits, id);
      e.message = "record '" + std::string{id} + "' would be up to " + std::to_string(bytes) +
                  " bytes with its _ver stamp; at most " + std::to_string(limits.max_bytes) +
                  " are allowed (records.maxBytes)";
      return at(std::move(e));
    }
    if (rec.size() + 1 > limits.max_members) {
      return at(core::make_error(
          "record.too_many_members",
          "the record has " + std::to_string(rec.size() + 1) + " members with its _ver; at most " +
              std::to_string(limits.max_members) + " are allowed (records.maxMembers)",
          {{"path", ""}, {"max", limits.max_members}}));
    }
    if (!nul_allowed && core::contains_nul_character(text)) {
      return at(core::make_error("record.unsupported_character",
                                 "this node's store (PostgreSQL jsonb) cannot hold the character "
                                 "U+0000 (\\u0000) in a string; remove it from record '" +
                                     std::string{id} + "'",
                                 {{"id", id}}));
    }
    ++i;
  }
  return {};
}

}  // namespace weir::actors

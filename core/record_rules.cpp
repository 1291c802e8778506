// Record id validation, upsert body normalization and version stamping (see record_rules.hpp).
#include "core/record_rules.hpp"

#include <string>
#include <utility>

#include "core/utf8.hpp"

namespace weir::core {

namespace {

error field_error(std::string code, std::string message, std::string_view field) {
  boost::json::object details;
  details["field"] = field;
  return make_error(std::move(code), std::move(message), std::move(details));
}

}  // namespace

result<void> validate_id(std::string_view id, std::string_view field_name) {
  if (id.empty()) {
    return field_error("request.invalid_field", std::string(field_name) + " must not be empty",
                       field_name);
  }
  if (id.size() > max_record_id_size) {
    return field_error("request.invalid_field",
                       std::string(field_name) + " is longer than " +
                           std::to_string(max_record_id_size) + " bytes",
                       field_name);
  }
  for (char c : id) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      return field_error("request.invalid_field",
                         std::string(field_name) + " must not contain control characters",
                         field_name);
    }
  }
  if (!valid_utf8(id)) {
    // Ids go out in JSON bodies and WebSocket text frames, which must be UTF-8: refused, never
    // repaired (a repaired id would name another record).
    return field_error("request.invalid_utf8", std::string(field_name) + " is not UTF-8 text",
                       field_name);
  }
  return {};
}

result<void> check_record_id(const boost::json::object& body,
                             std::optional<std::string_view> path_id) {
  if (path_id) {
    if (auto ok = validate_id(*path_id, "id"); !ok) {
      return ok;
    }
  }
  if (const auto* id = body.if_contains("id")) {
    const auto* s = id->if_string();
    if (s == nullptr) {
      return field_error("request.invalid_field", "id must be a string", "id");
    }
    if (auto ok = validate_id(*s, "id"); !ok) {
      return ok;
    }
    if (path_id && std::string_view(*s) != *path_id) {
      boost::json::object details;
      details["id"] = *s;
      details["pathId"] = *path_id;
      return make_error("record.id_mismatch",
                        "record id \"" + std::string(*s) +
                            "\" does not match the id in the path \"" + std::string(*path_id) +
                            "\"",
                        std::move(details));
    }
  } else if (!path_id) {
    return field_error("request.missing_field", "record needs a string \"id\"", "id");
  }
  return {};
}

result<boost::json::object> normalize_record(boost::json::value body,
                                             std::optional<std::string_view> path_id) {
  auto* obj = body.if_object();
  if (obj == nullptr) {
    return make_error("request.not_object", "record must be a JSON object");
  }
  if (auto ok = check_record_id(*obj, path_id); !ok) {
    return std::move(ok).error();
  }
  if (path_id && !obj->contains("id")) {
    (*obj)["id"] = *path_id;
  }
  obj->stable_erase("_ver");
  return std::move(*obj);
}

void stamp_version(boost::json::object& record, std::string_view version_id) {
  const auto n = record.size();
  const bool id_first = n == 0 || record.begin()->key() == "id" || !record.contains("id");
  const auto ver = record.find("_ver");
  const bool ver_last_or_absent = ver == record.end() || ver == record.end() - 1;
  if (!id_first || !ver_last_or_absent) {
    boost::json::object ordered(record.storage());
    ordered.reserve(n + 1);
    if (auto* id = record.if_contains("id")) {
      ordered.emplace("id", std::move(*id));
    }
    for (auto& member : record) {
      if (member.key() != "id" && member.key() != "_ver") {
        ordered.emplace(member.key(), std::move(member.value()));
      }
    }
    record = std::move(ordered);
  }
  boost::json::object ver_value(record.storage());
  ver_value.emplace("id", version_id);
  record["_ver"] = std::move(ver_value);
}

bool contains_nul_character(std::string_view json) {
  for (auto at = json.find("u0000"); at != std::string_view::npos;
       at = json.find("u0000", at + 1)) {
    std::size_t backslashes = 0;
    while (backslashes < at && json[at - 1 - backslashes] == '\\') {
      ++backslashes;
    }
    if (backslashes % 2 == 1) {
      return true;
    }
  }
  return false;
}

result<void> check_batch_fields(const boost::json::value& body) {
  const auto* b = body.if_object();
  if (b == nullptr) {
    return make_error("request.not_object", "a batch body must be a JSON object");
  }
  for (const auto& kv : *b) {
    if (kv.key() != "upsert" && kv.key() != "delete") {
      return make_error(
          "request.unknown_field",
          "unknown field \"" + std::string{kv.key()} + "\"; accepted fields: upsert, delete",
          {{"fields", boost::json::array{kv.key()}},
           {"accepted", boost::json::array{"upsert", "delete"}}});
    }
  }
  if (!b->contains("upsert") && !b->contains("delete")) {
    return make_error("request.missing_field", "a batch needs \"upsert\" and/or \"delete\"",
                      {{"field", "upsert"}});
  }
  return {};
}

}  // namespace weir::core

// weir::actors::write_command — one write from the HTTP API or gRPC, as the shard applies it.
// The body is already parsed JSON; everything else about it is validated by the owning shard.
#pragma once

#include <functional>
#include <string>

#include <boost/json/value.hpp>

#include "core/result.hpp"

namespace weir::actors {

enum class write_kind {
  put_object,     ///< upsert an object's property document (the space's `objects` unit)
  delete_object,  ///< remove the object's property document and all of its datasets
  put_record,     ///< upsert one record
  patch_record,   ///< $set / $unset / $inc on one existing record
  delete_record,  ///< remove one record
  batch,          ///< {"upsert":[…],"delete":[…]} on one dataset, atomically
  /// Internal second step of delete_object: the property document in the space's `objects`
  /// unit (addressed by `id` = the object id). Never built from client input directly.
  delete_object_document,
  /// An RFC 6902 JSON Patch (body: the operations) on one existing record, atomically.
  json_patch_record,
  /// An RFC 6902 JSON Patch on an existing object's property document (the `objects` unit).
  json_patch_object,
  /// Internal, from change capture: another program changed records `body` (an array of ids)
  /// of `dataset` in the store; the unit (space, object) — object "" for the objects unit —
  /// reads them again and publishes what differs. Only a shard in memory takes it (a unit not
  /// loaded reads them when it loads). Or, for a transaction too large to list, `body` is
  /// `{"whole":true}` (the dataset, or with dataset "" every dataset, read again whole) or
  /// `{"everyHeldUnit":true}` (every unit the node holds): is_whole_refresh,
  /// is_every_held_unit_refresh. Never built from client input.
  refresh_records,
};

/// The write lands on the space's `objects` unit (property documents), not the object's own.
inline bool targets_objects_unit(write_kind k) {
  return k == write_kind::put_object || k == write_kind::delete_object_document ||
         k == write_kind::json_patch_object;
}

struct write_command {
  write_kind kind = write_kind::put_record;
  std::string space;
  std::string object;
  std::string dataset;
  std::string id;
  boost::json::value body;
  /// The caller's Idempotency-Key ("" none): a write the unit already acknowledged under it is
  /// answered again with its versionId instead of being applied twice.
  std::string idempotency_key;
};

struct write_outcome {
  std::string version_id;
  bool replayed = false;  ///< answered from an idempotency key, not applied again
};

/// Completion of a write: runs on an actor thread once the write is durable, or at once for an
/// error. Must not block (post to your own executor).
using write_callback = std::function<void(core::result<write_outcome>)>;

/// Whether `cmd` (a refresh_records) asks for a whole dataset of its unit (`{"whole":true}`;
/// dataset "" for every dataset) rather than listed ids: change capture's answer to a
/// transaction too large to list (whole_refresh.hpp).
inline bool is_whole_refresh(const write_command& cmd) {
  if (cmd.kind != write_kind::refresh_records || !cmd.body.is_object()) {
    return false;
  }
  const auto* w = cmd.body.as_object().if_contains("whole");
  return w && w->is_bool() && w->get_bool();
}

/// Whether `cmd` (a refresh_records) asks for every unit the receiving node holds, whole
/// (`{"everyHeldUnit":true}`; its space, object and dataset are not used).
inline bool is_every_held_unit_refresh(const write_command& cmd) {
  if (cmd.kind != write_kind::refresh_records || !cmd.body.is_object()) {
    return false;
  }
  const auto* w = cmd.body.as_object().if_contains("everyHeldUnit");
  return w && w->is_bool() && w->get_bool();
}

/// The name of the dataset that holds objects' property documents (the cross-object unit).
inline constexpr std::string_view objects_dataset = "objects";

}  // namespace weir::actors

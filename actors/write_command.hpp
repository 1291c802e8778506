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
};

struct write_command {
  write_kind kind = write_kind::put_record;
  std::string space;
  std::string object;
  std::string dataset;
  std::string id;
  boost::json::value body;
};

struct write_outcome {
  std::string version_id;
};

/// Completion of a write: runs on an actor thread once the write is durable, or at once for an
/// error. Must not block (post to your own executor).
using write_callback = std::function<void(core::result<write_outcome>)>;

/// The name of the dataset that holds objects' property documents (the cross-object unit).
inline constexpr std::string_view objects_dataset = "objects";

}  // namespace weir::actors

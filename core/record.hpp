// weir::core::record — one stored record version: its document, its id, and its JSON text,
// serialized once per version so that every frame that carries it reuses the same bytes.
#pragma once

#include <memory>
#include <string>

#include <boost/json/object.hpp>

namespace weir::core {

/// An immutable record version. Shared (never copied) between the shard's data, every query
/// result holding it, and every frame that is encoded from it.
struct record {
  std::string id;
  boost::json::object doc;
  std::string json;           ///< `doc` serialized, compact
  bool has_identity = false;  ///< arc-hub §5.1: exactly one key equal to "id" case-insensitively
};

using record_ptr = std::shared_ptr<const record>;

/// Builds a record from a document that already carries a string "id" (and `_ver`).
record_ptr make_record(boost::json::object doc);

/// Parses stored JSON text back into a record (used when a unit is loaded from disk).
/// Returns nullptr when the text is not a JSON object with a string id.
record_ptr parse_record(std::string_view json);

/// One record's transition in an applied write: `before` and/or `after` (nullptr = absent).
struct record_change {
  std::string dataset;
  record_ptr before;
  record_ptr after;
};

}  // namespace weir::core

// weir::core::change_ops — what a write did to one record, as the `$set`/`$unset` operations of
// windowed-subscribe §8: built once per record per write on the owner (from the PATCH body, or
// as the difference a PUT made), encoded once, and projected per subscription when it has a
// projection. `$inc` never appears: it is delivered as the `$set` of its resulting value.
#pragma once

#include <string>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/projection.hpp"
#include "core/update_ops.hpp"

namespace weir::core {

/// One operation on the wire: {"type":"$set"|"$unset","path":[…],"payload":…}.
struct change_op {
  bool unset = false;
  /// Segments from the record root. Empty: a root multi-operation whose payload is an object
  /// of dotted paths (the values are the assigned values for $set, placeholders for $unset).
  std::vector<std::string> path;
  boost::json::value payload;  ///< null and omitted for a path $unset
};

struct change_ops {
  std::vector<change_op> ops;
  std::string json;  ///< `[…]` of every op, encoded once; "[]" when there are none

  bool empty() const { return ops.empty(); }
};

/// The ops of a whole-record write (PUT, batch upsert, property document): a create is one root
/// `$set` of every field; a replace sets the top-level fields that are new or changed and unsets
/// the ones that went. `id` and the server's `_ver` never appear. A top-level key containing a
/// '.' cannot be named in a root multi-operation (it would read as a path), so it gets an
/// operation of its own with a one-segment path.
change_ops ops_for_replace(const boost::json::object* before, const boost::json::object& after);

/// The ops of a PATCH: its $set and $unset paths as given, and each $inc as the `$set` of the
/// value it produced in `after`.
change_ops ops_for_update(const update_spec& spec, const boost::json::object& after);

/// Reads ops back from their JSON (`change_ops::json`, as another node sent it). Entries that
/// are not well-formed ops are skipped.
change_ops parse_change_ops(std::string_view json);

/// Encodes `ops` as seen through `proj`: ops wholly outside it are dropped, a root multi-op
/// keeps only the keys it covers, and a $set of a partly covered path carries the projected
/// payload. Returns "" when nothing is left (the caller then omits `ops`).
std::string encode_ops(const change_ops& ops, const projection& proj);

}  // namespace weir::core

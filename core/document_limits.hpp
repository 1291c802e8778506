// weir::core document limits — the one set of bounds every document Weir builds must hold,
// wherever it comes from: a PUT or POST body, a PATCH's update operators, a JSON Patch, a gRPC
// `Data` call, a row another program wrote into PostgreSQL, a unit loaded from the store.
// Writers refuse what is out of bounds with a stable code and change nothing; loaders skip it
// (core/document_check holds the checks). Every reader (filters, sorts, projections, the diff of
// the patch mode) can then rely on the same bounds: nothing deeper than max_document_depth ever
// exists, so nothing that walks a document recursively can overflow its stack, and no number is
// one JSON cannot carry. This header is light (no Boost) so that option structs can hold them.
#pragma once

#include <cstddef>

namespace weir::core {

/// How deeply a document may nest objects and arrays: `{}` is depth 1, `{"a":{}}` depth 2. Fixed
/// rather than configurable, because every reader of stored documents parses with it (a record
/// the write API accepts is one every filter, sort and projection can read) and because the
/// recursive walks over documents rely on it.
inline constexpr std::size_t max_document_depth = 64;

/// The configurable bounds (`records.*` in the configuration). Give every member of a cluster
/// the same values: the node that receives a write checks it, and the owner checks it again.
struct document_limits {
  /// Serialized size of one record after a write (`_ver` and `modifiedAt` included).
  std::size_t max_bytes = 1024 * 1024;
  /// Members of one object, and elements of one array.
  std::size_t max_members = 100000;
  /// Bytes of one member name.
  std::size_t max_key_bytes = 1024;
};

/// No bound on sizes, counts or names: for request bodies whose size the transport bounds and
/// that only need the depth, number and UTF-8 checks (windowed requests, hub frames).
inline constexpr document_limits unbounded_sizes{std::size_t(-1), std::size_t(-1), std::size_t(-1)};

}  // namespace weir::core

// weir::core::projection — the field projection of windowed subscribes (windowed-subscribe §9):
// parsed and validated once per request, then applied to the snapshot's records, to every doc
// of a `changes` frame and to its ops. Projection shapes output only; filter and sort always
// run on the whole record.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/result.hpp"

namespace weir::core {

/// A parsed projection. Marks: 1/true include, 0/-1/false exclude. One or more includes make it
/// an include projection, only excludes an exclude projection; the deepest mark on a path wins,
/// so both may be mixed ({"a":1,"a.b":0} keeps a without a.b). Rules that never change:
///   - `id` is always present; marking it excluded is an error;
///   - top-level fields starting with `_` are outside that inference: `_ver` is kept unless
///     marked excluded, every other `_` field is dropped unless marked included;
///   - a field the record lacks stays absent (nothing is null-filled);
///   - paths go through arrays element by element (Mongo's rule): {"a.b":1} on
///     {"a":[{"b":1,"c":2},3]} gives {"a":[{"b":1}]}.
class projection {
 public:
  /// No projection: everything passes (documents keep their stored bytes).
  projection() = default;

  /// Parses `spec` (null means none). Errors, all `request.invalid_field` with details
  /// {"field":"projection"} (and "path" when one is at fault): not an object; more than 128
  /// entries; an empty path, an empty segment ("a..b"), a `*` segment, more than 8 segments; a
  /// mark that is not 1, 0, -1, true or false; `id` marked excluded.
  static result<projection> parse(const boost::json::value& spec);

  /// False for "no projection".
  bool active() const { return root_ != nullptr; }

  /// The projected copy of `doc`.
  boost::json::object apply(const boost::json::object& doc) const;

  /// How a path (its segments from the record root) relates to the projection.
  enum class coverage { included, excluded, partial };
  coverage classify(const std::vector<std::string>& path) const;

  /// The projected copy of `value` found at `path` (used for ops whose path is partially
  /// covered). Returns nullopt-like null when nothing of it is kept.
  std::optional<boost::json::value> apply_at(const std::vector<std::string>& path,
                                             const boost::json::value& value) const;

  /// Canonical text, for query keys: equal projections give equal text.
  const std::string& canonical() const { return canonical_; }

  struct node;

 private:
  std::shared_ptr<const node> root_;
  bool include_mode_ = false;
  std::string canonical_;
};

}  // namespace weir::core

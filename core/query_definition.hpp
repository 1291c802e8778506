// weir::core::query_definition — a named query as declared in the configuration file, and
// bind_query, which turns one plus a client's arguments into the bound_query a subscription runs.
// Validation happens twice on purpose: once at load (so a bad config never starts) and once per
// request (because argument values are only known then).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/value.hpp>

#include "core/access_rule.hpp"
#include "core/filter.hpp"
#include "core/result.hpp"
#include "core/sort_spec.hpp"
#include "core/windowed_request.hpp"

namespace weir::core {

/// The declared type of a query argument. Arguments arrive as strings (hub requests and query
/// strings alike) and are converted to this type before they are bound.
enum class argument_type { string, integer, number, boolean };

/// Text form used in configuration files: "string", "integer", "number", "boolean".
std::string_view to_string(argument_type t);

/// A named query. `space`, `object` and `dataset` are either a fixed id or exactly "{arg}", bound
/// from the argument `arg`, or "{claims.<name>}", bound from the caller's token; string values of
/// exactly "{arg}" or "{claims.<name>}" inside `filter_template` are bound the same way, so
/// row-level rules need no client cooperation.
struct query_definition {
  std::string name;   ///< fully-qualified, e.g. "Demo.Tasks.ObserveByState"
  std::string route;  ///< HTTP route of the direct transports, e.g. "/api/demo/tasks"
  std::string space;
  /// Absent: the space's cross-object `objects` collection (one property document per object).
  std::optional<std::string> object;
  /// Absent with `object` set: the result is that object's property document, not an array.
  std::optional<std::string> dataset;
  boost::json::value filter_template;  ///< as written; null when absent
  std::vector<std::string> sort;       ///< default sort, "-path" for descending
  std::vector<std::pair<std::string, argument_type>> arguments;  ///< declaration order
  /// Who may run it (`authorize`); a query that binds claims also needs a caller who has them.
  access_rule authorize;
  /// The claims its selectors and filter name ("{claims.<name>}"), in first-use order.
  std::vector<std::string> claims;
  /// The indexes (sort keys) that answer its filter's count and find its matches without
  /// reading every record, whatever its arguments' values: the node keeps each for the
  /// datasets the query reads once they are large (actors, shard_views.cpp). One on each
  /// field (or dotted path) the filter bounds ({"state": "{state}"}, {"n": {"$gte": "{min}"}},
  /// {"tag": {"$in": ["{a}", "{b}"]}}; a complement such as {"done": {"$ne": true}} only when
  /// it is the whole filter); or, for a filter that is nothing but bounds on two fields, one
  /// fixed to values ({"owner": "{me}", "ts": {"$gte": "{since}"}}), one index on both, that
  /// fixed one first (core::span_plan::compound), which counts it whatever each admits; or,
  /// for a filter bounding no field whose top-level $or has branches that each bound one
  /// ({"$or": [{"owner": "{me}"}, {"shared": "{me}"}]}), one on a field of each branch, when
  /// they are at most core::max_disjunct_index_fields.
  std::vector<std::vector<std::string>> filter_index_sorts;

  /// False only for the single-document case (object set, dataset absent).
  bool yields_collection() const;
};

/// Whether `s` (a definition's space, object or dataset) is bound per subscription ("{arg}",
/// "{claims.<name>}") rather than a fixed id.
bool is_placeholder(std::string_view s);

/// Parses one query from JSON (configuration YAML is converted to JSON first). `index` is the
/// query's position in the list, used to name it when it has no usable name. Errors have code
/// "config.invalid", a message "query '<name>': field '<field>': <why>" and details
/// {"query": name-or-index, "field": field}.
result<query_definition> parse_query_definition(const boost::json::value& v, std::size_t index);

/// A stable digest of everything that decides what `def` returns (ids, filter, sort, arguments):
/// cluster members compare it, so two nodes configured with different definitions of one name
/// refuse to serve each other's watches instead of mixing results.
std::string definition_fingerprint(const query_definition& def);

/// Parses a list of queries (null means none) and checks that names and routes are unique.
result<std::vector<query_definition>> parse_query_definitions(const boost::json::value& list);

/// A query bound to concrete arguments: what a subscription actually runs.
struct bound_query {
  std::string space;
  std::string object;   ///< "" means the space's objects collection unit
  std::string dataset;  ///< "objects" for property documents (collection and single document)
  /// Set for the single-document case: the object id whose property document is the result.
  std::optional<std::string> single_id;
  filter where;
  sort_spec order;  ///< the definition's sort, with the client's sortBy prepended when given
  std::uint64_t page = 0;
  std::uint64_t page_size = 0;  ///< 0 = unpaged (and then page is normalized to 0)
  /// Canonical, unambiguous text of the query name, typed argument values, paging and effective
  /// sort: two requests may share one materialized result iff their keys are equal.
  std::string key;

  /// What it was bound from, so another node can bind the same query (cluster forwarding).
  struct binding {
    std::string query_name;
    std::vector<std::pair<std::string, std::string>> arguments;
    std::optional<std::string> sort_by;
    bool descending = false;
    std::string definition;  ///< definition_fingerprint of the query it was bound from
    /// The caller's values of the claims the definition names, as a JSON object's text ("" when
    /// it names none): another node binds the same rows without seeing the token.
    std::string claims;
  };
  binding from;

  /// The window over the matches: ranks [offset, offset + limit); limit 0 means all of them
  /// (an unbounded query). A paged named query is the window page × pageSize, pageSize.
  std::uint64_t offset = 0;
  std::uint64_t limit = 0;
  /// Keep the number of matches (Arc paging's totalItems, windowed includeTotal).
  bool count = false;
  /// Set for a windowed-subscribe request (its scope, projection and body, to bind it again on
  /// another node); null for a named query.
  std::shared_ptr<const windowed_request> windowed;
  /// The filter's spec as bound, as JSON text: two queries of one dataset whose texts are equal
  /// select the same records, so their windows may share what one knows (the number of matches)
  /// instead of counting again. Unequal texts may still be equal filters; nothing is shared then.
  std::string where_text;

  bool bounded() const { return limit > 0; }
};

/// The query a windowed request runs on one unit: its object's dataset (object scope), the
/// space's property documents (objects scope), or one object's share of a space-wide dataset
/// (datasets scope, `object` given; offset 0 and limit offset + limit, so that the merge of the
/// objects' windows is exact). An unbounded request with an offset is bounded by the largest
/// limit instead: the rows before the offset must be counted.
bound_query bind_windowed(std::shared_ptr<const windowed_request> req, std::string object = {});

/// The merged window of a space-wide dataset request (datasets scope): what its subscribers see.
/// `member_part`: one member's share of it instead (offset 0, limit offset + limit, over that
/// member's objects only), which another member's merge watches.
bound_query bind_windowed_merge(std::shared_ptr<const windowed_request> req, bool member_part);

/// The property document of object `object` in `space`, as a single-document query of its own
/// (an AG-UI state stream's): no named query, no windowed request. Its key names the object, so
/// every stream of one document shares one query actor.
bound_query bind_object_document(std::string space, std::string object);

/// The key bind_object_document gives; a key of this form marks such a query.
std::string object_document_key(std::string_view object);

/// The largest window: a limit that stands for "every row from the offset on".
inline constexpr std::uint64_t unbounded_limit = std::uint64_t{1} << 62;

/// Binds `arguments` (name → text, as the hub request carries them) to `def`. Every declared
/// argument is required, undeclared ones are refused, and each value must convert to its declared
/// type (integer: "42"; number: "4.5"; boolean: "true"/"false", any case). Ids bound from arguments
/// must be non-empty, at most 256 bytes, without control characters. `sort_by`, when non-empty, is
/// prepended to the definition's sort (`descending` gives its direction). Every failure is code
/// "query.invalid_arguments" with details {"query", "argument" or "field"}, except for claims:
/// `claims` holds the caller's (a principal's claims, or a binding's `claims` from another node);
/// a claim the definition names that is missing, not a string/number/boolean, or not a valid id
/// where it selects one is auth.forbidden (the caller is not entitled to these rows).
result<bound_query> bind_query(const query_definition& def,
                               const std::vector<std::pair<std::string, std::string>>& arguments,
                               std::uint64_t page, std::uint64_t page_size,
                               const std::optional<std::string>& sort_by, bool descending,
                               const boost::json::object& claims = {});

}  // namespace weir::core

// weir::core::change_set — the added/replaced/removed difference between two array snapshots of a
// query result, with Arc's item-identity rules (Arc hub §5.1). Pure and allocation-conscious: it is
// computed once per emission and the encoded bytes are shared by every subscriber.
#pragma once

#include <cstddef>
#include <string>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

namespace weir::core {

/// What changed between two array snapshots. Entries are whole items (copies), never bare ids.
struct change_set {
  boost::json::array added;
  boost::json::array replaced;
  boost::json::array removed;
};

/// The identity of one item (§5.1 step 1): the item is an object with exactly one member whose
/// name equals `id` ASCII-case-insensitively, and that member's value is a string, a boolean, or
/// a finite number whose truncation is a safe integer (|trunc(x)| <= 2^53-1). Returns a pointer to
/// that value inside `item`, or nullptr when the item has no identity.
const boost::json::value* item_identity(const boost::json::value& item);

/// Identity equality by JSON type and exact value: `"1" != 1`, `"a" != "A"`, `true != 1`.
/// Numbers compare by numeric value whatever Boost.JSON kind holds them, because JSON (and the
/// JavaScript client) has one number type: `1` (int64) equals `1.0` (double) — both are the
/// number 1 on the wire's reader.
bool identity_equal(const boost::json::value& a, const boost::json::value& b);

/// A hash consistent with identity_equal.
std::size_t identity_hash(const boost::json::value& id);

/// Function objects over identity pointers, for unordered containers keyed by identity.
struct identity_hasher {
  std::size_t operator()(const boost::json::value* id) const { return identity_hash(*id); }
};
struct identity_key_equal {
  bool operator()(const boost::json::value* a, const boost::json::value* b) const {
    return identity_equal(*a, *b);
  }
};

/// Computes the change set from `previous` to `current` (§5.1):
/// - when every item of both arrays has an identity and no identity repeats within one array,
///   walks the ids: `added` = new ids in current order, `replaced` = kept ids whose serialized JSON
///   differs (current order, current item), `removed` = vanished ids in previous order (previous
///   item);
/// - otherwise falls back to JSON set comparison: `added` = current items whose JSON text is not
///   among the previous items' texts, `removed` = previous items whose text is not among the
///   current ones, `replaced` empty. Repeated items are each reported (a filter, not a set
///   difference), so duplicate-count-only changes are invisible, as in Arc.
/// "Canonical JSON" and "serialization" here mean Boost.JSON's compact serialization of the value
/// as held, i.e. the same bytes that would go out as `data`: object member order matters, so
/// `{"a":1,"b":2}` and `{"b":2,"a":1}` differ.
change_set compute_change_set(const boost::json::array& previous,
                              const boost::json::array& current);

/// Appends `{"added":[...],"replaced":[...],"removed":[...]}` (all three always present) to `out`.
void append_change_set_json(std::string& out, const change_set& cs);

}  // namespace weir::core

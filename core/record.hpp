// weir::core::record — one stored record version: its id and its JSON text, serialized once per
// version so that every frame that carries it reuses the same bytes. A record does not keep a
// parsed document: at a million records a boost::json::object per record cost ~400 bytes each
// (tables, keys and strings as separate allocations), more than the text itself. Code that needs
// fields parses on demand (doc_reader), and the write path hands its freshly built documents
// along with each change so that no view parses what the writer already had.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parser.hpp>
#include <boost/unordered/unordered_flat_set.hpp>

namespace weir::core {

/// An immutable record version. Shared (never copied) between the shard's data, every index and
/// view holding it, and every frame that is encoded from it.
struct record {
  std::string id;
  std::string json;           ///< the document, serialized compactly
  bool has_identity = false;  ///< arc-hub §5.1: exactly one key equal to "id" case-insensitively
};

using record_ptr = std::shared_ptr<const record>;
using doc_ptr = std::shared_ptr<const boost::json::object>;

/// Hashing and equality of records by id, with lookups by id text (no record needed).
struct record_id_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  std::size_t operator()(const record_ptr& r) const { return (*this)(std::string_view{r->id}); }
};
struct record_id_equal {
  using is_transparent = void;
  static std::string_view id(std::string_view s) { return s; }
  static std::string_view id(const record_ptr& r) { return r->id; }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return id(a) == id(b);
  }
};

/// The records of one dataset by id: the set owns them (the id stored once, in the record).
/// Open addressing in one array (Boost 1.81's flat set) rather than std::unordered_set's node
/// per record: a dataset's first sort index is built from a copy of the set taken on the unit's
/// thread, and walking a million separately allocated nodes held the unit's writes for
/// 110-120 ms at a million records, where reading the array takes about 40 ms
/// (docs/performance.md). Nothing holds an element's address or an iterator across an insert or
/// erase.
using record_set = boost::unordered_flat_set<record_ptr, record_id_hash, record_id_equal>;

/// Builds a record from a document that already carries a string "id" (and `_ver`).
record_ptr make_record(const boost::json::object& doc);

/// Builds a record from its stored text and that text's parsed document (`doc` must be
/// `json` parsed). Returns nullptr when the document has no string id; `json` is then left as it
/// was.
record_ptr make_record_from(const boost::json::object& doc, std::string&& json);

/// Builds a record from stored JSON text, reading its id and identity with core/json_scan when
/// the text allows (no document is built), else with a full parse. The text is moved into the
/// record; nullptr (and `json` left as it was) when the text is not an object with a string id.
/// The caller has checked the text (core::check_document_text): json_scan trusts its depth.
record_ptr record_from_text(std::string&& json);

/// Parses stored JSON text back into a record (a unit loaded from disk, a change received from
/// another node). Returns nullptr when the text is not a JSON object with a string id. When
/// `doc` is given it receives the parsed document.
record_ptr parse_record(std::string_view json, boost::json::object* doc = nullptr);

/// Parses a record's JSON into a fresh document (heap-allocated; for documents that outlive the
/// call). Records are always valid JSON objects within the document limits (nothing else gets
/// in), so this does not fail; if it did, the document would be empty rather than a throw.
boost::json::object parse_doc(const record& r);

/// Reads records' documents into a reusable buffer, as deep as records may nest
/// (max_document_depth): the scan paths (filter evaluation over an
/// index, sort keys of rows) parse many small records one at a time, and a parser reused over a
/// monotonic buffer, with the document left in it, does that without a heap allocation per
/// record (measured on a 200-byte record with a nested object and an array: 350 ns, against
/// 800 ns when the document was moved out of the buffer onto the heap after each parse). Not
/// thread-safe; the document read last stays valid until the next read() (or read_only(), which
/// may fall back to read()), and so does any json::value copied from it without naming another
/// resource.
class doc_reader {
 public:
  doc_reader();
  const boost::json::object& read(const record& r) { return read(std::string_view{r.json}); }
  const boost::json::object& read(std::string_view json);

  /// Only the top-level members of `r` whose names are in `keys`, as a document holding just
  /// those (in no set order: what reads members by name cannot tell), for a pass that
  /// evaluates one filter and sort on many records: the other members' text is skipped, not
  /// parsed (a window's pass over a million of bench/window's records took 227 ms, median of
  /// 5, and 163 ms this way; bench/window_engine, docs/performance.md). Anything that reads
  /// only `keys` sees what it would see in the whole document, for a record's text as stored
  /// (well-formed, checked JSON: the members skipped are not validated): the whole document is
  /// read instead when a member name has an escape, when a wanted name appears twice, or when
  /// `keys` holds more than `max_keys` names. The document stays valid until the next
  /// read_only() (or, when it fell back, the next read()). Between calls a thread keeps the
  /// wanted members of the record read last (their buffers are reused; past 4 KiB
  /// of text they are let go at the next call).
  const boost::json::object& read_only(const record& r, const std::vector<std::string>& keys);
  static constexpr std::size_t max_keys = 8;

 private:
  // The members of `json` named in `keys` into only_; false when the whole text must be read.
  bool pick(std::string_view json, const std::vector<std::string>& keys);

  // read_only's document, kept from record to record: a new two-member object cost 102-106 ns
  // (3 rounds over 1M records; its table, a resource, the duplicate check) against 57-59 ns
  // for the scan of the record's text, where
  // assigning into the members it already has costs a copy of their text.
  boost::json::object only_;
  std::size_t only_bytes_ = 0;                         // the text last read into only_
  static constexpr std::size_t max_kept_bytes = 4096;  // past this, only_ is let go first

  unsigned char buf_[4096];
  // Rebuilt for every read: Boost 1.81's release() keeps the doubled size of the blocks it
  // allocated past the buffer, so a reused resource asked for ever larger blocks (seen as
  // bad_alloc after a few hundred 100 KB records).
  std::optional<boost::json::monotonic_resource> mr_;
  boost::json::parser parser_;
  // The document stays in mr_ (moved into place, not assigned: assigning a value of another
  // resource copies it, which cost more than the parse, docs/performance.md). So a json::value
  // copied from it keeps pointing into mr_, which the next read reuses: whatever outlives the
  // read must be copied onto the default resource (sort_spec::position_of does).
  std::optional<boost::json::value> value_;
};

/// The calling thread's doc_reader (each actor thread scans with its own).
doc_reader& thread_doc_reader();

/// The calling thread's reader for `order_index` comparisons, apart from `thread_doc_reader()`
/// because a caller may hold a document from that one across an index call. No reference to a
/// document it returns may outlive the expression that read it. One per thread rather than one
/// per index: its 4 KiB buffer in every index was 4.7 KB per subscribed key.
doc_reader& index_doc_reader();

struct change_ops;

/// One record's transition in an applied write: `before` and/or `after` (nullptr = absent), with
/// their parsed documents when the writer had them (so views evaluate filters without parsing),
/// and the write's effect as `$set`/`$unset` operations (windowed-subscribe §8).
struct record_change {
  std::string dataset;
  record_ptr before;
  record_ptr after;
  doc_ptr before_doc;  ///< may be null even when `before` is set: parse on demand
  doc_ptr after_doc;   ///< may be null even when `after` is set: parse on demand
  std::shared_ptr<const change_ops> ops;  ///< null for deletions
};

}  // namespace weir::core

// libFuzzer target: the write API's bodies as the node takes them — parsed as deep as documents
// nest (core::parse_json), a record as PUT sends it (checked against the document limits,
// normalized, stamped, made a record) and a PATCH update (parsed with the limits, applied to a
// record, the result checked again), as write_check and the shard do. Beyond "no crash", it
// checks the promise of issue 22: whatever is accepted serializes to strict JSON — valid UTF-8,
// no `Infinity`, no deeper than max_document_depth — so no stream a client reads is poisoned.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <boost/json/serialize.hpp>

#define WEIR_HOSTILE_JSON_MUTATOR
#include "hostile_json.hpp"

#include "core/document_check.hpp"
#include "core/record.hpp"
#include "core/record_rules.hpp"
#include "core/update_ops.hpp"
#include "core/utf8.hpp"

namespace {

namespace json = boost::json;
using namespace weir::core;

/// What is accepted must be what a strict client can read back.
void expect_servable(const json::object& doc, const document_limits& limits) {
  auto text = json::serialize(doc);
  // Strict JSON, read back as the same finite numbers (Boost.JSON writes an infinity as a
  // number that reads back as one, other libraries as a bare `Infinity`).
  auto back = parse_json(text);
  if (!valid_utf8(text) || !back || !check_document(back.value(), unbounded_sizes)) {
    std::abort();
  }
  if (!check_document_text(text, limits) && text.size() <= limits.max_bytes) {
    std::abort();  // accepted, yet its own text is refused by the loaders' check
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  document_limits limits;
  limits.max_bytes = 64 * 1024;  // small, so that size refusals are reached too
  limits.max_members = 256;
  auto v = parse_json(std::string_view{reinterpret_cast<const char*>(data), size});
  if (!v) {
    return 0;
  }
  if (v->is_object() && check_document(v->as_object(), limits)) {
    if (auto rec = normalize_record(*v, "r1"); rec) {
      stamp_version(*rec, "0000000000000001");
      if (rec->size() > limits.max_members) {
        return 0;  // the shard refuses it once stamped (record.too_many_members)
      }
      expect_servable(*rec, limits);
      auto r = make_record(*rec);
      (void)r;
    }
  }
  if (auto spec = parse_update(*v, limits); spec) {
    json::object doc{{"id", "r1"},
                     {"n", 1},
                     {"big", 1.5e308},
                     {"tags", json::array{"a", "b"}},
                     {"nested", json::object{{"x", 1.5}}}};
    if (apply_update(*spec, doc) && check_document(doc, limits) &&
        doc.size() <= limits.max_members) {
      expect_servable(doc, limits);
    }
  }
  return 0;
}

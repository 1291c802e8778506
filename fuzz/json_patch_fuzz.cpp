// libFuzzer target: RFC 6902 JSON Patch (the write API's application/json-patch+json bodies and
// the patch transfer mode's diffs). The input is a JSON value: an array is a patch applied to a
// fixed document; {"doc": A, "patch": P} applies P to A; {"a": A, "b": B} diffs A into B. Beyond
// "no crash", it checks what callers rely on: a failed patch leaves the document exactly as it
// was (atomicity), strict mode never drops an operation, both entry points agree, and a diff
// applied to its source gives its target.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <boost/json/parse.hpp>

#define WEIR_HOSTILE_JSON_MUTATOR
#include "hostile_json.hpp"

#include "core/document_check.hpp"
#include "core/filter.hpp"
#include "core/json_diff.hpp"
#include "core/json_patch.hpp"

namespace {

namespace json = boost::json;
using weir::core::patch_mode;

void check_apply(const json::value& doc, const json::value& patch) {
  // Small limits, so that the amplification bounds are reached (20 doubling copies).
  weir::core::document_limits limits;
  limits.max_bytes = 64 * 1024;
  limits.max_members = 1024;
  for (auto mode : {patch_mode::strict, patch_mode::lenient}) {
    json::value work = doc;
    auto r = weir::core::apply_patch(work, patch, mode, limits);
    if (!r && !weir::core::json_equal(work, doc)) {
      std::abort();  // a failed patch changed the document
    }
    if (r && mode == patch_mode::strict && !r->warnings.empty()) {
      std::abort();  // strict mode drops nothing
    }
    if (r && weir::core::measure_document(work).depth > weir::core::max_document_depth) {
      std::abort();  // a patch built a document deeper than any reader reads
    }
    auto p = weir::core::patched(doc, patch, mode, limits);
    if (static_cast<bool>(p) != static_cast<bool>(r) ||
        (p && !weir::core::json_equal(p->doc, work))) {
      std::abort();  // the two entry points disagree
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  json::error_code ec;
  json::parse_options opts;
  opts.max_depth = 64;
  auto v = json::parse(std::string_view{reinterpret_cast<const char*>(data), size}, ec, {}, opts);
  if (ec) {
    return 0;
  }
  if (v.is_array()) {
    json::value doc = json::object{{"id", "r1"},
                                   {"n", 1},
                                   {"tags", json::array{"a", "b"}},
                                   {"nested", json::object{{"x", 1.5}, {"a/b", "~"}}}};
    check_apply(doc, v);
    return 0;
  }
  if (!v.is_object()) {
    return 0;
  }
  const auto& o = v.as_object();
  if (const auto* doc = o.if_contains("doc"), *patch = o.if_contains("patch"); doc && patch) {
    check_apply(*doc, *patch);
  }
  // Diffs are taken between stored documents, which hold to the document limits (those
  // apply_patch checks its values against below).
  if (const auto* a = o.if_contains("a"), *b = o.if_contains("b");
      a && b && weir::core::check_document(*a, weir::core::document_limits{}) &&
      weir::core::check_document(*b, weir::core::document_limits{})) {
    auto diff = weir::core::json_diff(*a, *b);
    json::value work = *a;
    auto r = weir::core::apply_patch(work, diff);
    if (!r || !weir::core::json_equal(work, *b)) {
      std::abort();  // a diff must take its source to its target
    }
  }
  return 0;
}

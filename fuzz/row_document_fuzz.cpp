// libFuzzer target: a row another program wrote into PostgreSQL's weir_records, as a unit load
// and change capture read it — its text checked without building a document
// (check_document_text), then taken as it is when it is a record carrying the row's id, else
// parsed and given the row's id. Rows are inputs like requests (issue 22): whatever is served
// must be strict JSON (valid UTF-8, no `Infinity`) no deeper than max_document_depth, and the
// text check and the parser must agree on what is a document.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <boost/json/serialize.hpp>

#define WEIR_HOSTILE_JSON_MUTATOR
#include "hostile_json.hpp"

#include "core/document_check.hpp"
#include "core/record.hpp"
#include "core/record_rules.hpp"
#include "core/utf8.hpp"

namespace {

using namespace weir::core;

void expect_servable(const std::string& text) {
  // Strict JSON, read back as the same finite numbers.
  auto back = parse_json(text);
  if (!valid_utf8(text) || !back || !check_document(back.value(), unbounded_sizes)) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  document_limits limits;
  limits.max_bytes = 64 * 1024;
  limits.max_members = 256;
  std::string text{reinterpret_cast<const char*>(data), size};
  const std::string id = "row-1";
  if (!check_document_text(text, limits)) {
    return 0;  // skipped, as the loader skips it
  }
  auto doc = parse_document(text, limits);
  if (!doc) {
    std::abort();  // the text check passed what the parser refuses
  }
  auto rec = record_from_text(std::string{text});
  if (!rec || rec->id != id) {
    if (doc->is_object()) {
      doc->as_object().erase("id");
    }
    auto fixed = normalize_record(std::move(doc.value()), id);
    if (!fixed) {
      return 0;
    }
    rec = make_record(fixed.value());
  }
  expect_servable(rec->json);
  return 0;
}

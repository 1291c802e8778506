// Record construction: serialization once per version and the §5.1 identity flag.
#include "core/record.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace weir::core {
namespace {

bool is_id_key(std::string_view k) {
  return k.size() == 2 && (k[0] == 'i' || k[0] == 'I') && (k[1] == 'd' || k[1] == 'D');
}

}  // namespace

record_ptr make_record(boost::json::object doc) {
  auto r = std::make_shared<record>();
  int id_keys = 0;
  for (const auto& kv : doc) {
    if (is_id_key(kv.key())) {
      ++id_keys;
    }
  }
  if (auto* id = doc.if_contains("id"); id && id->is_string()) {
    r->id = std::string{id->get_string()};
  }
  // Weir's own records always carry a string "id"; a second id-like key ("Id", "ID") makes the
  // item identity-less for Arc's change-set rules, which then fall back to JSON-set comparison.
  r->has_identity = (id_keys == 1) && !r->id.empty();
  r->json = boost::json::serialize(doc);
  r->doc = std::move(doc);
  return r;
}

record_ptr parse_record(std::string_view json) {
  boost::system::error_code ec;
  auto v = boost::json::parse(json, ec);
  if (ec || !v.is_object()) {
    return nullptr;
  }
  auto* id = v.as_object().if_contains("id");
  if (!id || !id->is_string()) {
    return nullptr;
  }
  return make_record(std::move(v.as_object()));
}

}  // namespace weir::core

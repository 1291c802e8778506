// Record construction: serialization once per version, the §5.1 identity flag, on-demand parsing.
#include "core/record.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "core/document_check.hpp"
#include "core/json_scan.hpp"

namespace weir::core {
namespace {

bool is_id_key(std::string_view k) {
  return k.size() == 2 && (k[0] == 'i' || k[0] == 'I') && (k[1] == 'd' || k[1] == 'D');
}

void fill(record& r, const boost::json::object& doc) {
  int id_keys = 0;
  for (const auto& kv : doc) {
    if (is_id_key(kv.key())) {
      ++id_keys;
    }
  }
  if (auto* id = doc.if_contains("id"); id && id->is_string()) {
    r.id = std::string{id->get_string()};
  }
  // Weir's own records always carry a string "id"; a second id-like key ("Id", "ID") makes the
  // item identity-less for Arc's change-set rules, which then fall back to JSON-set comparison.
  r.has_identity = (id_keys == 1) && !r.id.empty();
}

}  // namespace

record_ptr make_record(const boost::json::object& doc) {
  auto r = std::make_shared<record>();
  fill(*r, doc);
  r->json = boost::json::serialize(doc);
  r->json.shrink_to_fit();
  return r;
}

record_ptr make_record_from(const boost::json::object& doc, std::string&& json) {
  auto* id = doc.if_contains("id");
  if (!id || !id->is_string()) {
    return nullptr;  // `json` is left as it was
  }
  auto r = std::make_shared<record>();
  fill(*r, doc);
  r->json = std::move(json);
  return r;
}

record_ptr record_from_text(std::string&& json) {
  int id_keys = 0;
  bool escaped = false;
  bool ok = scan_keys(json, [&](std::string_view k) {
    escaped = escaped || k.find('\\') != std::string_view::npos;
    id_keys += is_id_key(k) ? 1 : 0;
  });
  auto raw_id = ok && !escaped ? scan_path(json, {std::string{"id"}}) : std::nullopt;
  if (!raw_id || raw_id->size() < 2 || raw_id->front() != '"' ||
      raw_id->find('\\') != std::string_view::npos) {
    // Escapes or an unusual shape: let the parser decide.
    const auto& doc = thread_doc_reader().read(json);
    return make_record_from(doc, std::move(json));
  }
  auto r = std::make_shared<record>();
  r->id = std::string{raw_id->substr(1, raw_id->size() - 2)};
  r->has_identity = id_keys == 1 && !r->id.empty();
  r->json = std::move(json);
  return r;
}

record_ptr parse_record(std::string_view json, boost::json::object* doc) {
  boost::system::error_code ec;
  auto v = boost::json::parse(json, ec, {}, document_parse_options());
  if (ec || !v.is_object()) {
    return nullptr;
  }
  auto* id = v.as_object().if_contains("id");
  if (!id || !id->is_string()) {
    return nullptr;
  }
  auto r = std::make_shared<record>();
  fill(*r, v.as_object());
  r->json = std::string{json};
  if (doc) {
    *doc = std::move(v.as_object());
  }
  return r;
}

boost::json::object parse_doc(const record& r) {
  boost::system::error_code ec;
  auto v = boost::json::parse(r.json, ec, {}, document_parse_options());
  if (ec || !v.is_object()) {
    return {};  // not reached for a record that got in (core/document_check)
  }
  return std::move(v.get_object());
}

doc_reader::doc_reader() : parser_({}, document_parse_options()) {}

const boost::json::object& doc_reader::read(std::string_view json) {
  // The previous document lives in the old arena: drop it before the arena goes.
  value_.reset();
  mr_.emplace(buf_, sizeof buf_);
  parser_.reset(boost::json::storage_ptr(&*mr_));
  boost::system::error_code ec;
  parser_.write(json.data(), json.size(), ec);
  if (ec) {
    static const boost::json::object empty;
    return empty;
  }
  value_.emplace(parser_.release());
  if (!value_->is_object()) {
    static const boost::json::object empty;
    return empty;
  }
  return value_->get_object();
}

const boost::json::object& doc_reader::read_only(const record& r,
                                                 const std::vector<std::string>& keys) {
  if (keys.size() <= max_keys) {
    if (only_bytes_ > max_kept_bytes) {
      only_ = boost::json::object{};  // let go of one large record's buffers
    }
    if (pick(r.json, keys)) {
      return only_;
    }
  }
  return read(r);
}

bool doc_reader::pick(std::string_view json, const std::vector<std::string>& keys) {
  using namespace json_scan_detail;
  const char* p = json.data();
  const char* end = p + json.size();
  p = skip_ws(p, end);
  if (p == end || *p != '{') {
    return false;
  }
  p = skip_ws(p + 1, end);
  unsigned seen = 0;
  only_bytes_ = 0;
  if (p != end && *p == '}') {
    p = nullptr;  // the empty object
  }
  while (p) {
    if (p == end || *p != '"') {
      return false;
    }
    bool escaped = false;
    const char* k = skip_string(p, end, escaped);
    if (!k || escaped) {
      return false;  // an escaped name may spell a wanted one: only the parser unescapes
    }
    const std::string_view key{p + 1, static_cast<std::size_t>(k - p - 2)};
    p = skip_ws(k, end);
    if (p == end || *p != ':') {
      return false;
    }
    p = skip_ws(p + 1, end);
    escaped = false;
    const char* v = p != end && *p == '"' ? skip_string(p, end, escaped) : skip_value(p, end);
    if (!v) {
      return false;
    }
    std::size_t i = 0;
    while (i < keys.size() && keys[i] != key) {
      ++i;
    }
    if (i < keys.size()) {
      if (seen & (1U << i)) {
        return false;  // which of the two counts is the parser's business
      }
      seen |= 1U << i;
      const std::string_view text{p, static_cast<std::size_t>(v - p)};
      only_bytes_ += text.size();
      auto& slot = only_[key];  // kept from an earlier record when it had the member too
      if (text.front() == '"' && !escaped) {
        // A string without escapes is its own text (the stored text is valid UTF-8 JSON), and
        // assigned into a string it reuses that string's buffer.
        const boost::json::string_view chars{text.data() + 1, text.size() - 2};
        if (auto* str = slot.if_string()) {
          str->assign(chars);
        } else {
          slot = chars;
        }
      } else {
        parser_.reset(only_.storage());
        boost::system::error_code ec;
        parser_.write(text.data(), text.size(), ec);
        if (ec) {
          return false;
        }
        slot = parser_.release();
      }
    }
    p = skip_ws(v, end);
    if (p == end) {
      return false;
    }
    if (*p == '}') {
      break;
    }
    if (*p != ',') {
      return false;
    }
    p = skip_ws(p + 1, end);
  }
  // Members an earlier record (or an earlier caller's keys) left that this record lacks.
  for (auto it = only_.begin(); it != only_.end();) {
    std::size_t i = 0;
    while (i < keys.size() && keys[i] != it->key()) {
      ++i;
    }
    if (i < keys.size() && (seen & (1U << i))) {
      ++it;
    } else {
      it = only_.erase(it);
    }
  }
  return true;
}

doc_reader& thread_doc_reader() {
  thread_local doc_reader reader;
  return reader;
}

doc_reader& index_doc_reader() {
  thread_local doc_reader reader;
  return reader;
}

}  // namespace weir::core

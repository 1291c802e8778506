// Idempotency keys (see idempotency_key.hpp).
#include "core/idempotency_key.hpp"

#include <openssl/evp.h>

#include "core/rendezvous.hpp"

namespace weir::core {

result<void> check_idempotency_key(std::string_view key) {
  if (key.empty() || key.size() > max_idempotency_key_bytes) {
    return make_error("request.invalid_idempotency_key",
                      "Idempotency-Key must be 1 to 255 characters long");
  }
  for (unsigned char c : key) {
    if (c < '!' || c > '~') {
      return make_error("request.invalid_idempotency_key",
                        "Idempotency-Key may hold only visible ASCII characters (no spaces)");
    }
  }
  return {};
}

std::string batch_write_key(std::string_view key, std::string_view object,
                            std::string_view dataset) {
  std::string text;
  text.reserve(key.size() + object.size() + dataset.size() + 2);
  text.append(key).push_back('\0');
  text.append(object).push_back('\0');
  text.append(dataset);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(text.data(), text.size(), digest, &n, EVP_sha256(), nullptr);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "batch-";
  for (unsigned i = 0; i < 16 && i < n; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 15]);
  }
  return out;
}

std::uint64_t write_fingerprint(int kind, std::string_view object, std::string_view dataset,
                                std::string_view id, std::string_view body) {
  std::string text;
  text.reserve(object.size() + dataset.size() + id.size() + body.size() + 8);
  text += std::to_string(kind);
  for (auto part : {object, dataset, id, body}) {
    text.push_back('\0');
    text.append(part);
  }
  return stable_hash(text);
}

}  // namespace weir::core

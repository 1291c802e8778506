// weir::core::jwt_verifier — JWS compact parsing, key loading and claim checks; the signature
// arithmetic is OpenSSL's (EVP_DigestVerify, HMAC, EVP_PKEY_fromdata for JWKS keys).
#include "core/jwt.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace weir::core {

namespace json = boost::json;

namespace {

enum class algorithm { hs256, rs256, es256 };

std::optional<algorithm> algorithm_of(std::string_view name) {
  if (name == "HS256") {
    return algorithm::hs256;
  }
  if (name == "RS256") {
    return algorithm::rs256;
  }
  if (name == "ES256") {
    return algorithm::es256;
  }
  return std::nullopt;
}

struct pkey_deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_deleter>;

error config_error(std::string message) {
  return make_error("config.invalid", "auth.jwt: " + std::move(message), {{"field", "auth.jwt"}});
}

/// The algorithm an asymmetric key can verify, or an explanation of why it cannot be used.
result<algorithm> algorithm_for_key(EVP_PKEY* key) {
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_RSA:
      if (EVP_PKEY_get_bits(key) < 2048) {
        return config_error("an RSA key has " + std::to_string(EVP_PKEY_get_bits(key)) +
                            " bits; RS256 needs at least 2048");
      }
      return algorithm::rs256;
    case EVP_PKEY_EC: {
      std::array<char, 64> group{};
      std::size_t len = 0;
      if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group.data(),
                                         group.size(), &len) != 1 ||
          std::string_view{group.data(), len} != "prime256v1") {
        return config_error("an EC key is not on P-256 (ES256 needs prime256v1)");
      }
      return algorithm::es256;
    }
    default:
      return config_error("a public key is neither RSA nor EC (supported: RS256, ES256)");
  }
}

bool is_base64url_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

std::optional<json::object> decode_json_object(std::string_view part) {
  auto bytes = base64url_decode(part);
  if (!bytes) {
    return std::nullopt;
  }
  json::error_code ec;
  auto v = json::parse(*bytes, ec);
  if (ec || !v.is_object()) {
    return std::nullopt;
  }
  return std::move(v.get_object());
}

error invalid(std::string message) {
  return make_error("auth.invalid_token", std::move(message));
}

/// Latest NumericDate accepted: the end of year 9999, what "never expires" tokens carry. Keeps
/// every later sum (skew, milliseconds) far from overflow.
constexpr std::int64_t max_numeric_date = 253402300799;

/// A NumericDate (RFC 7519 §2): a JSON number of seconds, fractions allowed, within
/// [-max_numeric_date, max_numeric_date].
std::optional<std::int64_t> numeric_date(const json::value& v) {
  std::optional<std::int64_t> t;
  if (v.is_int64()) {
    t = v.get_int64();
  } else if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(max_numeric_date)) {
    t = static_cast<std::int64_t>(v.get_uint64());
  } else if (v.is_double() && std::isfinite(v.get_double()) &&
             std::abs(v.get_double()) <= static_cast<double>(max_numeric_date)) {
    t = static_cast<std::int64_t>(std::floor(v.get_double()));
  }
  if (!t || *t > max_numeric_date || *t < -max_numeric_date) {
    return std::nullopt;
  }
  return t;
}

bool verify_hmac(const std::string& secret, std::string_view input, std::string_view sig) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
           reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac.data(),
           &len) == nullptr) {
    return false;
  }
  return sig.size() == len && CRYPTO_memcmp(mac.data(), sig.data(), len) == 0;
}

bool verify_digest(EVP_PKEY* key, std::string_view input, const unsigned char* sig,
                   std::size_t sig_len) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), EVP_MD_CTX_free};
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1) {
    return false;
  }
  return EVP_DigestVerify(ctx.get(), sig, sig_len,
                          reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
}

/// ES256 signatures are r‖s, 32 bytes each (RFC 7518 §3.4); OpenSSL verifies DER.
bool verify_es256(EVP_PKEY* key, std::string_view input, std::string_view sig) {
  if (sig.size() != 64) {
    return false;
  }
  const auto* raw = reinterpret_cast<const unsigned char*>(sig.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> s{ECDSA_SIG_new(), ECDSA_SIG_free};
  BIGNUM* r = BN_bin2bn(raw, 32, nullptr);
  BIGNUM* ss = BN_bin2bn(raw + 32, 32, nullptr);
  if (!s || !r || !ss || ECDSA_SIG_set0(s.get(), r, ss) != 1) {
    BN_free(r);
    BN_free(ss);
    return false;
  }
  unsigned char* der = nullptr;
  int der_len = i2d_ECDSA_SIG(s.get(), &der);
  if (der_len <= 0) {
    return false;
  }
  bool ok = verify_digest(key, input, der, static_cast<std::size_t>(der_len));
  OPENSSL_free(der);
  return ok;
}

struct bn_deleter {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
using bn_ptr = std::unique_ptr<BIGNUM, bn_deleter>;

std::optional<std::string> jwk_member(const json::object& jwk, std::string_view name) {
  const auto* v = jwk.if_contains(name);
  if (!v || !v->is_string()) {
    return std::nullopt;
  }
  return base64url_decode(std::string_view{v->get_string()});
}

/// An RSA or EC public key from its JWK members.
result<pkey_ptr> pkey_from_jwk(const json::object& jwk, std::string_view kty, std::size_t index) {
  auto where = "JWKS key #" + std::to_string(index);
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> bld{OSSL_PARAM_BLD_new(),
                                                                      OSSL_PARAM_BLD_free};
  bn_ptr n, e;
  std::string point;
  const char* type = nullptr;
  if (kty == "RSA") {
    auto nb = jwk_member(jwk, "n");
    auto eb = jwk_member(jwk, "e");
    if (!nb || !eb || nb->empty() || eb->empty()) {
      return config_error(where + ": an RSA key needs base64url members n and e");
    }
    n.reset(BN_bin2bn(reinterpret_cast<const unsigned char*>(nb->data()),
                      static_cast<int>(nb->size()), nullptr));
    e.reset(BN_bin2bn(reinterpret_cast<const unsigned char*>(eb->data()),
                      static_cast<int>(eb->size()), nullptr));
    if (!n || !e || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, n.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, e.get()) != 1) {
      return config_error(where + ": unusable RSA members");
    }
    type = "RSA";
  } else {
    const auto* crv = jwk.if_contains("crv");
    if (!crv || !crv->is_string() || crv->get_string() != "P-256") {
      return config_error(where + ": an EC key must have crv P-256 (ES256)");
    }
    auto x = jwk_member(jwk, "x");
    auto y = jwk_member(jwk, "y");
    if (!x || !y || x->size() != 32 || y->size() != 32) {
      return config_error(where + ": an EC P-256 key needs 32-byte base64url members x and y");
    }
    point = "\x04" + *x + *y;
    static char group[] = "prime256v1";
    if (OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                         point.size()) != 1) {
      return config_error(where + ": unusable EC members");
    }
    type = "EC";
  }
  std::unique_ptr<OSSL_PARAM, decltype(&OSSL_PARAM_free)> params{OSSL_PARAM_BLD_to_param(bld.get()),
                                                                 OSSL_PARAM_free};
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx{
      EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr), EVP_PKEY_CTX_free};
  EVP_PKEY* raw = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    return config_error(where + ": OpenSSL refused the key (not a valid " + std::string{kty} +
                        " public key)");
  }
  return pkey_ptr{raw};
}

}  // namespace

struct jwt_verifier::key_store {
  struct key {
    std::string kid;  ///< "" when the key names none
    algorithm alg;
    std::string secret;  ///< HS256
    std::shared_ptr<EVP_PKEY> pkey;
  };
  std::vector<key> keys;

  result<void> add_pem(const std::string& pem, std::size_t index) {
    auto where = "publicKeyFiles[" + std::to_string(index) + "]";
    std::unique_ptr<BIO, decltype(&BIO_free)> bio{
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free};
    EVP_PKEY* raw = nullptr;
    if (pem.find("BEGIN CERTIFICATE") != std::string::npos) {
      X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
      if (cert) {
        raw = X509_get_pubkey(cert);
        X509_free(cert);
      }
    } else {
      raw = PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr);
    }
    if (!raw) {
      return config_error(where + ": not a PEM public key (BEGIN PUBLIC KEY) or certificate");
    }
    pkey_ptr key{raw};
    auto alg = algorithm_for_key(key.get());
    if (!alg) {
      return make_error("config.invalid", where + ": " + alg.error().message, alg.error().details);
    }
    keys.push_back({"", *alg, {}, std::shared_ptr<EVP_PKEY>(key.release(), EVP_PKEY_free)});
    return {};
  }

  result<void> add_jwks(const std::string& text) {
    json::error_code ec;
    auto doc = json::parse(text, ec);
    const json::value* list = nullptr;
    if (!ec && doc.is_object()) {
      list = doc.get_object().if_contains("keys");
    }
    if (!list || !list->is_array()) {
      return config_error("jwksFile: not a JWKS document (a JSON object with a \"keys\" array)");
    }
    std::size_t usable = 0;
    for (std::size_t i = 0; i < list->get_array().size(); ++i) {
      const auto& v = list->get_array()[i];
      if (!v.is_object()) {
        return config_error("JWKS key #" + std::to_string(i) + ": not an object");
      }
      const auto& jwk = v.get_object();
      const auto* kty = jwk.if_contains("kty");
      const auto* use = jwk.if_contains("use");
      if (use && use->is_string() && use->get_string() != "sig") {
        continue;  // an encryption key: not ours to verify with
      }
      std::string kid;
      if (const auto* k = jwk.if_contains("kid"); k && k->is_string()) {
        kid = std::string{k->get_string()};
      }
      if (!kty || !kty->is_string()) {
        return config_error("JWKS key #" + std::to_string(i) + ": no kty");
      }
      std::string_view type{kty->get_string()};
      if (type == "oct") {
        auto secret = jwk_member(jwk, "k");
        if (!secret || secret->size() < 32) {
          return config_error("JWKS key #" + std::to_string(i) +
                              ": an oct key needs a base64url k of at least 32 bytes");
        }
        keys.push_back({kid, algorithm::hs256, std::move(*secret), nullptr});
      } else if (type == "RSA" || type == "EC") {
        auto key = pkey_from_jwk(jwk, type, i);
        if (!key) {
          return std::move(key).error();
        }
        auto alg = algorithm_for_key(key->get());
        if (!alg) {
          return std::move(alg).error();
        }
        keys.push_back({kid, *alg, {}, std::shared_ptr<EVP_PKEY>(key->release(), EVP_PKEY_free)});
      } else {
        continue;  // a key type no supported algorithm uses
      }
      ++usable;
    }
    if (usable == 0) {
      return config_error("jwksFile: no usable signing key (RSA, EC P-256 or oct)");
    }
    return {};
  }
};

result<jwt_verifier> jwt_verifier::create(jwt_options options, const jwt_key_material& material) {
  auto store = std::make_shared<key_store>();
  if (!material.secret.empty()) {
    if (material.secret.size() < 32) {
      return config_error("secret: HS256 needs a secret of at least 32 bytes (RFC 7518 §3.2)");
    }
    store->keys.push_back({"", algorithm::hs256, material.secret, nullptr});
  }
  for (std::size_t i = 0; i < material.public_pems.size(); ++i) {
    if (auto r = store->add_pem(material.public_pems[i], i); !r) {
      return std::move(r).error();
    }
  }
  if (!material.jwks.empty()) {
    if (auto r = store->add_jwks(material.jwks); !r) {
      return std::move(r).error();
    }
  }
  if (store->keys.empty()) {
    return config_error("no key: set secret, publicKeyFiles or jwksFile");
  }
  if (options.clock_skew < std::chrono::seconds{0} ||
      options.clock_skew > std::chrono::seconds{300}) {
    return config_error("clockSkewSeconds must be between 0 and 300");
  }
  jwt_verifier v;
  v.options_ = std::move(options);
  v.keys_ = std::move(store);
  return v;
}

result<principal> jwt_verifier::verify(std::string_view token, std::int64_t now) const {
  if (token.size() > max_token_bytes) {
    return invalid("the token is longer than " + std::to_string(max_token_bytes) + " bytes");
  }
  auto dot1 = token.find('.');
  auto dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return invalid("not a JWT: expected three base64url parts separated by dots");
  }
  auto head_part = token.substr(0, dot1);
  auto body_part = token.substr(dot1 + 1, dot2 - dot1 - 1);
  auto sig_part = token.substr(dot2 + 1);
  auto header = decode_json_object(head_part);
  if (!header) {
    return invalid("the JWT header is not base64url-encoded JSON object");
  }
  const auto* alg_v = header->if_contains("alg");
  if (!alg_v || !alg_v->is_string()) {
    return invalid("the JWT header has no alg");
  }
  std::string_view alg_name{alg_v->get_string()};
  auto alg = algorithm_of(alg_name);
  if (!alg) {
    return make_error("auth.unsupported_algorithm",
                      "the token is signed with " + std::string{alg_name} +
                          "; this server accepts HS256, RS256 and ES256");
  }
  if (header->contains("crit")) {
    return invalid("the JWT header has critical extensions (crit) this server does not know");
  }
  std::string kid;
  if (const auto* k = header->if_contains("kid")) {
    if (!k->is_string()) {
      return invalid("the JWT header's kid is not a string");
    }
    kid = std::string{k->get_string()};
  }
  auto sig = base64url_decode(sig_part);
  if (!sig) {
    return invalid("the JWT signature is not base64url");
  }
  auto input = token.substr(0, dot2);
  bool any_key = false;
  bool verified = false;
  for (const auto& key : keys_->keys) {
    if (key.alg != *alg || (!kid.empty() && !key.kid.empty() && key.kid != kid)) {
      continue;
    }
    any_key = true;
    switch (key.alg) {
      case algorithm::hs256:
        verified = verify_hmac(key.secret, input, *sig);
        break;
      case algorithm::rs256:
        verified = verify_digest(key.pkey.get(), input,
                                 reinterpret_cast<const unsigned char*>(sig->data()), sig->size());
        break;
      case algorithm::es256:
        verified = verify_es256(key.pkey.get(), input, *sig);
        break;
    }
    if (verified) {
      break;
    }
  }
  if (!any_key) {
    return make_error("auth.unsupported_algorithm",
                      "no configured key verifies " + std::string{alg_name} +
                          (kid.empty() ? std::string{} : " with kid '" + kid + "'"));
  }
  if (!verified) {
    return make_error("auth.invalid_signature", "the token's signature does not verify");
  }
  // Only a verified payload is read.
  auto claims = decode_json_object(body_part);
  if (!claims) {
    return invalid("the JWT payload is not base64url-encoded JSON object");
  }
  const auto skew = options_.clock_skew.count();
  principal p;
  if (const auto* exp = claims->if_contains("exp")) {
    auto t = numeric_date(*exp);
    if (!t) {
      return invalid("exp is not a NumericDate");
    }
    if (now >= *t + skew) {
      return make_error("auth.token_expired", "the token expired; sign in again",
                        {{"expiredAt", *t}});
    }
    p.expires_at = *t + skew;
  } else if (options_.require_expiry) {
    return invalid("the token has no exp; this server requires tokens that expire");
  }
  if (const auto* nbf = claims->if_contains("nbf")) {
    auto t = numeric_date(*nbf);
    if (!t) {
      return invalid("nbf is not a NumericDate");
    }
    if (now + skew < *t) {
      return make_error("auth.token_not_yet_valid",
                        "the token is not valid yet (nbf); check the clocks", {{"notBefore", *t}});
    }
  }
  if (!options_.issuer.empty()) {
    const auto* iss = claims->if_contains("iss");
    if (!iss || !iss->is_string() || iss->get_string() != options_.issuer) {
      return make_error("auth.wrong_issuer", "the token was not issued by " + options_.issuer);
    }
  }
  if (!options_.audience.empty()) {
    bool ok = false;
    if (const auto* aud = claims->if_contains("aud")) {
      if (aud->is_string()) {
        ok = aud->get_string() == options_.audience;
      } else if (aud->is_array()) {
        for (const auto& a : aud->get_array()) {
          ok = ok || (a.is_string() && a.get_string() == options_.audience);
        }
      }
    }
    if (!ok) {
      return make_error("auth.wrong_audience", "the token is not meant for " + options_.audience);
    }
  }
  const auto* sub = claims->if_contains(options_.subject_claim);
  if (!sub || !sub->is_string() || sub->get_string().empty()) {
    return invalid("the token has no subject (claim '" + options_.subject_claim + "')");
  }
  p.subject = std::string{sub->get_string()};
  if (const auto* t = claims->if_contains(options_.tenant_claim)) {
    if (!t->is_string()) {
      return invalid("the tenant claim '" + options_.tenant_claim + "' is not a string");
    }
    p.tenant = std::string{t->get_string()};
  }
  if (const auto* r = claims->if_contains(options_.roles_claim)) {
    if (r->is_string()) {
      p.roles.emplace_back(r->get_string());
    } else if (r->is_array()) {
      for (const auto& role : r->get_array()) {
        if (!role.is_string()) {
          return invalid("the roles claim '" + options_.roles_claim +
                         "' must be a string or an array of strings");
        }
        p.roles.emplace_back(role.get_string());
      }
    } else {
      return invalid("the roles claim '" + options_.roles_claim +
                     "' must be a string or an array of strings");
    }
  }
  p.claims = std::move(*claims);
  return p;
}

std::optional<std::string> base64url_decode(std::string_view in) {
  if (in.size() % 4 == 1) {
    return std::nullopt;
  }
  std::string b64;
  b64.reserve(in.size() + 3);
  for (char c : in) {
    if (!is_base64url_char(c)) {
      return std::nullopt;
    }
    b64.push_back(c == '-' ? '+' : c == '_' ? '/' : c);
  }
  std::size_t pad = (4 - b64.size() % 4) % 4;
  b64.append(pad, '=');
  std::string out(b64.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n < 0) {
    return std::nullopt;
  }
  out.resize(static_cast<std::size_t>(n) - pad);
  // Canonical encodings only: the unused low bits of the last character must be zero.
  if (base64url_encode(out) != in) {
    return std::nullopt;
  }
  return out;
}

std::string base64url_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  while (!out.empty() && out.back() == '=') {
    out.pop_back();
  }
  for (char& c : out) {
    c = c == '+' ? '-' : c == '/' ? '_' : c;
  }
  return out;
}

}  // namespace weir::core

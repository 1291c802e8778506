// weir::test::token_signer — OpenSSL EVP signing for the tests' tokens.
#include "tests/support/token_signer.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <chrono>
#include <stdexcept>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include "core/jwt.hpp"

namespace weir::test {

namespace json = boost::json;

struct token_signer::impl {
  alg a;
  std::string kid;
  std::string secret;
  EVP_PKEY* key = nullptr;
  ~impl() { EVP_PKEY_free(key); }
};

namespace {
std::string bn_bytes(const BIGNUM* bn, int pad_to = 0) {
  int n = pad_to > 0 ? pad_to : BN_num_bytes(bn);
  std::string out(static_cast<std::size_t>(n), '\0');
  if (pad_to > 0) {
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), n);
  } else {
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  }
  return out;
}
}  // namespace

token_signer::token_signer(alg a, std::string kid) : impl_(std::make_unique<impl>()) {
  impl_->a = a;
  impl_->kid = std::move(kid);
  switch (a) {
    case alg::hs256:
      impl_->secret.resize(32);
      RAND_bytes(reinterpret_cast<unsigned char*>(impl_->secret.data()), 32);
      for (auto& c : impl_->secret) {
        c = static_cast<char>('a' + (static_cast<unsigned char>(c) % 26));  // printable for YAML
      }
      break;
    case alg::rs256:
      impl_->key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{2048});
      break;
    case alg::es256:
      impl_->key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
      break;
  }
  if (a != alg::hs256 && impl_->key == nullptr) {
    throw std::runtime_error("token_signer: key generation failed");
  }
}

token_signer::~token_signer() = default;
token_signer::token_signer(token_signer&&) noexcept = default;
token_signer& token_signer::operator=(token_signer&&) noexcept = default;

std::string token_signer::sign(const json::object& claims, const json::object& header_extra) const {
  json::object header;
  header["alg"] = impl_->a == alg::hs256 ? "HS256" : impl_->a == alg::rs256 ? "RS256" : "ES256";
  header["typ"] = "JWT";
  if (!impl_->kid.empty()) {
    header["kid"] = impl_->kid;
  }
  for (const auto& kv : header_extra) {
    header[kv.key()] = kv.value();
  }
  std::string input = core::base64url_encode(json::serialize(header)) + "." +
                      core::base64url_encode(json::serialize(claims));
  std::string sig;
  if (impl_->a == alg::hs256) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    HMAC(EVP_sha256(), impl_->secret.data(), static_cast<int>(impl_->secret.size()),
         reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
    sig.assign(reinterpret_cast<char*>(mac), len);
  } else {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    std::size_t len = 0;
    EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, impl_->key);
    EVP_DigestSign(ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                   input.size());
    std::vector<unsigned char> der(len);
    EVP_DigestSign(ctx, der.data(), &len, reinterpret_cast<const unsigned char*>(input.data()),
                   input.size());
    EVP_MD_CTX_free(ctx);
    if (impl_->a == alg::rs256) {
      sig.assign(reinterpret_cast<char*>(der.data()), len);
    } else {
      // DER ECDSA-Sig-Value → r‖s, 32 bytes each (RFC 7518 §3.4).
      const unsigned char* p = der.data();
      ECDSA_SIG* s = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(len));
      sig = bn_bytes(ECDSA_SIG_get0_r(s), 32) + bn_bytes(ECDSA_SIG_get0_s(s), 32);
      ECDSA_SIG_free(s);
    }
  }
  return input + "." + core::base64url_encode(sig);
}

std::string token_signer::secret() const {
  return impl_->secret;
}

std::string token_signer::public_pem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, impl_->key);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

std::string token_signer::jwks() const {
  json::object k;
  if (!impl_->kid.empty()) {
    k["kid"] = impl_->kid;
  }
  k["use"] = "sig";
  if (impl_->a == alg::hs256) {
    k["kty"] = "oct";
    k["k"] = core::base64url_encode(impl_->secret);
  } else if (impl_->a == alg::rs256) {
    BIGNUM* n = nullptr;
    BIGNUM* e = nullptr;
    EVP_PKEY_get_bn_param(impl_->key, OSSL_PKEY_PARAM_RSA_N, &n);
    EVP_PKEY_get_bn_param(impl_->key, OSSL_PKEY_PARAM_RSA_E, &e);
    k["kty"] = "RSA";
    k["n"] = core::base64url_encode(bn_bytes(n));
    k["e"] = core::base64url_encode(bn_bytes(e));
    BN_free(n);
    BN_free(e);
  } else {
    BIGNUM* x = nullptr;
    BIGNUM* y = nullptr;
    EVP_PKEY_get_bn_param(impl_->key, OSSL_PKEY_PARAM_EC_PUB_X, &x);
    EVP_PKEY_get_bn_param(impl_->key, OSSL_PKEY_PARAM_EC_PUB_Y, &y);
    k["kty"] = "EC";
    k["crv"] = "P-256";
    k["x"] = core::base64url_encode(bn_bytes(x, 32));
    k["y"] = core::base64url_encode(bn_bytes(y, 32));
    BN_free(x);
    BN_free(y);
  }
  return json::serialize(json::object{{"keys", json::array{std::move(k)}}});
}

std::int64_t token_signer::now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace weir::test

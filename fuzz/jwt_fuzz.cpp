// libFuzzer target: JWT parsing and verification. The input is tried three ways:
//   - as a token, against verifiers holding an HS256 secret, RS256 and ES256 public keys (PEM)
//     and a JWKS document, so every algorithm's signature decoding (ES256's raw r||s included)
//     and key selection sees it;
//   - as the headers an authenticator reads (Authorization, cookie, access_token, tenant);
//   - split at its first newline into a header and a payload, signed here with the HS256 secret,
//     so that claim parsing — which a fuzzer could never reach past a real signature — is fuzzed
//     too (types of exp/nbf/iss/aud/sub/roles/tenants, numeric bounds, unknown members).
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/authenticator.hpp"
#include "core/jwt.hpp"

namespace {

constexpr std::string_view secret = "0123456789abcdef0123456789abcdef";
constexpr std::int64_t now = 1'800'000'000;

std::string public_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key);
  char* text = nullptr;
  auto n = BIO_get_mem_data(bio, &text);
  std::string out{text, static_cast<std::size_t>(n)};
  BIO_free(bio);
  return out;
}

weir::core::jwt_options options() {
  weir::core::jwt_options o;
  o.issuer = "https://id.example.com";
  o.audience = "weir";
  return o;
}

const weir::core::jwt_verifier& hs_verifier() {
  static const auto v = [] {
    weir::core::jwt_key_material keys;
    keys.secret = std::string{secret};
    return std::move(*weir::core::jwt_verifier::create(options(), keys));
  }();
  return v;
}

const weir::core::jwt_verifier& asymmetric_verifier() {
  static const auto v = [] {
    weir::core::jwt_key_material keys;
    EVP_PKEY* rsa = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{2048});
    EVP_PKEY* ec = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    keys.public_pems = {public_pem(rsa), public_pem(ec)};
    EVP_PKEY_free(rsa);
    EVP_PKEY_free(ec);
    keys.jwks = R"({"keys":[{"kty":"oct","kid":"k1","k":")" +
                weir::core::base64url_encode("fedcba9876543210fedcba9876543210") + R"("}]})";
    return std::move(*weir::core::jwt_verifier::create(options(), keys));
  }();
  return v;
}

std::string signed_token(std::string_view header, std::string_view payload) {
  auto input = weir::core::base64url_encode(header) + "." + weir::core::base64url_encode(payload);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  return input + "." +
         weir::core::base64url_encode(std::string_view{reinterpret_cast<char*>(mac), len});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text{reinterpret_cast<const char*>(data), size};
  (void)hs_verifier().verify(text, now);
  (void)asymmetric_verifier().verify(text, now);
  weir::core::authenticator auth{hs_verifier(), {"session", true}};
  weir::core::credential_sources in;
  in.authorization = text;
  (void)auth.authenticate(in, now);
  weir::core::credential_sources cookie;
  cookie.cookie = text;
  cookie.query = text;
  cookie.websocket_upgrade = true;
  cookie.tenant_header = text.substr(0, 8);
  (void)auth.authenticate(cookie, now);
  if (auto nl = text.find('\n'); nl != std::string_view::npos) {
    auto token = signed_token(text.substr(0, nl), text.substr(nl + 1));
    (void)hs_verifier().verify(token, now);
    weir::core::credential_sources bearer;
    std::string header = "Bearer " + token;
    bearer.authorization = header;
    bearer.tenant_header = "t";
    (void)auth.authenticate(bearer, now);
  }
  return 0;
}

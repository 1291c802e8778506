// weir::core::jwt_verifier — verifies JSON Web Tokens (RFC 7519) signed with HS256, RS256 or
// ES256 (RFC 7518 §3) and turns a valid one into a principal. Signatures are checked with
// OpenSSL's EVP interface; no cryptography is written here. Key material arrives as text (a
// secret, PEM public keys or certificates, a JWKS document): reading files is the caller's job.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/principal.hpp"
#include "core/result.hpp"

namespace weir::core {

struct jwt_options {
  std::string issuer;    ///< required `iss` when non-empty
  std::string audience;  ///< required among `aud` (a string or an array) when non-empty
  /// Tolerance for `exp` and `nbf` against this node's clock (bounded at load to 5 minutes).
  std::chrono::seconds clock_skew{30};
  /// Tokens without `exp` are refused unless this is false: a credential that never expires
  /// cannot be bounded by the emission guard.
  bool require_expiry = true;
  std::string subject_claim = "sub";
  std::string tenant_claim = "tenant";
  std::string roles_claim = "roles";
  /// An array of tenant ids: the tenants this token may select with the x-cratis-tenant-id
  /// header (see core/credentials.hpp).
  std::string tenants_claim = "tenants";
};

/// The verification keys, as text. At least one must be given.
struct jwt_key_material {
  std::string secret;                    ///< HS256; at least 32 bytes (RFC 7518 §3.2)
  std::vector<std::string> public_pems;  ///< RS256 (RSA ≥ 2048 bits) or ES256 (P-256) keys
  std::string jwks;                      ///< a JWKS document (RFC 7517): RSA, EC P-256, oct
};

/// Longest token accepted; longer ones are refused before any decoding.
inline constexpr std::size_t max_token_bytes = 16 * 1024;

class jwt_verifier {
 public:
  /// Loads the keys. Errors: config.invalid with a message naming the key that is unusable.
  static result<jwt_verifier> create(jwt_options options, const jwt_key_material& keys);

  /// Verifies `token` at `now` (seconds since the Unix epoch). Errors, each with a message a
  /// person can act on and all answered as 401: auth.invalid_token (not a well-formed JWS
  /// compact token, or a claim of the wrong type), auth.unsupported_algorithm (`alg` other than
  /// HS256/RS256/ES256, or no key for it), auth.invalid_signature, auth.token_expired,
  /// auth.token_not_yet_valid, auth.wrong_issuer, auth.wrong_audience.
  result<principal> verify(std::string_view token, std::int64_t now) const;

  const jwt_options& options() const { return options_; }

  struct key_store;

 private:
  jwt_options options_;
  std::shared_ptr<const key_store> keys_;
};

/// Base64url without padding (RFC 7515 §2) → bytes; nullopt for any other character, padding, or
/// an impossible length. Exposed for the tests and for the test suite's token signer.
std::optional<std::string> base64url_decode(std::string_view in);
std::string base64url_encode(std::string_view bytes);

}  // namespace weir::core

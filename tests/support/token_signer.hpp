// weir::test::token_signer — issues JSON Web Tokens for the tests, as an identity provider
// would: HS256 with a secret, RS256 and ES256 with keys generated here (OpenSSL), and the public
// halves as PEM and as a JWKS document for the server under test to verify with.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

namespace weir::test {

class token_signer {
 public:
  enum class alg { hs256, rs256, es256 };

  /// A new signer: a random 32-byte secret for HS256, or a fresh RSA-2048 / P-256 key pair.
  /// `kid` names the key in the token header and in jwks() ("" for none).
  explicit token_signer(alg a, std::string kid = {});
  ~token_signer();
  token_signer(token_signer&&) noexcept;
  token_signer& operator=(token_signer&&) noexcept;

  /// A compact JWS of `claims`. `header_extra` members are added to the header.
  std::string sign(const boost::json::object& claims,
                   const boost::json::object& header_extra = {}) const;

  /// HS256: the secret. RS256/ES256: the public key as PEM (BEGIN PUBLIC KEY).
  std::string secret() const;
  std::string public_pem() const;
  /// {"keys":[<this key>]}
  std::string jwks() const;

  /// Seconds since the Unix epoch, now.
  static std::int64_t now();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace weir::test

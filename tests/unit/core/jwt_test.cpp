// core::jwt_verifier: every algorithm with keys as a secret, PEM and JWKS; every refusal with
// the token that triggers it.
#include "core/jwt.hpp"

#include <gtest/gtest.h>

#include <boost/json/array.hpp>

#include "tests/support/token_signer.hpp"

namespace weir::core {
namespace {

using test::token_signer;
namespace json = boost::json;

constexpr std::int64_t now = 1'800'000'000;

json::object claims(json::object extra = {}) {
  json::object c{{"sub", "ada"},
                 {"iss", "https://id.example"},
                 {"aud", "weir"},
                 {"exp", now + 600},
                 {"iat", now}};
  for (auto& kv : extra) {
    c[kv.key()] = kv.value();
  }
  return c;
}

jwt_options options() {
  jwt_options o;
  o.issuer = "https://id.example";
  o.audience = "weir";
  return o;
}

jwt_verifier verifier_for(const token_signer& s, token_signer::alg a, jwt_options o = options()) {
  jwt_key_material keys;
  if (a == token_signer::alg::hs256) {
    keys.secret = s.secret();
  } else {
    keys.public_pems.push_back(s.public_pem());
  }
  auto v = jwt_verifier::create(std::move(o), keys);
  EXPECT_TRUE(v) << (v ? "" : v.error().message);
  return std::move(v.value());
}

class EveryAlgorithm : public testing::TestWithParam<token_signer::alg> {};

TEST_P(EveryAlgorithm, AValidTokenBecomesItsPrincipal) {
  token_signer s{GetParam()};
  auto v = verifier_for(s, GetParam());
  auto p =
      v.verify(s.sign(claims({{"tenant", "acme"}, {"roles", json::array{"admin", "ops"}}})), now);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->subject, "ada");
  EXPECT_EQ(p->tenant, "acme");
  EXPECT_EQ(p->roles, (std::vector<std::string>{"admin", "ops"}));
  EXPECT_TRUE(p->has_role("ops"));
  EXPECT_EQ(p->expires_at, now + 600 + 30);  // exp plus the skew it was accepted with
  EXPECT_EQ(p->claims.at("iss"), "https://id.example");
}

TEST_P(EveryAlgorithm, AnotherKeysSignatureIsRefused) {
  token_signer s{GetParam()};
  token_signer other{GetParam()};
  auto v = verifier_for(s, GetParam());
  auto p = v.verify(other.sign(claims()), now);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, "auth.invalid_signature");
}

TEST_P(EveryAlgorithm, ATamperedPayloadIsRefused) {
  token_signer s{GetParam()};
  auto v = verifier_for(s, GetParam());
  auto token = s.sign(claims());
  auto dot1 = token.find('.');
  auto dot2 = token.find('.', dot1 + 1);
  auto forged = token.substr(0, dot1 + 1) +
                base64url_encode(R"({"sub":"root","exp":)" + std::to_string(now + 600) + "}") +
                token.substr(dot2);
  auto p = v.verify(forged, now);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, "auth.invalid_signature");
}

TEST_P(EveryAlgorithm, JwksKeysVerifyAndKidSelects) {
  token_signer s{GetParam(), "k1"};
  jwt_key_material keys;
  keys.jwks = s.jwks();
  auto v = jwt_verifier::create(options(), keys);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_TRUE(v->verify(s.sign(claims()), now));
  token_signer other{GetParam(), "k2"};
  auto p = v->verify(other.sign(claims()), now);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, "auth.unsupported_algorithm");  // no key with kid k2
}

INSTANTIATE_TEST_SUITE_P(Algorithms, EveryAlgorithm,
                         testing::Values(token_signer::alg::hs256, token_signer::alg::rs256,
                                         token_signer::alg::es256),
                         [](const auto& info) {
                           switch (info.param) {
                             case token_signer::alg::hs256:
                               return std::string{"HS256"};
                             case token_signer::alg::rs256:
                               return std::string{"RS256"};
                             default:
                               return std::string{"ES256"};
                           }
                         });

class Refusals : public testing::Test {
 protected:
  token_signer s{token_signer::alg::hs256};
  jwt_verifier v = verifier_for(s, token_signer::alg::hs256);

  std::string code_of(const std::string& token, std::int64_t at = now) {
    auto p = v.verify(token, at);
    return p ? std::string{"ok"} : p.error().code;
  }
};

TEST_F(Refusals, ExpiredAndNotYetValidWithTheSkew) {
  EXPECT_EQ(code_of(s.sign(claims({{"exp", now - 31}}))), "auth.token_expired");
  EXPECT_EQ(code_of(s.sign(claims({{"exp", now - 29}}))), "ok");  // within 30 s of skew
  EXPECT_EQ(code_of(s.sign(claims({{"nbf", now + 31}}))), "auth.token_not_yet_valid");
  EXPECT_EQ(code_of(s.sign(claims({{"nbf", now + 29}}))), "ok");
  EXPECT_EQ(code_of(s.sign(claims({{"exp", "tomorrow"}}))), "auth.invalid_token");
}

TEST_F(Refusals, WrongIssuerOrAudience) {
  EXPECT_EQ(code_of(s.sign(claims({{"iss", "https://evil.example"}}))), "auth.wrong_issuer");
  EXPECT_EQ(code_of(s.sign(claims({{"aud", "other"}}))), "auth.wrong_audience");
  EXPECT_EQ(code_of(s.sign(claims({{"aud", json::array{"other", "weir"}}}))), "ok");
  auto no_aud = claims();
  no_aud.erase("aud");
  EXPECT_EQ(code_of(s.sign(no_aud)), "auth.wrong_audience");
}

TEST_F(Refusals, MissingExpirySubjectOrBadClaims) {
  auto c = claims();
  c.erase("exp");
  EXPECT_EQ(code_of(s.sign(c)), "auth.invalid_token");
  c = claims();
  c.erase("sub");
  EXPECT_EQ(code_of(s.sign(c)), "auth.invalid_token");
  EXPECT_EQ(code_of(s.sign(claims({{"roles", 3}}))), "auth.invalid_token");
  EXPECT_EQ(code_of(s.sign(claims({{"tenant", json::array{}}}))), "auth.invalid_token");
}

TEST_F(Refusals, AlgorithmsOtherThanTheThreeAndAlgNone) {
  auto token = s.sign(claims());
  auto body = token.substr(token.find('.'));
  auto none = base64url_encode(R"({"alg":"none","typ":"JWT"})") + body;
  EXPECT_EQ(code_of(none.substr(0, none.rfind('.') + 1)), "auth.unsupported_algorithm");
  EXPECT_EQ(code_of(s.sign(claims(), {{"alg", "HS512"}})), "auth.unsupported_algorithm");
  // An RS256 header on an HS256-only verifier: there is no RSA key to confuse it with.
  EXPECT_EQ(code_of(s.sign(claims(), {{"alg", "RS256"}})), "auth.unsupported_algorithm");
  EXPECT_EQ(code_of(s.sign(claims(), {{"crit", json::array{"exp"}}})), "auth.invalid_token");
}

TEST_F(Refusals, MalformedTokens) {
  for (std::string bad : {"", "abc", "a.b", "a.b.c.d", "!!.e30.", "e30.e30.@@", "e30=.e30.x"}) {
    EXPECT_EQ(code_of(bad), "auth.invalid_token") << bad;
  }
  EXPECT_EQ(code_of(std::string(max_token_bytes + 1, 'a')), "auth.invalid_token");
}

TEST(JwtKeys, UnusableKeysAreConfigErrors) {
  jwt_key_material keys;
  EXPECT_EQ(jwt_verifier::create({}, keys).error().code, "config.invalid");
  keys.secret = "too short";
  EXPECT_FALSE(jwt_verifier::create({}, keys));
  keys.secret.clear();
  keys.public_pems = {"-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n"};
  EXPECT_FALSE(jwt_verifier::create({}, keys));
  keys.public_pems.clear();
  keys.jwks = R"({"keys":[{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}]})";
  EXPECT_FALSE(jwt_verifier::create({}, keys));
  keys.jwks = R"({"nokeys":1})";
  EXPECT_FALSE(jwt_verifier::create({}, keys));
}

TEST(Base64Url, RoundTripsAndRefusesNonCanonicalText) {
  for (const std::string& s :
       std::vector<std::string>{"", "f", "fo", "foo", "foob", std::string("\xff\xfe\x00", 3)}) {
    auto enc = base64url_encode(s);
    EXPECT_EQ(enc.find('='), std::string::npos);
    EXPECT_EQ(base64url_decode(enc), s);
  }
  EXPECT_FALSE(base64url_decode("Zg=="));  // padding
  EXPECT_FALSE(base64url_decode("Zh"));    // non-zero unused bits
  EXPECT_FALSE(base64url_decode("Z"));
  EXPECT_FALSE(base64url_decode("a+b/"));
}

}  // namespace
}  // namespace weir::core

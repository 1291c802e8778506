// core::authenticator: where a credential is read from, and which tenant a caller may use.
#include "core/authenticator.hpp"

#include <gtest/gtest.h>

#include <boost/json/array.hpp>

#include "tests/support/token_signer.hpp"

namespace weir::core {
namespace {

using test::token_signer;

class Authenticator : public testing::Test {
 protected:
  token_signer signer{token_signer::alg::hs256};
  std::int64_t now = token_signer::now();

  authenticator make(authenticator_options o = {}) {
    jwt_key_material keys;
    keys.secret = signer.secret();
    return authenticator{std::move(*jwt_verifier::create({}, keys)), std::move(o)};
  }
  std::string token(boost::json::object extra = {}) {
    boost::json::object c{{"sub", "ada"}, {"exp", now + 60}};
    for (auto& kv : extra) {
      c[kv.key()] = kv.value();
    }
    return signer.sign(c);
  }
};

TEST_F(Authenticator, NoCredentialIsAnonymous) {
  auto who = make().authenticate({}, now);
  ASSERT_TRUE(who);
  EXPECT_FALSE((*who)->authenticated());
}

TEST_F(Authenticator, BearerHeaderAnyCase) {
  auto t = "bEaReR " + token();
  credential_sources in;
  in.authorization = t;
  auto who = make().authenticate(in, now);
  ASSERT_TRUE(who) << who.error().message;
  EXPECT_EQ((*who)->subject, "ada");
}

TEST_F(Authenticator, OtherSchemesAndBadTokensAreRefused) {
  credential_sources in;
  in.authorization = "Basic YWRhOnB3";
  EXPECT_EQ(make().authenticate(in, now).error().code, "auth.invalid_token");
  in.authorization = "Bearer ";
  EXPECT_EQ(make().authenticate(in, now).error().code, "auth.invalid_token");
  in.authorization = "Bearer x.y.z";
  EXPECT_EQ(make().authenticate(in, now).error().code, "auth.invalid_token");
}

TEST_F(Authenticator, CookieOnlyWhenConfigured) {
  auto cookie = "theme=dark; session=\"" + token() + "\"; other=1";
  credential_sources in;
  in.cookie = cookie;
  EXPECT_FALSE((*make().authenticate(in, now))->authenticated());
  auto who = make({"session", false}).authenticate(in, now);
  ASSERT_TRUE(who);
  EXPECT_EQ((*who)->subject, "ada");
}

TEST_F(Authenticator, QueryTokenOnlyOnWebSocketUpgradesWhenEnabled) {
  auto q = "x=1&access_token=" + token();
  credential_sources in;
  in.query = q;
  in.websocket_upgrade = true;
  EXPECT_FALSE((*make().authenticate(in, now))->authenticated());
  EXPECT_TRUE((*make({"", true}).authenticate(in, now))->authenticated());
  in.websocket_upgrade = false;
  EXPECT_FALSE((*make({"", true}).authenticate(in, now))->authenticated());
  EXPECT_EQ(strip_access_token(q), "x=1");
}

TEST_F(Authenticator, TenantComesFromTheTokenAndTheHeaderOnlyWhereAllowed) {
  auto t = "Bearer " + token({{"tenant", "acme"}, {"tenants", boost::json::array{"acme", "beta"}}});
  credential_sources in;
  in.authorization = t;
  EXPECT_EQ((*make().authenticate(in, now))->tenant, "acme");
  in.tenant_header = "beta";  // listed in the token's tenants claim
  EXPECT_EQ((*make().authenticate(in, now))->tenant, "beta");
  in.tenant_header = "gamma";  // forged
  EXPECT_EQ(make().authenticate(in, now).error().code, "auth.tenant_forbidden");
  in.from_trusted_proxy = true;  // a trusted proxy decides
  EXPECT_EQ((*make().authenticate(in, now))->tenant, "gamma");
}

TEST_F(Authenticator, AnonymousTenantHeaderOnlyFromTrustedProxies) {
  credential_sources in;
  in.tenant_header = "acme";
  EXPECT_EQ(make().authenticate(in, now).error().code, "auth.tenant_forbidden");
  EXPECT_EQ(authenticator{}.authenticate(in, now).error().code, "auth.tenant_forbidden");
  in.from_trusted_proxy = true;
  auto who = authenticator{}.authenticate(in, now);
  ASSERT_TRUE(who);
  EXPECT_EQ((*who)->tenant, "acme");
  EXPECT_FALSE((*who)->authenticated());
}

TEST_F(Authenticator, WithAuthenticationOffCredentialsAreNotRead) {
  credential_sources in;
  in.authorization = "Bearer garbage";
  auto who = authenticator{}.authenticate(in, now);
  ASSERT_TRUE(who);
  EXPECT_FALSE((*who)->authenticated());
}

TEST(CookieValue, FindsTheNamedCookie) {
  EXPECT_EQ(cookie_value("a=1; b=2", "b"), "2");
  EXPECT_EQ(cookie_value("a=1;b=\"x y\"", "b"), "x y");
  EXPECT_FALSE(cookie_value("ab=1", "b"));
  EXPECT_FALSE(cookie_value("", "b"));
}

}  // namespace
}  // namespace weir::core

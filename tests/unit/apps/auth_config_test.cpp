// Tests for apps/config's `auth`, `spaces` and `http.trustedProxies`: keys from files (relative
// to the configuration file), and every unusable setting refused at load with its key named.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "apps/config/node_config.hpp"
#include "tests/support/token_signer.hpp"

namespace weir::config {
namespace {

using test::token_signer;

struct temp_files {
  temp_files() {
    char tmpl[] = "/tmp/weir-auth-config-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~temp_files() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  }
  std::string dir;
};

TEST(AuthConfig, KeysFromPemAndJwksFilesVerifyTokens) {
  temp_files files;
  token_signer rsa{token_signer::alg::rs256};
  token_signer ec{token_signer::alg::es256, "ec-1"};
  files.write("rsa.pem", rsa.public_pem());
  files.write("keys.json", ec.jwks());
  auto yaml = std::string{R"(
auth:
  jwt:
    publicKeyFiles: [rsa.pem]
    jwksFile: keys.json
    audience: weir
    rolesClaim: groups
    tenantClaim: org
)"};
  auto cfg = load_config_text(yaml, files.dir + "/weir.yaml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  ASSERT_TRUE(cfg->auth.authenticator);
  auto now = token_signer::now();
  boost::json::object claims{{"sub", "ada"},
                             {"aud", "weir"},
                             {"exp", now + 60},
                             {"groups", boost::json::array{"admin"}},
                             {"org", "acme"}};
  for (const auto* signer : {&rsa, &ec}) {
    auto header = "Bearer " + signer->sign(claims);
    core::credential_sources in;
    in.authorization = header;
    auto who = cfg->auth.authenticator->authenticate(in, now);
    ASSERT_TRUE(who) << who.error().message;
    EXPECT_EQ((*who)->subject, "ada");
    EXPECT_EQ((*who)->tenant, "acme");
    EXPECT_TRUE((*who)->has_role("admin"));
  }
}

TEST(AuthConfig, SecretFileAndRulesAndProxies) {
  temp_files files;
  auto secret = files.write("secret", "0123456789abcdef0123456789abcdef\n");
  auto yaml = "auth:\n  jwt:\n    secretFile: " + secret +
              "\n    cookie: session\n  hubs: authenticated\n"
              "http:\n  trustedProxies: [\"10.0.0.0/8\", \"::1\"]\n"
              "spaces:\n  - name: \"team-*\"\n    read: { roles: [member] }\n";
  auto cfg = load_config_text(yaml, "weir.yaml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_TRUE(cfg->auth.hubs.authenticated);
  ASSERT_EQ(cfg->auth.spaces.size(), 1u);
  EXPECT_EQ(cfg->auth.spaces[0].read.roles, std::vector<std::string>{"member"});
  ASSERT_EQ(cfg->auth.trusted_proxies.size(), 2u);
  EXPECT_TRUE(cfg->auth.trusted_proxies[0].contains("10.2.3.4"));
  EXPECT_EQ(cfg->auth.authenticator->options().cookie, "session");
  EXPECT_EQ(cfg->auth.admin_role, "admin");  // the default
}

TEST(AuthConfig, AdminRoleNamesTheRoleOfTheAdminPage) {
  auto cfg = load_config_text(
      "auth:\n  jwt: { secret: \"0123456789abcdef0123456789abcdef\" }\n  adminRole: ops\n",
      "weir.yaml");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->auth.admin_role, "ops");
}

TEST(AuthConfig, WithoutAuthNothingIsRequired) {
  auto cfg = load_config_text("", "weir.yaml");
  ASSERT_TRUE(cfg);
  EXPECT_FALSE(cfg->auth.authenticator);
  EXPECT_TRUE(cfg->auth.hubs.anonymous());
}

TEST(AuthConfig, UnusableSettingsAreRefusedWithTheirKey) {
  struct bad_case {
    std::string yaml;
    std::string field;
  };
  for (const auto& [yaml, field] : std::vector<bad_case>{
           {"auth:\n  jwt: { secret: short }\n", "auth.jwt"},
           {"auth:\n  jwt: {}\n", "auth.jwt"},
           {"auth:\n  jwt: { secret: \"0123456789abcdef0123456789abcdef\", algo: x }\n",
            "auth.jwt.algo"},
           {"auth:\n  jwt: { publicKeyFiles: [/nonexistent.pem] }\n", "auth.jwt.publicKeyFiles"},
           {"auth:\n  jwt: { jwksFile: /nonexistent.json }\n", "auth.jwt.jwksFile"},
           {"auth:\n  jwt: { secret: \"0123456789abcdef0123456789abcdef\", "
            "clockSkewSeconds: 900 }\n",
            "auth.jwt.clockSkewSeconds"},
           {"auth:\n  hubs: authenticated\n", "auth.hubs"},
           {"auth:\n  adminRole: ops\n", "auth.adminRole"},
           {"auth:\n  jwt: { secret: \"0123456789abcdef0123456789abcdef\" }\n  adminRole: \"\"\n",
            "auth.adminRole"},
           {"http:\n  trustedProxies: [\"10.0.0.0/40\"]\n", "http.trustedProxies"},
           {"spaces: [{ name: x, read: admins }]\n", "spaces"},
       }) {
    auto cfg = load_config_text(yaml, "weir.yaml");
    ASSERT_FALSE(cfg) << yaml;
    EXPECT_EQ(cfg.error().code, "config.invalid");
    EXPECT_EQ(cfg.error().details.at("field").as_string(), field)
        << yaml << ": " << cfg.error().message;
  }
}

}  // namespace
}  // namespace weir::config

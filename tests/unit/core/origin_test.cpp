// Tests for core/origin: the SSE hub Origin rule (arc-hub §8, Decision 4).
#include "core/origin.hpp"

#include <gtest/gtest.h>

namespace weir::core {
namespace {

const origin_policy no_extras{};

bool allowed(std::string_view scheme, std::string_view host, std::string_view origin,
             const origin_policy& policy = no_extras) {
  return origin_allowed(scheme, host, origin, policy);
}

TEST(OriginAllowed, AbsentOriginIsANonBrowserClient) {
  EXPECT_TRUE(origin_allowed("http", "weir.example", std::nullopt, no_extras));
  EXPECT_TRUE(origin_allowed("https", "", std::nullopt, no_extras));
}

TEST(OriginAllowed, SameOrigin) {
  EXPECT_TRUE(allowed("http", "weir.example", "http://weir.example"));
  EXPECT_TRUE(allowed("https", "weir.example:8443", "https://weir.example:8443"));
  EXPECT_TRUE(allowed("http", "127.0.0.1:8080", "http://127.0.0.1:8080"));
  EXPECT_TRUE(allowed("http", "[::1]:8080", "http://[::1]:8080"));
}

TEST(OriginAllowed, SameOriginWithAndWithoutDefaultPorts) {
  EXPECT_TRUE(allowed("http", "weir.example:80", "http://weir.example"));
  EXPECT_TRUE(allowed("http", "weir.example", "http://weir.example:80"));
  EXPECT_TRUE(allowed("https", "weir.example:443", "https://weir.example"));
  EXPECT_TRUE(allowed("https", "weir.example", "https://weir.example:443"));
  EXPECT_TRUE(allowed("https", "[::1]:443", "https://[::1]"));
  // 443 is not http's default, nor 80 https's.
  EXPECT_FALSE(allowed("http", "weir.example:443", "http://weir.example"));
  EXPECT_FALSE(allowed("https", "weir.example", "https://weir.example:80"));
}

TEST(OriginAllowed, CaseOfSchemeAndHostDoesNotMatter) {
  EXPECT_TRUE(allowed("http", "Weir.Example", "HTTP://WEIR.example"));
  EXPECT_TRUE(allowed("HTTPS", "weir.example", "https://Weir.Example:443"));
}

TEST(OriginAllowed, DifferentPortIsRefused) {
  EXPECT_FALSE(allowed("http", "weir.example:8080", "http://weir.example:8081"));
  EXPECT_FALSE(allowed("http", "weir.example", "http://weir.example:8080"));
  EXPECT_FALSE(allowed("http", "weir.example:8080", "http://weir.example"));
}

TEST(OriginAllowed, DifferentSchemeOrHostIsRefused) {
  EXPECT_FALSE(allowed("http", "weir.example", "https://weir.example"));
  EXPECT_FALSE(allowed("https", "weir.example", "http://weir.example"));
  EXPECT_FALSE(allowed("http", "weir.example", "http://evil.example"));
  EXPECT_FALSE(allowed("http", "weir.example", "http://weir.example.evil.example"));
  EXPECT_FALSE(allowed("http", "weir.example", "http://sub.weir.example"));
}

TEST(OriginAllowed, SameOriginNeedsAnHttpSchemeAndAUsableHost) {
  EXPECT_FALSE(allowed("ws", "weir.example", "ws://weir.example"));
  EXPECT_FALSE(allowed("http", "", "http://weir.example"));
  EXPECT_FALSE(allowed("http", "weir.example/", "http://weir.example"));
  EXPECT_FALSE(allowed("http", "user@weir.example", "http://weir.example"));
  EXPECT_FALSE(allowed("http", "weir.example:", "http://weir.example"));
}

TEST(OriginAllowed, AllowedListMatchesExactlyAfterNormalization) {
  const origin_policy policy{
      {"https://App.Example", "http://localhost:3000/", "https://admin.example:443"}, false};
  EXPECT_TRUE(allowed("http", "weir.example", "https://app.example", policy));
  EXPECT_TRUE(allowed("http", "weir.example", "https://app.example:443", policy));
  EXPECT_TRUE(allowed("http", "weir.example", "http://localhost:3000", policy));
  EXPECT_TRUE(allowed("http", "weir.example", "https://admin.example", policy));
  EXPECT_FALSE(allowed("http", "weir.example", "http://app.example", policy));
  EXPECT_FALSE(allowed("http", "weir.example", "http://localhost:3001", policy));
  EXPECT_FALSE(allowed("http", "weir.example", "https://evil.app.example", policy));
  // The request's own origin still counts alongside the list.
  EXPECT_TRUE(allowed("http", "weir.example", "http://weir.example", policy));
}

TEST(OriginAllowed, MalformedListEntriesMatchNothing) {
  const origin_policy policy{{"app.example", "https://app.example/path", "*"}, false};
  EXPECT_FALSE(allowed("http", "weir.example", "https://app.example", policy));
  EXPECT_FALSE(allowed("http", "weir.example", "http://app.example", policy));
}

TEST(OriginAllowed, NullOnlyWhenConfigured) {
  EXPECT_FALSE(allowed("http", "weir.example", "null"));
  const origin_policy allow_null{{}, true};
  EXPECT_TRUE(allowed("http", "weir.example", "null", allow_null));
  // A configured list does not admit null by itself.
  const origin_policy list_only{{"https://app.example"}, false};
  EXPECT_FALSE(allowed("http", "weir.example", "null", list_only));
}

TEST(OriginAllowed, MalformedOriginIsRefused) {
  const origin_policy permissive{{"http://weir.example"}, true};
  for (std::string_view bad : {
           "",
           "weir.example",               // no scheme
           "//weir.example",             // no scheme
           "http:/weir.example",         // one slash
           "http://",                    // no host
           "http://weir.example/path",   // path
           "http://weir.example//",      // more than a trailing slash
           "http://weir.example?x=1",    // query
           "http://weir.example#f",      // fragment
           "http://user@weir.example",   // userinfo
           "http://weir.example:",       // empty port
           "http://weir.example:http",   // non-numeric port
           "http://weir.example:65536",  // port out of range
           "http://weir.example:80:80",  // two ports
           "http://weir example",        // space
           "http://[::1",                // unterminated IPv6
           "http://[::1]x",              // junk after IPv6
           "1http://weir.example",       // bad scheme
           "NULL",                       // not the null origin
       }) {
    EXPECT_FALSE(origin_allowed("http", "weir.example", bad, permissive)) << bad;
  }
}

TEST(OriginAllowed, ToleratesOneTrailingSlashAndLeadingPortZeros) {
  EXPECT_TRUE(allowed("http", "weir.example", "http://weir.example/"));
  EXPECT_TRUE(allowed("http", "weir.example:8080", "http://weir.example:08080"));
  EXPECT_TRUE(allowed("http", "weir.example", "http://weir.example:080"));
}

TEST(OriginNormalize, Forms) {
  EXPECT_EQ(normalize_origin("HTTPS://App.Example:443/"), "https://app.example");
  EXPECT_EQ(normalize_origin("http://App.Example:8080"), "http://app.example:8080");
  EXPECT_EQ(normalize_origin("http://[::1]:80"), "http://[::1]");
  EXPECT_EQ(normalize_origin("chrome-extension://abc"), "chrome-extension://abc");
  EXPECT_EQ(normalize_origin("foo://host:80"), "foo://host:80");  // no default port for foo
  EXPECT_EQ(normalize_origin("http://host/x"), std::nullopt);
}

}  // namespace
}  // namespace weir::core

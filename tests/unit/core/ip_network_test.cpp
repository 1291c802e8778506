// core::ip_network: ranges, and the client address behind trusted proxies.
#include "core/ip_network.hpp"

#include <gtest/gtest.h>

namespace weir::core {
namespace {

std::vector<ip_network> nets(std::initializer_list<const char*> list) {
  std::vector<ip_network> out;
  for (auto s : list) {
    out.push_back(*ip_network::parse(s));
  }
  return out;
}

TEST(IpNetwork, ParsesAddressesAndRanges) {
  EXPECT_TRUE(ip_network::parse("10.0.0.0/8"));
  EXPECT_TRUE(ip_network::parse("::1"));
  EXPECT_TRUE(ip_network::parse("fd00::/8"));
  for (auto bad : {"", "10.0.0.0/33", "10.0.0/8", "host", "::1/129", "1.2.3.4/"}) {
    EXPECT_FALSE(ip_network::parse(bad)) << bad;
  }
}

TEST(IpNetwork, MatchesByPrefix) {
  auto n = *ip_network::parse("10.1.0.0/17");
  EXPECT_TRUE(n.contains("10.1.127.255"));
  EXPECT_FALSE(n.contains("10.1.128.0"));
  EXPECT_TRUE(n.contains("::ffff:10.1.0.9"));
  EXPECT_FALSE(n.contains("fe80::1"));
  EXPECT_TRUE(ip_network::parse("::/0")->contains("2001:db8::1"));
}

TEST(ClientAddress, ForwardedForIsBelievedOnlyFromTrustedProxies) {
  auto trusted = nets({"10.0.0.0/8"});
  EXPECT_EQ(client_address(trusted, "203.0.113.9", "1.1.1.1"), "203.0.113.9");
  EXPECT_EQ(client_address(trusted, "10.0.0.2", "198.51.100.7"), "198.51.100.7");
  // The client forged a hop in front of the real one: the right-most untrusted hop wins.
  EXPECT_EQ(client_address(trusted, "10.0.0.2", "6.6.6.6, 198.51.100.7, 10.0.0.3"), "198.51.100.7");
  EXPECT_EQ(client_address(trusted, "10.0.0.2", std::nullopt), "10.0.0.2");
  EXPECT_EQ(client_address(trusted, "10.0.0.2", "garbage"), "10.0.0.2");
}

}  // namespace
}  // namespace weir::core

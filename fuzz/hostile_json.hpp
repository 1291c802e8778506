// A structure-aware libFuzzer mutator for JSON inputs: most mutations are libFuzzer's own
// (byte-level, with the target's dictionary), and one in four is a hostile edit a byte-level
// mutator almost never reaches: wrapping the input hundreds of levels deep, a dotted path or a
// JSON Pointer of thousands of segments, a number JSON cannot carry (1e400, a 400-digit
// integer), bytes that are not UTF-8 inside a string, or a run of JSON Patch ops that each
// double an array. A target includes this header once and defines WEIR_HOSTILE_JSON_MUTATOR
// to get LLVMFuzzerCustomMutator. Written here rather than taken from a library: libFuzzer's
// structure-aware helpers (libprotobuf-mutator) need a grammar in protobuf, and these few edits
// are what issue 22's failures had in common.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace weir::fuzz {

inline std::string hostile_edit(std::string in, std::mt19937& rng) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  // Where a value could go: after a ':' or '[' or ',' (or the start).
  auto value_at = [&]() -> std::size_t {
    for (int tries = 0; tries < 8 && !in.empty(); ++tries) {
      auto i = pick(in.size());
      if (in[i] == ':' || in[i] == '[' || in[i] == ',') {
        return i + 1;
      }
    }
    return 0;
  };
  static const char* const numbers[] = {"1e400",
                                        "-1e400",
                                        "1e308",
                                        "1.7976931348623157e308",
                                        "-0",
                                        "4.9e-324",
                                        "18446744073709551616",
                                        "-9223372036854775809",
                                        "9007199254740993"};
  switch (pick(8)) {
    case 0: {  // wrap deep
      auto depth = 30 + pick(120);
      std::string open, close;
      for (std::size_t i = 0; i < depth; ++i) {
        bool obj = rng() & 1;
        open += obj ? "{\"a\":" : "[";
        close.insert(close.begin(), obj ? '}' : ']');
      }
      return open + in + close;
    }
    case 1: {  // a long dotted path as an update
      std::string path = "a";
      for (std::size_t i = 0, n = 20 + pick(3000); i < n; ++i) {
        path += ".a";
      }
      return "{\"$set\":{\"" + path + "\":" + (in.empty() ? "1" : in) + "}}";
    }
    case 2: {  // a long pointer as a JSON Patch op
      std::string ptr;
      for (std::size_t i = 0, n = 20 + pick(3000); i < n; ++i) {
        ptr += "/a";
      }
      return "[{\"op\":\"add\",\"path\":\"" + ptr + "\",\"value\":1}]";
    }
    case 3: {  // a number JSON cannot carry
      std::string n = numbers[pick(sizeof numbers / sizeof *numbers)];
      if (pick(4) == 0) {
        n = std::string(300 + pick(700), '9');
      }
      in.insert(value_at(), n + (in.empty() ? "" : ","));
      return in;
    }
    case 4: {  // bytes that are not UTF-8 in a string
      static const char* const bad[] = {"\xff",     "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                        "\xe2\x82", "\x80"};
      auto q = in.find('"', pick(in.size() + 1));
      if (q == std::string::npos) {
        return "{\"id\":\"" + std::string{bad[pick(6)]} + "\"}";
      }
      in.insert(q + 1, bad[pick(6)]);
      return in;
    }
    case 5: {  // doubling copies
      std::string p = "[{\"op\":\"add\",\"path\":\"/a\",\"value\":[1,2,3,4]}";
      for (std::size_t i = 0, n = 5 + pick(40); i < n; ++i) {
        p += ",{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/a/-\"}";
      }
      return p + "]";
    }
    case 6: {  // many members
      std::string o = "{";
      for (std::size_t i = 0, n = 100 + pick(2000); i < n; ++i) {
        o += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
      }
      return o + "}";
    }
    default: {  // nested keyed arrays (the diff's worst case)
      std::string v = "1";
      for (std::size_t i = 0, n = 10 + pick(30); i < n; ++i) {
        v = "[{\"id\":\"x\",\"c\":" + v + "}]";
      }
      auto other = v;
      other.replace(other.find('1'), 1, "2");
      return "{\"a\":" + v + ",\"b\":" + other + "}";
    }
  }
}

}  // namespace weir::fuzz

#ifdef WEIR_HOSTILE_JSON_MUTATOR
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  std::mt19937 rng{seed};
  if (rng() % 4 != 0) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  auto out = weir::fuzz::hostile_edit(std::string{reinterpret_cast<char*>(data), size}, rng);
  if (out.size() > max_size) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
#endif

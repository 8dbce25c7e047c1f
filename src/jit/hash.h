// A 128-bit content hash for the compile cache key: two independent 64-bit
// hashes (FNV-1a, and a multiply-xorshift over 8-byte words) of the same
// bytes. Not cryptographic; the cache only needs accidental collisions to be
// negligible.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace autofuse::jit {

class ContentHash {
 public:
  /// Adds a field; its length is hashed too, so ("ab","c") != ("a","bc").
  void add(std::string_view bytes) {
    const uint64_t n = bytes.size();
    mix(std::string_view(reinterpret_cast<const char*>(&n), sizeof n));
    mix(bytes);
  }

  /// 32 hex digits.
  std::string hex() const {
    uint64_t h2 = words_;
    h2 ^= h2 >> 33;
    h2 *= 0xff51afd7ed558ccdull;
    h2 ^= h2 >> 33;
    return fmt::format("{:016x}{:016x}", fnv_, h2);
  }

 private:
  void mix(std::string_view bytes) {
    for (unsigned char c : bytes) {
      fnv_ ^= c;
      fnv_ *= 0x100000001b3ull;
    }
    size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, bytes.data() + i, 8);
      add_word(w);
    }
    uint64_t tail = 0;
    if (i < bytes.size()) std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
    add_word(tail ^ (static_cast<uint64_t>(bytes.size() - i) << 56));
  }
  void add_word(uint64_t w) {
    w *= 0x9e3779b97f4a7c15ull;
    w ^= w >> 29;
    words_ = (words_ ^ w) * 0xbf58476d1ce4e5b9ull;
    words_ ^= words_ >> 31;
  }

  uint64_t fnv_ = 0xcbf29ce484222325ull;
  uint64_t words_ = 0x2545f4914f6cdd1dull;
};

}  // namespace autofuse::jit

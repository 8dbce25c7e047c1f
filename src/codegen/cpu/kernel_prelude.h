// The prelude of every generated kernel module (embedded as text after
// kernel_abi.h and support/half.h; see CMakeLists.txt). Plain C++ with few
// includes: compile time of a module is dominated by what it includes.
#pragma once

#include <stdint.h>

namespace af {

// Floor division and modulo (sym semantics: round toward -infinity; the
// divisor's sign). Sizes divide by non-zero values only (guards ensure it).
static inline int64_t af_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t af_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline int64_t af_ceildiv(int64_t a, int64_t b) { return -af_floordiv(-a, b); }
static inline int64_t af_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t af_max(int64_t a, int64_t b) { return a > b ? a : b; }

}  // namespace af

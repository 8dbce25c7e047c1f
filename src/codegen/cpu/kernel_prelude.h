// The prelude of every generated kernel module, embedded as text after
// kernel_abi.h, support/half.h and support/float8.h, and before its float math
// (kernel_prelude_math.h; see CMakeLists.txt). Plain C++14 (clang 14
// defaults to gnu++14), global `af_` names, internal linkage (static inline),
// and no includes beyond <stdint.h>: a module's compile time is dominated by
// what it includes (docs: cpu-facts.md). Everything here is written so that
// g++ and clang vectorize it inside `#pragma omp simd` loops: branch-free
// selects instead of branches, __builtin_* instead of <cmath>.
#ifndef AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_H_
#define AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_H_

#include <stdint.h>

#define AF_INLINE static inline __attribute__((always_inline, unused))

// Elementwise kernels with long loop bodies (elementwise.cpp,
// kMinScheduledOps) ask g++ for its instruction scheduling before register
// allocation (-fschedule-insns, off by default on x86-64; -fsched-pressure
// keeps it from spilling). In the chunk loops of large shapes (64 elements:
// several vectors per iteration) it interleaves the vectors' dependent
// chains, which the core alone overlaps too little: chain30 f32 [16384,
// 1024] 5.2 -> 4.2 ms on Zen 5, one thread (docs/benchmarks.md, session 31).
// Not for reductions (softmax_mask f32 [2, 12, 128, 128] took 1.10x the
// time). clang has no such option here and schedules anyway.
#if defined(__GNUC__) && !defined(__clang__)
#define AF_SCHEDULED __attribute__((optimize("schedule-insns", "sched-pressure")))
#else
#define AF_SCHEDULED
#endif

// A `#pragma omp simd` loop that cannot vectorize (integer division, libm
// calls) is still correct; clang would warn about each one.
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

// ---- Symbolic size helpers (sym::to_cpp prints calls to these) ------------
// Floor division and modulo round toward -infinity (the divisor's sign).
// Sizes divide by non-zero values only (the graph's guards ensure it).
AF_INLINE int64_t af_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
AF_INLINE int64_t af_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
AF_INLINE int64_t af_ceildiv(int64_t a, int64_t b) {
  return -af_floordiv(-a, b);
}
AF_INLINE int64_t af_min(int64_t a, int64_t b) {
  return a < b ? a : b;
}
AF_INLINE int64_t af_max(int64_t a, int64_t b) {
  return a > b ? a : b;
}

// ---- Tiling cost model ------------------------------------------------------
// Splits `units` of work (elements or rows) over blocks. Each block must move
// at least machine->min_block_bytes (waking a core costs ~0.3 us, so smaller
// work runs on one core: no wake-up at all), and there are at most
// machine->cores blocks (one per core: the blocks are equal, so more would
// only add a tail). `chunk` (units per block) is a multiple of `align` (the
// vector width in elements for elementwise kernels, so blocks never share a
// cache line of any output); the last block may get less.
typedef struct af_block_split {
  int64_t block_dim;
  int64_t chunk;
} af_block_split;

AF_INLINE af_block_split af_choose_blocks(int64_t units, int64_t bytes_per_unit, int64_t align,
                                          const af_machine* machine) {
  af_block_split s;
  if (units <= 0) {
    s.block_dim = 1;
    s.chunk = 0;
    return s;
  }
  if (align < 1) align = 1;
  const int64_t min_bytes = machine->min_block_bytes > 0 ? machine->min_block_bytes : 1;
  const int64_t bytes = units > INT64_MAX / (bytes_per_unit > 0 ? bytes_per_unit : 1)
                            ? INT64_MAX
                            : units * (bytes_per_unit > 0 ? bytes_per_unit : 1);
  int64_t blocks = bytes / min_bytes;
  blocks = af_max(1, af_min(blocks, machine->cores > 0 ? machine->cores : 1));
  int64_t chunk = af_ceildiv(units, blocks);
  chunk = af_ceildiv(chunk, align) * align;
  s.block_dim = af_ceildiv(units, chunk);  // no empty blocks after rounding
  s.chunk = chunk;
  return s;
}

// ---- Kernel groups: several loop nests in one launch (cpu/kernel_group.cpp) -
// A member's place in the group's launches: it runs its phase q (of
// `phases`) in the group's phase start + q, as blocks [off, off + block_dim)
// of it; block_dim 0: nothing to write, skipped. `workspace`: its byte offset
// in the group's workspace.
typedef struct af_group_slot {
  int64_t start, off, block_dim, phases, workspace;
} af_group_slot;

// Lays out the members' launches once their tiling is done (`members[k]`
// their headers, `level[k]` 0 for a member that reads no other member's
// output, else one more than the highest level it reads; `empty[k]`: no
// output element). Every member on one block (all too small to split), or
// more launches than the caller runs: one block runs all members in order
// (*serial = 1: one dispatch, no barrier). Else each level gets consecutive
// phases, its members side by side in them.
static __attribute__((unused)) void af_group_schedule(int64_t n,
                                                      const af_tiling_header* const* members,
                                                      const int64_t* level, const int64_t* empty,
                                                      af_group_slot* slots,
                                                      af_tiling_header* header, int64_t* serial) {
  int64_t workspace = 0, max_level = 0, all_single = 1;
  for (int64_t k = 0; k < n; ++k) {
    af_group_slot* s = &slots[k];
    s->block_dim = empty[k] ? 0 : members[k]->block_dim;
    s->phases = members[k]->num_phases > 1 ? members[k]->num_phases : 1;
    s->workspace = workspace;
    if (!empty[k]) workspace += (members[k]->workspace_bytes + 63) / 64 * 64;
    all_single = all_single && s->block_dim <= 1;
    max_level = af_max(max_level, level[k]);
  }
  int64_t phases = 0, width = 1;
  for (int64_t l = 0; l <= max_level; ++l) {
    int64_t level_phases = 0, off = 0;
    for (int64_t k = 0; k < n; ++k) {
      if (level[k] != l || slots[k].block_dim == 0) continue;
      slots[k].start = phases;
      slots[k].off = off;
      off += slots[k].block_dim;
      level_phases = af_max(level_phases, slots[k].phases);
    }
    phases += level_phases;
    width = af_max(width, off);
  }
  const int64_t max_phases = header->max_phases > 1 ? header->max_phases : 1;
  *serial = all_single || phases > max_phases;
  header->block_dim = *serial ? 1 : width;
  header->num_phases = *serial ? 1 : af_max(phases, 1);
  header->workspace_bytes = workspace;
  header->tiling_key = 0;
}

typedef void (*af_kernel_fn)(const void* tiling_data, void* const* args, int64_t block_idx);

// Runs the member's block of the group's launch phase `p`, block `b`, if it has one.
AF_INLINE void af_group_run(af_kernel_fn fn, const void* td, void* const* args,
                            const af_group_slot* s, int64_t p, int64_t b) {
  if (s->block_dim > 0 && p >= s->start && p < s->start + s->phases && b >= s->off &&
      b < s->off + s->block_dim)
    fn(td, args, (p - s->start) * s->block_dim + b - s->off);
}

// Runs all of the member's launches on this thread, in order.
AF_INLINE void af_group_run_all(af_kernel_fn fn, const void* td, void* const* args,
                                const af_group_slot* s) {
  for (int64_t i = 0; i < s->phases * s->block_dim; ++i)
    fn(td, args, i);
}

// ---- Run-time errors (af_status, kernel_abi.h) --------------------------------
// A Gather's bad index: the first report of the call wins whole (the
// compare-exchange claims the status; losers write nothing). Out of line and
// cold: the loops only test a flag, after the vector loop.
static __attribute__((noinline, cold, unused)) void af_gather_fail(af_status* st, int32_t which,
                                                                   int64_t index, int64_t bound) {
  int32_t ok = AF_STATUS_OK;
  if (__atomic_compare_exchange_n(&st->code, &ok, (int32_t)AF_STATUS_GATHER_INDEX, 0,
                                  __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
    st->which = which;
    st->index = index;
    st->bound = bound;
  }
}

// ---- Bits and half-precision conversions ------------------------------------
// Vectorizable (select-based) equivalents of support/half.h, bit-identical
// to it for every input (tested exhaustively in tests/codegen). They do no
// subnormal float arithmetic, so they are also right when the host process
// runs with FTZ/DAZ set.
AF_INLINE uint32_t af_f2u(float f) {
  return __builtin_bit_cast(uint32_t, f);
}
AF_INLINE float af_u2f(uint32_t u) {
  return __builtin_bit_cast(float, u);
}
AF_INLINE uint64_t af_d2u(double f) {
  return __builtin_bit_cast(uint64_t, f);
}
AF_INLINE double af_u2d(uint64_t u) {
  return __builtin_bit_cast(double, u);
}
// c ? a : b as bit masks. g++ (without -fno-trapping-math) does not
// if-convert a ternary whose arms hold float arithmetic, and then does not
// vectorize the loop ("control flow in loop"); a masked blend always works.
AF_INLINE uint32_t af_sel32(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - (uint32_t)c;
  return (a & m) | (b & ~m);
}
AF_INLINE float af_self(bool c, float a, float b) {
  const uint32_t m = 0u - (uint32_t)c;
  return af_u2f((af_f2u(a) & m) | (af_f2u(b) & ~m));
}
AF_INLINE double af_seld(bool c, double a, double b) {
  const uint64_t m = 0ull - (uint64_t)c;
  return af_u2d((af_d2u(a) & m) | (af_d2u(b) & ~m));
}
AF_INLINE float af_sel(bool c, float a, float b) {
  return af_self(c, a, b);
}
AF_INLINE double af_sel(bool c, double a, double b) {
  return af_seld(c, a, b);
}
AF_INLINE uint64_t af_sel64(bool c, uint64_t a, uint64_t b) {
  const uint64_t m = 0ull - (uint64_t)c;
  return (a & m) | (b & ~m);
}
// c ? a : b for max, min and relu. With AVX-512, a ternary over the bits:
// one blend under a mask register, 2-3 instructions fewer than af_sel
// (chain30 [1024, 1024]: 0.70 -> 0.57 ms). Without mask registers (AVX2),
// af_sel's masks, which g++ turns into the same blends there: g++ moves
// arithmetic on a ternary's result into its arms when one arm is a
// constant (relu(x) * 3 -> x <= 0 ? 0 : x * 3), and can then if-convert
// the branch only with masked instructions; on AVX2 it left chain30's loop
// scalar (7.2 ms for [1024, 1024] on a Zen 3 core).
AF_INLINE float af_pick(bool c, float a, float b) {
#if defined(__AVX512F__)
  return af_u2f(c ? af_f2u(a) : af_f2u(b));
#else
  return af_self(c, a, b);
#endif
}
AF_INLINE double af_pick(bool c, double a, double b) {
#if defined(__AVX512F__)
  return af_u2d(c ? af_d2u(a) : af_d2u(b));
#else
  return af_seld(c, a, b);
#endif
}

AF_INLINE float af_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  const float sub = (float)(int32_t)em * 5.9604644775390625e-08f;  // mant * 2^-24, exact
  const uint32_t normal = (em << 13) + 0x38000000u;                // re-bias exponent by 112
  // inf, or a NaN with its payload, quieted (support/half.h's f16_to_f32)
  const uint32_t special = (em << 13) | 0x7f800000u | af_sel32(em > 0x7c00u, 0x400000u, 0u);
  const uint32_t bits =
      af_sel32(em < 0x400u, af_f2u(sub), af_sel32(em >= 0x7c00u, special, normal));
  return af_u2f(bits | sign);
}

// The candidates are kept in the top half of the 32-bit lanes until one
// final shift: with 16-bit values g++'s vectorizer narrowed the selects to
// 16-bit lanes and packed every operand apart (30 packs and permutes in a
// conversion loop instead of 3; 0.60 -> 0.40 ns per element in cache; the
// same result for all 2^32 floats). See af_f32_to_bf16.
AF_INLINE uint16_t af_f32_to_f16(float f) {
  const uint32_t u = af_f2u(f);
  const uint32_t sign = u & 0x80000000u;
  const uint32_t a = u & 0x7fffffffu;
  const uint32_t nan = 0x7e000000u | ((a << 3) & 0x03ff0000u);
  // Re-bias the exponent (-112 << 23) and round to nearest even, in one add.
  const uint32_t normal = ((a + 0xc8000fffu + ((a >> 13) & 1u)) << 3) & 0xffff0000u;
  // Below 2^-14 the result is subnormal: adding 0.5f puts the bits in place
  // with the FPU's round-to-nearest-even (the sum is normal: no FTZ issue).
  const uint32_t sub = (af_f2u(af_u2f(a) + 0.5f) - 0x3f000000u) << 16;
  const uint32_t r =
      af_sel32(a > 0x7f800000u, nan,
               af_sel32(a >= 0x477ff000u, 0x7c000000u, af_sel32(a < 0x38800000u, sub, normal)));
  return (uint16_t)((r | sign) >> 16);
}

AF_INLINE float af_bf16_to_f32(uint16_t h) {
  return af_u2f((uint32_t)h << 16);
}

// Round to nearest even on the bits; a NaN gives its top half, quieted. The
// select is on the 32-bit values before the one shift: selecting between
// two shifted halves (session 7's form) let g++'s vectorizer narrow the
// select to 16-bit lanes, packing the mask and both arms apart (three
// packs and permutes per 16 elements instead of one; 38 instructions
// instead of 30 for bf16 x * 0.125, 0.39-0.48 -> 0.29-0.37 ns per element
// in cache; the same result for all 2^32 floats). af_sel32's mask
// arithmetic cost rmsnorm bf16 [512, 1024] 0.082 vs 0.073 ms in session 7.
// (Written once for a float and its uint32_t bits, or 16-lane vectors of
// them: af_put16_bf16; *u in place, since a 64-byte vector returned by
// value changes the ABI where AVX-512 is off.)
template <class F, class U>
AF_INLINE void af_bf16_round_bits(F f, U* u) {
  *u = f != f ? (*u | 0x400000u) : (*u + 0x7fffu + ((*u >> 16) & 1u));
}
AF_INLINE uint16_t af_f32_to_bf16(float f) {
  uint32_t u = af_f2u(f);
  af_bf16_round_bits(f, &u);
  return (uint16_t)(u >> 16);
}

/// A float rounded to the nearest f16 / bf16 value (a cast inside a kernel).
AF_INLINE float af_round_f16(float x) {
  return af_f16_to_f32(af_f32_to_f16(x));
}
AF_INLINE float af_round_bf16(float x) {
  return af_bf16_to_f32(af_f32_to_bf16(x));
}

// float8 (support/float8.h, embedded above: already select-based). A store
// rounds to nearest even and overflows to inf (f8e5m2) or NaN (no inf); a
// cast follows its `saturate` (ONNX Cast-19).
#define AF_DEFINE_F8(name)                                                \
  AF_INLINE float af_##name##_to_f32(uint8_t b) {                         \
    return autofuse::name##_to_f32(b);                                    \
  }                                                                       \
  AF_INLINE uint8_t af_f32_to_##name(float f) {                           \
    return autofuse::f32_to_##name(f, false);                             \
  }                                                                       \
  AF_INLINE float af_round_##name(float f, bool saturate) {               \
    return autofuse::name##_to_f32(autofuse::f32_to_##name(f, saturate)); \
  }
AF_DEFINE_F8(f8e4m3fn)
AF_DEFINE_F8(f8e4m3fnuz)
AF_DEFINE_F8(f8e5m2)
AF_DEFINE_F8(f8e5m2fnuz)
#undef AF_DEFINE_F8

/// `d` rounded to float toward zero with the last bit set when inexact
/// (round-to-odd): rounding that to f16/bf16 then rounds once, like the
/// reference (no double rounding). Finite values beyond the float range
/// clamp to +-FLT_MAX, which still round to infinity.
static inline __attribute__((unused)) float af_f64_to_f32_odd(double d) {
  const double kMax = 3.4028234663852886e+38;
  if (d != d || d == __builtin_inf() || d == -__builtin_inf()) return (float)d;
  if (d > kMax) return (float)kMax;
  if (d < -kMax) return -(float)kMax;
  const float f = (float)d;
  if ((double)f == d) return f;
  uint32_t u = af_f2u(f);
  if (__builtin_fabs((double)f) > __builtin_fabs(d)) u -= 1;  // one step toward zero
  return af_u2f(u | 1u);
}

/// `mag` rounded to float by round-to-odd (exact below 2^24).
static inline __attribute__((unused)) float af_u64_to_f32_odd(uint64_t mag) {
  if (mag < (1ull << 24)) return (float)mag;
  const int shift = 64 - __builtin_clzll(mag) - 24;
  uint64_t top = mag >> shift;
  if ((mag & ((1ull << shift) - 1)) != 0) top |= 1;
  return (float)top * af_u2f((uint32_t)(127 + shift) << 23);
}
/// `v` rounded to float by round-to-odd (exact below 2^24).
static inline __attribute__((unused)) float af_i64_to_f32_odd(int64_t v) {
  const float f = af_u64_to_f32_odd(v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
  return v < 0 ? -f : f;
}

// ---- Float -> integer casts: truncate, NaN -> 0, saturate -------------------
#define AF_DEFINE_F2I(name, I, lo, hi)                                                       \
  AF_INLINE I name(float v) {                                                                \
    return v != v ? (I)0 : v <= (float)(lo) ? (I)(lo) : v >= (float)(hi) ? (I)(hi) : (I)v;   \
  }                                                                                          \
  AF_INLINE I name(double v) {                                                               \
    return v != v ? (I)0 : v <= (double)(lo) ? (I)(lo) : v >= (double)(hi) ? (I)(hi) : (I)v; \
  }
AF_DEFINE_F2I(af_f2i8, int8_t, -128, 127)
AF_DEFINE_F2I(af_f2u8, uint8_t, 0, 255)
AF_DEFINE_F2I(af_f2i16, int16_t, -32768, 32767)
AF_DEFINE_F2I(af_f2u16, uint16_t, 0, 65535)
AF_DEFINE_F2I(af_f2i32, int32_t, -2147483647 - 1, 2147483647)
AF_DEFINE_F2I(af_f2u32, uint32_t, 0, 4294967295u)
AF_DEFINE_F2I(af_f2i64, int64_t, (-9223372036854775807LL - 1), 9223372036854775807LL)
AF_DEFINE_F2I(af_f2u64, uint64_t, 0, 18446744073709551615ull)
#undef AF_DEFINE_F2I

// ---- Casts to i4 / u4 (stored one per byte) ---------------------------------
// ONNX Cast-21: round half to even, then saturate (NaN -> 0); from an
// integer, saturate in the source's signedness. Arithmetic on i4/u4 wraps
// to 4 bits (af_wrap_*), like every integer type wraps to its width.
#define AF_DEFINE_F2I4(name, I, lo, hi)                \
  AF_INLINE I name(float v) {                          \
    return v != v             ? (I)0                   \
           : v <= (float)(lo) ? (I)(lo)                \
           : v >= (float)(hi) ? (I)(hi)                \
                              : (I)__builtin_rintf(v); \
  }                                                    \
  AF_INLINE I name(double v) {                         \
    return v != v              ? (I)0                  \
           : v <= (double)(lo) ? (I)(lo)               \
           : v >= (double)(hi) ? (I)(hi)               \
                               : (I)__builtin_rint(v); \
  }
AF_DEFINE_F2I4(af_f2i4, int8_t, -8, 7)
AF_DEFINE_F2I4(af_f2u4, uint8_t, 0, 15)
#undef AF_DEFINE_F2I4
template <class T>
AF_INLINE int8_t af_sat_i4(T v) {
  return v < (T)0 ? (v < (T)-8 ? (int8_t)-8 : (int8_t)v) : (v > (T)7 ? (int8_t)7 : (int8_t)v);
}
template <class T>
AF_INLINE uint8_t af_sat_u4(T v) {
  return v <= (T)0 ? (uint8_t)0 : (v > (T)15 ? (uint8_t)15 : (uint8_t)v);
}
AF_INLINE int8_t af_wrap_i4(int64_t v) {
  return (int8_t)((int8_t)(((uint8_t)v & 15u) ^ 8u) - 8);
}
AF_INLINE uint8_t af_wrap_u4(int64_t v) {
  return (uint8_t)((uint8_t)v & 15u);
}

// ---- Integer arithmetic without UB -------------------------------------------
// Wraps like two's complement (through the unsigned type); x / 0 == x mod 0
// == 0; INT_MIN / -1 wraps; mod is floor-mod (the sign of the divisor); a
// negative exponent gives 0 except for bases +-1. The same low bits as the
// reference, which computes in int64 and truncates.
template <class T>
struct af_int_traits;
template <>
struct af_int_traits<int8_t> {
  typedef uint8_t U;
  enum { kSigned = 1 };
};
template <>
struct af_int_traits<uint8_t> {
  typedef uint8_t U;
  enum { kSigned = 0 };
};
template <>
struct af_int_traits<int16_t> {
  typedef uint16_t U;
  enum { kSigned = 1 };
};
template <>
struct af_int_traits<uint16_t> {
  typedef uint16_t U;
  enum { kSigned = 0 };
};
template <>
struct af_int_traits<int32_t> {
  typedef uint32_t U;
  enum { kSigned = 1 };
};
template <>
struct af_int_traits<uint32_t> {
  typedef uint32_t U;
  enum { kSigned = 0 };
};
template <>
struct af_int_traits<int64_t> {
  typedef uint64_t U;
  enum { kSigned = 1 };
};
template <>
struct af_int_traits<uint64_t> {
  typedef uint64_t U;
  enum { kSigned = 0 };
};

template <class T>
AF_INLINE T af_wadd(T a, T b) {
  typedef typename af_int_traits<T>::U U;
  return (T)(U)((U)a + (U)b);
}
template <class T>
AF_INLINE T af_wsub(T a, T b) {
  typedef typename af_int_traits<T>::U U;
  return (T)(U)((U)a - (U)b);
}
template <class T>
AF_INLINE T af_wmul(T a, T b) {
  typedef typename af_int_traits<T>::U U;
  return (T)(U)((U)a * (U)b);
}
template <class T>
AF_INLINE T af_wneg(T a) {
  typedef typename af_int_traits<T>::U U;
  return (T)(U)((U)0 - (U)a);
}
template <class T>
AF_INLINE T af_iabs(T a) {
  return a < 0 ? af_wneg(a) : a;
}
template <class T>
AF_INLINE T af_idiv(T a, T b) {
  if (b == 0) return (T)0;
  if (af_int_traits<T>::kSigned && b == (T)-1) return af_wneg(a);
  return (T)(a / b);
}
template <class T>
AF_INLINE T af_imod(T a, T b) {
  if (b == 0 || (af_int_traits<T>::kSigned && b == (T)-1)) return (T)0;
  const T r = (T)(a % b);
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
template <class T>
static inline __attribute__((unused)) T af_ipow(T base, T exp) {
  if (af_int_traits<T>::kSigned && exp < 0) {
    if (base == 1) return (T)1;
    if (af_int_traits<T>::kSigned && base == (T)-1) return (exp & 1) != 0 ? (T)-1 : (T)1;
    return (T)0;
  }
  uint64_t result = 1;
  uint64_t b = (uint64_t)(int64_t)base;
  for (uint64_t e = (uint64_t)exp; e != 0; e >>= 1) {
    if ((e & 1) != 0) result *= b;
    b *= b;
  }
  return (T)result;
}
template <class T>
AF_INLINE T af_irelu(T a) {
  return a > 0 ? a : (T)0;
}
template <class T>
AF_INLINE T af_isign(T a) {
  return (T)((a > 0) - (a < 0));
}

#endif  // AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_H_

// A vector pass's 16 lanes (vector_pass.cpp, column_vectors.cpp), embedded
// after kernel_prelude_rows.h (see CMakeLists.txt), whose 8-lane types and
// lane tree it uses. The generated code names one type, af_f32x16, and
// these functions; here it is one register with AVX-512 and, with AVX2, a
// pair of 8-lane registers (AF_LANE_PAIRS) with its operators, so that the
// same generated text compiles to either. Elsewhere the passes keep their
// loops (`#if AF_VECTOR_PASS ... #else ... #endif`).
//
// Why pairs, not a 64-byte GNU vector, with AVX2: g++ 12 lowers a vector
// wider than the machine's through memory wherever it is passed by
// pointer, kept in an array or returned (its accumulators were stored and
// reloaded through general registers, 8 moves per add): built that way for
// AVX2 the vector passes took 1.4-2.2x the buffered loops' time (rmsnorm
// f32, bert_embeddings; session 35, on a Zen 5 with -march=haswell). A
// struct of two af_f32x8 is split into its registers after inlining.
#ifndef AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_LANES_H_
#define AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_LANES_H_

// The lambdas are inlined wherever they are called: a call would keep the
// accumulators they update in memory.
#define AF_LAMBDA_INLINE __attribute__((always_inline))
// AF_FORCE_LANE_PAIRS (defined before the prelude): the AVX2 form on an
// AVX-512 machine too, so that tests there run it (LaneLoops.*).
#if defined(AF_FORCE_LANE_PAIRS) && defined(__AVX2__)
#define AF_VECTOR_PASS 1
#define AF_LANE_PAIRS 1
#elif defined(__AVX512F__)
#define AF_VECTOR_PASS 1
#define AF_LANE_PAIRS 0
#elif defined(__AVX2__)
#define AF_VECTOR_PASS 1
#define AF_LANE_PAIRS 1
#else
#define AF_VECTOR_PASS 0
#define AF_LANE_PAIRS 0
#endif
// Elementwise loops over bf16 data as 32-bit words of two elements
// (word_pairs.cpp): AVX2 and AVX-512 without AVX512-BF16 (with it,
// vcvtne2ps2bf16 rounds the chunks). Defined before the prelude, 0 turns
// them off (tests compare both forms); AF_FORCE_LANE_PAIRS's tests run the
// lane pairs instead.
#ifndef AF_WORD_PAIRS
#if defined(AF_FORCE_LANE_PAIRS)
#define AF_WORD_PAIRS 0
#else
#define AF_WORD_PAIRS (AF_VECTOR_PASS && !AF_BF16_CVT)
#endif
#endif

// The clause's step: x replaces a when it is larger (max) or smaller (min);
// `is_max` comes from the function using it.
#define AF_EXTREME(x, a) (is_max ? ((x) > (a) ? (x) : (a)) : ((x) < (a) ? (x) : (a)))

/// The max or min of the lanes of two NaN-free halves: hi against lo, then
/// the tree (halves, quarters, pairs).
AF_INLINE float af_extreme_halves(af_f32x8 lo, af_f32x8 hi, bool is_max) {
  af_f32x8 acc = AF_EXTREME(hi, lo);
  acc = AF_EXTREME(AF_SWAP_LANES(acc, 4), acc);
  acc = AF_EXTREME(AF_SWAP_LANES(acc, 2), acc);
  acc = AF_EXTREME(AF_SWAP_LANES(acc, 1), acc);
  return acc[0];
}

#if !AF_LANE_PAIRS
// Its sums: 64 partial sums in four 16-lane accumulators, element i in
// partial i % 64 while whole runs of 64 remain, the rest in partials 0-15;
// then pairwise to 16 (the partials 32 apart, then 16 apart), 8 and the tree
// over the lanes.
typedef float af_f32x16 __attribute__((vector_size(64)));
typedef int32_t af_i32x16 __attribute__((vector_size(64)));
typedef float af_f32x16_mem __attribute__((vector_size(64), aligned(4), may_alias));

// (g++ 12 and clang both have __builtin_shufflevector.)
#define AF_LOW_HALF16(v) __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
#define AF_HIGH_HALF16(v) __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)

/// The sum of the 64 partial sums in s[0..3] (see above).
AF_INLINE float af_row_sum16x4(const af_f32x16* s) {
  const af_f32x16 w = (s[0] + s[2]) + (s[1] + s[3]);
  const af_f32x8 acc = AF_LOW_HALF16(w) + AF_HIGH_HALF16(w);
  return af_lanes_sum8(&acc);
}

// A row's tail (n < 16 lanes) by masked loads and stores where the compiler
// has their builtins: g++ turns the element loops into memcpy calls (the
// vector registers saved around the call, then a 64-byte load waiting for
// the copy's stores): a max over rows of 100 took 3.5x the buffered loop's
// time with them (session 36).
#if defined(__AVX512F__) && defined(__has_builtin)
#if __has_builtin(__builtin_ia32_loadups512_mask) && __has_builtin(__builtin_ia32_storeups512_mask)
#define AF_MASKED_F32X16 1
#endif
#if defined(__AVX512BW__) && defined(__AVX512VL__) && \
    __has_builtin(__builtin_ia32_loaddquhi256_mask)
#define AF_MASKED_U16X16 1
#endif
#endif
/// The mask of lanes [0, n) for 0 <= n < 16.
#define AF_TAIL_MASK(n) ((unsigned short)((1u << (n)) - 1u))

/// *v = p[0, 16), or p[0, n) and zeros after it when n < 16 (a row's tail:
/// nothing past the row is read). By pointer, as above.
AF_INLINE void af_load16(af_f32x16* v, const float* p, int64_t n) {
  if (n >= 16) {
    *v = *(const af_f32x16_mem*)p;
    return;
  }
#if defined(AF_MASKED_F32X16)
  *v = __builtin_ia32_loadups512_mask(p, (af_f32x16){}, AF_TAIL_MASK(n));
#else
  af_f32x16 t = {};
  for (int64_t k = 0; k < n; ++k)
    t[k] = p[k];
  *v = t;
#endif
}

/// af_load16 of 16 bf16 values widened to f32 (exactly: the bits shifted).
/// g++ 12 lowers __builtin_convertvector from 16 to 32 bits as two 8-lane
/// vpmovzxwd and an insert; its AVX-512 builtin is one (clang's
/// convertvector already is).
typedef uint16_t af_u16x16 __attribute__((vector_size(32)));
typedef short af_i16x16 __attribute__((vector_size(32)));
#if defined(__AVX512F__) && defined(__has_builtin) && !defined(__clang__)
#if __has_builtin(__builtin_ia32_pmovzxwd512_mask)
#define AF_WIDEN_U16X16(h) \
  __builtin_ia32_pmovzxwd512_mask((af_i16x16)(h), (af_i32x16){}, (unsigned short)-1)
#endif
#endif
#ifndef AF_WIDEN_U16X16
#define AF_WIDEN_U16X16(h) __builtin_convertvector(h, af_i32x16)
#endif
typedef uint16_t af_u16x16_mem __attribute__((vector_size(32), aligned(2), may_alias));
/// *h = p[0, 16), or p[0, n) and zeros after it when n < 16 (16-bit
/// values; by pointer, as above).
AF_INLINE void af_load_u16x16(af_u16x16* h, const uint16_t* p, int64_t n) {
  if (n >= 16) {
    *h = *(const af_u16x16_mem*)p;
    return;
  }
#if defined(AF_MASKED_U16X16)
#if defined(__clang__)  // (its builtin takes a vector pointer, g++'s a short pointer)
  const af_i16x16* from = (const af_i16x16*)p;
#else
  const short* from = (const short*)p;
#endif
  *h = (af_u16x16)__builtin_ia32_loaddquhi256_mask(from, (af_i16x16){}, AF_TAIL_MASK(n));
#else
  af_u16x16 t = {};
  for (int64_t k = 0; k < n; ++k)
    t[k] = p[k];
  *h = t;
#endif
}
AF_INLINE void af_load16_bf16(af_f32x16* v, const uint16_t* p, int64_t n) {
  af_u16x16 h;
  af_load_u16x16(&h, p, n);
  *v = (af_f32x16)(AF_WIDEN_U16X16(h) << 16);
}

/// p[0, 16) = *v, or p[0, n) = its first n lanes when n < 16.
AF_INLINE void af_store16(float* p, const af_f32x16* v, int64_t n) {
  if (n >= 16) {
    *(af_f32x16_mem*)p = *v;
    return;
  }
#if defined(AF_MASKED_F32X16)
  __builtin_ia32_storeups512_mask(p, *v, AF_TAIL_MASK(n));
#else
  for (int64_t k = 0; k < n; ++k)
    p[k] = (*v)[k];
#endif
}

/// *s += v's first n lanes (all 16 when n >= 16); the others add +0 even
/// where the tail's zeros made v inf or NaN.
AF_INLINE void af_add_lanes(af_f32x16* s, const af_f32x16* v, int64_t n) {
  if (n >= 16) {
    *s += *v;
    return;
  }
  const af_i32x16 lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  *s += (af_f32x16)((af_i32x16)*v & (lane < (int32_t)n));
}

// A vector pass's max (`is_max`) or min: four accumulators m[0..3] as for
// the sums, each step `x > m ? x : m` (vmaxps: a NaN x leaves m as it is),
// and a probe sum p of the same values, NaN when one of them is NaN (or
// infinities of both signs meet). Only then does the row run the buffered
// loop, whose max tests every value for NaN (af_row_extreme_f32's scheme: a
// compare per vector costs more than the add; testing in the vector pass
// itself, or redoing it there, changed how g++ allocated the registers of
// the whole pass: softmax_mask f32 1.2x the time).

/// One step over v's first n lanes (all 16 when n >= 16).
AF_INLINE void af_extreme_lanes(af_f32x16* m, af_f32x16* p, const af_f32x16* v, int64_t n,
                                bool is_max) {
  af_f32x16 x = *v;
  if (n < 16) {
    const af_i32x16 lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const af_i32x16 in = lane < (int32_t)n;
    const af_f32x16 identity = (af_f32x16){} + (is_max ? -__builtin_inff() : __builtin_inff());
    *p += (af_f32x16)((af_i32x16)x & in);
    x = (af_f32x16)(((af_i32x16)x & in) | ((af_i32x16)identity & ~in));
  } else {
    *p += x;
  }
  *m = is_max ? (x > *m ? x : *m) : (x < *m ? x : *m);
}

/// Whether the probe sums p[0..3] add up to NaN.
AF_INLINE int af_probe_nan16x4(const af_f32x16* p) {
  const float sum = af_row_sum16x4(p);
  return sum != sum;
}

/// The max (`is_max`) or min of a vector pass's accumulators m[0..3]
/// (af_extreme_lanes): pairwise, then the tree over the lanes (NaN-free, so
/// the order only picks between +0 and -0).
AF_INLINE float af_row_extreme16x4(const af_f32x16* m, bool is_max) {
  const af_f32x16 w = AF_EXTREME(AF_EXTREME(m[3], m[2]), AF_EXTREME(m[1], m[0]));
  return af_extreme_halves(AF_LOW_HALF16(w), AF_HIGH_HALF16(w), is_max);
}

/// p[0, 16) = v (streaming when `nt` and aligned), or its first n lanes.
AF_INLINE void af_put16_f32(float* p, af_f32x16 v, int64_t n, bool nt) {
  if (n < 16) {
    af_store16(p, &v, n);
    return;
  }
  if (AF_NT_STORES && nt && ((uintptr_t)p & 63u) == 0) {
    af_nt_store_aligned(p, &v, 64);
    return;
  }
  *(af_f32x16_mem*)p = v;
}

/// p[0, 16), or its first n, = v rounded to bf16 (af_f32_to_bf16's bits;
/// ordinary stores). Without AVX512-BF16 whole vectors by af_f32_to_bf16's
/// integer steps on the 16 lanes and one vpmovdw (lane_loops.cpp's rows of
/// 16: the loop's g++ code rounds 8 lanes at a time).
typedef uint32_t af_u32x16 __attribute__((vector_size(64)));
AF_INLINE void af_put16_bf16(uint16_t* p, af_f32x16 v, int64_t n) {
#if AF_BF16_CVT
  if (n >= 16 && __builtin_ia32_fpclassps512_mask(v, 0x20, 0xffff) == 0) {
    const af_nt_vec r = AF_CVTNE2PS2BF16(v, v);
    __builtin_memcpy(p, &r, 32);
    return;
  }
#else
  if (n >= 16) {
    af_u32x16 u = (af_u32x16)v;
    af_bf16_round_bits(v, &u);
    *(af_u16x16_mem*)p = __builtin_convertvector(u >> 16, af_u16x16);
    return;
  }
#endif
  for (int64_t k = 0; k < af_min(n, 16); ++k)
    p[k] = af_f32_to_bf16(v[k]);
}

#if AF_BF16_CVT
/// p[0, 32) = lo, hi rounded to bf16 by vcvtne2ps2bf16, or lane by lane
/// where one is subnormal (the instruction reads them as zero); streaming
/// when `nt` and p is 64-byte aligned.
AF_INLINE void af_put32_bf16(uint16_t* p, af_f32x16 lo, af_f32x16 hi, bool nt) {
  if (__builtin_expect((__builtin_ia32_fpclassps512_mask(lo, 0x20, 0xffff) |
                        __builtin_ia32_fpclassps512_mask(hi, 0x20, 0xffff)) != 0,
                       0)) {
    for (int k = 0; k < 16; ++k) {
      p[k] = af_f32_to_bf16(lo[k]);
      p[16 + k] = af_f32_to_bf16(hi[k]);
    }
    return;
  }
  const af_nt_vec r = AF_CVTNE2PS2BF16(hi, lo);
  if (nt && ((uintptr_t)p & 63u) == 0) {
    af_nt_store_aligned(p, &r, 64);
    return;
  }
  *(af_v32hi_mem*)p = (af_v32hi_mem)r;
}
#else
#ifndef AF_SHUFFLEVECTOR  // (tests define it 0 to run the fallback)
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define AF_SHUFFLEVECTOR 1
#endif
#endif
#endif
#ifndef AF_SHUFFLEVECTOR
#define AF_SHUFFLEVECTOR 0
#endif
typedef uint16_t af_u16x32 __attribute__((vector_size(64)));
typedef uint16_t af_u16x32_mem __attribute__((vector_size(64), aligned(2), may_alias));
/// The same by af_f32_to_bf16's integer steps on both vectors and one
/// vpermt2w taking the 32 upper halves (AVX-512 without BF16; a compiler
/// without __builtin_shufflevector, g++ before 12: af_put16_bf16 twice,
/// ordinary stores).
AF_INLINE void af_put32_bf16(uint16_t* p, af_f32x16 lo, af_f32x16 hi, bool nt) {
#if AF_SHUFFLEVECTOR
  af_u32x16 a = (af_u32x16)lo, b = (af_u32x16)hi;
  af_bf16_round_bits(lo, &a);
  af_bf16_round_bits(hi, &b);
  const af_u16x32 r = __builtin_shufflevector((af_u16x32)a, (af_u16x32)b, 1, 3, 5, 7, 9, 11, 13, 15,
                                              17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41,
                                              43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63);
  if (nt && ((uintptr_t)p & 63u) == 0) {
    af_nt_store_aligned(p, &r, 64);
    return;
  }
  *(af_u16x32_mem*)p = r;
#else
  (void)nt;
  af_put16_bf16(p, lo, 16);
  af_put16_bf16(p + 16, hi, 16);
#endif
}
#endif
#else  // AF_LANE_PAIRS
// 16 lanes as two AVX2 registers: lanes 0-7 in `lo`, 8-15 in `hi`. The
// operators are the GNU vectors' on each half (a float operand is
// broadcast), so the generated `(v1 * v11)` or `s_[0] += v4` compiles as
// with a 64-byte vector, and every sum and max below takes the lanes in the
// same order as the one-register form: the same bits on either machine.
struct af_f32x16 {
  af_f32x8 lo, hi;
};
#define AF_PAIR_OP(op)                                        \
  AF_INLINE af_f32x16 operator op(af_f32x16 a, af_f32x16 b) { \
    return af_f32x16{a.lo op b.lo, a.hi op b.hi};             \
  }                                                           \
  AF_INLINE af_f32x16 operator op(af_f32x16 a, float b) {     \
    return af_f32x16{a.lo op b, a.hi op b};                   \
  }                                                           \
  AF_INLINE af_f32x16 operator op(float a, af_f32x16 b) {     \
    return af_f32x16{a op b.lo, a op b.hi};                   \
  }
AF_PAIR_OP(+)
AF_PAIR_OP(-)
AF_PAIR_OP(*)
AF_PAIR_OP(/)
#undef AF_PAIR_OP
AF_INLINE af_f32x16 operator-(af_f32x16 a) {
  return af_f32x16{-a.lo, -a.hi};
}
AF_INLINE af_f32x16& operator+=(af_f32x16& a, af_f32x16 b) {
  a = a + b;
  return a;
}
AF_INLINE af_f32x16& operator+=(af_f32x16& a, float b) {  // a sum of a scalar
  a = a + b;
  return a;
}

/// Lanes [0, n) of 8 set (all for n >= 8, none for n <= 0).
AF_INLINE af_i32x8 af_lanes_below8(int64_t n) {
  const af_i32x8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  return lane < (int32_t)(n < 0 ? 0 : n > 8 ? 8 : n);
}

/// The sum of the 64 partial sums in s[0..3], in the one-register form's
/// order.
AF_INLINE float af_row_sum16x4(const af_f32x16* s) {
  const af_f32x16 w = (s[0] + s[2]) + (s[1] + s[3]);
  const af_f32x8 acc = w.lo + w.hi;
  return af_lanes_sum8(&acc);
}

// A row's tail (n < 16 lanes) by vmaskmovps / vpmaskmovd: masked lanes are
// not read or written (and do not fault).
AF_INLINE af_f32x8 af_load8_f32(const float* p, int64_t n) {
  if (n >= 8) return *(const af_f32x8_mem*)p;
  return __builtin_ia32_maskloadps256((const af_f32x8*)p, af_lanes_below8(n));
}

/// *v = p[0, 16), or p[0, n) and zeros after it when n < 16.
AF_INLINE void af_load16(af_f32x16* v, const float* p, int64_t n) {
  v->lo = af_load8_f32(p, n);
  v->hi = af_load8_f32(p + 8, n - 8);
}

/// 8 bf16 values widened to f32 by one vpmovzxwd and a shift (g++'s generic
/// conversion is two 128-bit ones and an insert: a sum of squares of bf16
/// rows took 2x the time on a Zen 3).
typedef uint16_t af_u16x8 __attribute__((vector_size(16)));
typedef uint16_t af_u16x8_mem __attribute__((vector_size(16), aligned(2), may_alias));
typedef short af_i16x8 __attribute__((vector_size(16)));
typedef uint16_t af_u16x16 __attribute__((vector_size(32)));
AF_INLINE af_f32x8 af_widen8_bf16(af_u16x8 h) {
#if defined(__clang__)
  const af_i32x8 w = __builtin_convertvector(h, af_i32x8);
#else
  const af_i32x8 w = (af_i32x8)__builtin_ia32_pmovzxwd256((af_i16x8)h);
#endif
  return (af_f32x8)(w << 16);
}

/// A row's tail p[0, n) (n < 16) of 16-bit values, zeros after it: the
/// whole pairs by a masked 32-bit load, an odd last value put in its lane
/// (nothing past p[n - 1] is read).
AF_INLINE af_u16x16 af_load_u16x16_tail(const uint16_t* p, int64_t n) {
  const int64_t pairs = n / 2;
  af_i32x8 d = __builtin_ia32_maskloadd256((const af_i32x8*)p, af_lanes_below8(pairs));
  if (n % 2 != 0) {
    const af_i32x8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
    d = lane == (int32_t)pairs ? (af_i32x8){} + (int32_t)p[n - 1] : d;
  }
  return (af_u16x16)d;
}
#define AF_LOW_HALF_U16(h) __builtin_shufflevector(h, h, 0, 1, 2, 3, 4, 5, 6, 7)
#define AF_HIGH_HALF_U16(h) __builtin_shufflevector(h, h, 8, 9, 10, 11, 12, 13, 14, 15)

/// af_load16 of 16 16-bit values, each 8 widened to f32 by `widen`.
template <class Widen>
AF_INLINE void af_load16_halves(af_f32x16* v, const uint16_t* p, int64_t n, Widen widen) {
  if (n >= 16) {
    v->lo = widen(*(const af_u16x8_mem*)p);
    v->hi = widen(*(const af_u16x8_mem*)(p + 8));
    return;
  }
  const af_u16x16 h = af_load_u16x16_tail(p, n);
  v->lo = widen(AF_LOW_HALF_U16(h));
  v->hi = widen(AF_HIGH_HALF_U16(h));
}

/// af_load16 of 16 bf16 values widened to f32 (exactly: the bits shifted).
AF_INLINE void af_load16_bf16(af_f32x16* v, const uint16_t* p, int64_t n) {
  af_load16_halves(v, p, n, af_widen8_bf16);
}

AF_INLINE void af_store8_f32(float* p, af_f32x8 v, int64_t n) {
  if (n >= 8) {
    *(af_f32x8_mem*)p = v;
  } else if (n > 0) {
    __builtin_ia32_maskstoreps256((af_f32x8*)p, af_lanes_below8(n), v);
  }
}

/// p[0, 16) = *v, or p[0, n) = its first n lanes when n < 16.
AF_INLINE void af_store16(float* p, const af_f32x16* v, int64_t n) {
  af_store8_f32(p, v->lo, n);
  af_store8_f32(p + 8, v->hi, n - 8);
}

/// *s += v's first n lanes (all 16 when n >= 16); the others add +0 even
/// where the tail's zeros made v inf or NaN.
AF_INLINE void af_add_lanes(af_f32x16* s, const af_f32x16* v, int64_t n) {
  if (n >= 16) {
    *s += *v;
    return;
  }
  s->lo += (af_f32x8)((af_i32x8)v->lo & af_lanes_below8(n));
  s->hi += (af_f32x8)((af_i32x8)v->hi & af_lanes_below8(n - 8));
}

// A vector pass's max or min (the one-register form's comment above).
AF_INLINE void af_extreme_lanes8(af_f32x8* m, af_f32x8* p, af_f32x8 x, int64_t n, bool is_max) {
  if (n < 8) {
    const af_i32x8 in = af_lanes_below8(n);
    const af_f32x8 identity = (af_f32x8){} + (is_max ? -__builtin_inff() : __builtin_inff());
    *p += (af_f32x8)((af_i32x8)x & in);
    x = (af_f32x8)(((af_i32x8)x & in) | ((af_i32x8)identity & ~in));
  } else {
    *p += x;
  }
  *m = is_max ? (x > *m ? x : *m) : (x < *m ? x : *m);
}
AF_INLINE void af_extreme_lanes(af_f32x16* m, af_f32x16* p, const af_f32x16* v, int64_t n,
                                bool is_max) {
  af_extreme_lanes8(&m->lo, &p->lo, v->lo, n, is_max);
  af_extreme_lanes8(&m->hi, &p->hi, v->hi, n - 8, is_max);
}

/// Whether the probe sums p[0..3] add up to NaN.
AF_INLINE int af_probe_nan16x4(const af_f32x16* p) {
  const float sum = af_row_sum16x4(p);
  return sum != sum;
}

/// The max or min of the accumulators m[0..3], in the one-register order.
AF_INLINE float af_row_extreme16x4(const af_f32x16* m, bool is_max) {
  const af_f32x8 lo = AF_EXTREME(AF_EXTREME(m[3].lo, m[2].lo), AF_EXTREME(m[1].lo, m[0].lo));
  const af_f32x8 hi = AF_EXTREME(AF_EXTREME(m[3].hi, m[2].hi), AF_EXTREME(m[1].hi, m[0].hi));
  return af_extreme_halves(lo, hi, is_max);
}

// A storing pass's stores. Streaming (`nt`) where p is 32-byte aligned.
typedef long long af_i64x4 __attribute__((vector_size(32)));
typedef long long af_i64x4_mem __attribute__((vector_size(32), aligned(2), may_alias));
AF_INLINE void af_nt_put8_f32(float* p, af_f32x8 v) {
#if defined(__clang__)
  __builtin_nontemporal_store(v, (af_f32x8*)p);
#else
  __builtin_ia32_movntps256(p, v);
#endif
}

/// p[0, 16) = v (streaming when `nt` and aligned), or its first n lanes.
AF_INLINE void af_put16_f32(float* p, af_f32x16 v, int64_t n, bool nt) {
  if (n < 16) {
    af_store16(p, &v, n);
    return;
  }
  if (AF_NT_STORES && nt && ((uintptr_t)p & 31u) == 0) {
    af_nt_put8_f32(p, v.lo);
    af_nt_put8_f32(p + 8, v.hi);
    return;
  }
  *(af_f32x8_mem*)p = v.lo;
  *(af_f32x8_mem*)(p + 8) = v.hi;
}

/// af_f32_to_bf16 of each lane, in its low 16 bits: nearest even by adding
/// 2^15 and taking one back where the low 17 bits are exactly 2^15 (a tie
/// whose upper half is even: one shift per 8 lanes instead of the scalar
/// form's two); a NaN quieted. Prelude.VectorPassStoresRoundLikeHalfH checks
/// it against the scalar function.
AF_INLINE af_i32x8 af_bf16_bits8(af_f32x8 x) {
  typedef uint32_t af_u32x8 __attribute__((vector_size(32)));
  const af_i32x8 u = (af_i32x8)x;
  const af_i32x8 tie = (u & 0x1ffff) == 0x8000;  // -1 there
  const af_i32x8 sel = x != x ? (u | 0x400000) : u + 0x8000 + tie;
  return (af_i32x8)((af_u32x8)sel >> 16);
}
/// 16 lanes rounded to bf16, in order (vpackusdw packs within 128-bit
/// halves; vpermq puts the quarters back in order).
AF_INLINE af_i64x4 af_bf16_pack16(af_f32x8 lo, af_f32x8 hi) {
  const af_i64x4 r = (af_i64x4)__builtin_ia32_packusdw256(af_bf16_bits8(lo), af_bf16_bits8(hi));
  return __builtin_shufflevector(r, r, 0, 2, 1, 3);
}

/// p[0, 16), or its first n, = v rounded to bf16 (ordinary stores).
AF_INLINE void af_put16_bf16(uint16_t* p, af_f32x16 v, int64_t n) {
  if (n >= 16) {
    *(af_i64x4_mem*)p = af_bf16_pack16(v.lo, v.hi);
    return;
  }
  for (int64_t k = 0; k < n; ++k)
    p[k] = af_f32_to_bf16(k < 8 ? v.lo[k] : v.hi[k - 8]);
}

/// p[0, 32) = the 16-bit values a, b: streaming when `nt` and p is
/// 32-byte aligned.
AF_INLINE void af_put32_u16(uint16_t* p, af_i64x4 a, af_i64x4 b, bool nt) {
  if (AF_NT_STORES && nt && ((uintptr_t)p & 31u) == 0) {
#if defined(__clang__)
    __builtin_nontemporal_store(a, (af_i64x4*)p);
    __builtin_nontemporal_store(b, (af_i64x4*)(p + 16));
#else
    __builtin_ia32_movntdq256((af_i64x4*)p, a);
    __builtin_ia32_movntdq256((af_i64x4*)(p + 16), b);
#endif
    return;
  }
  *(af_i64x4_mem*)p = a;
  *(af_i64x4_mem*)(p + 16) = b;
}

/// p[0, 32) = lo, hi rounded to bf16; streaming when `nt` and p is 32-byte
/// aligned.
AF_INLINE void af_put32_bf16(uint16_t* p, af_f32x16 lo, af_f32x16 hi, bool nt) {
  af_put32_u16(p, af_bf16_pack16(lo.lo, lo.hi), af_bf16_pack16(hi.lo, hi.hi), nt);
}
#endif  // AF_LANE_PAIRS
#undef AF_EXTREME

#endif  // AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_LANES_H_

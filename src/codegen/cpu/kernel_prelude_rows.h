// Row reductions over a buffer, embedded after kernel_prelude_math.h (see
// CMakeLists.txt). The Reduction template's row layout reduces a short row
// (short_row_reduce.cpp) by writing the reduced values to a buffer in its
// vector loop and calling one of these on the buffer: 8-lane vector
// accumulators, then a tree over the lanes (3 shuffles and 3 adds). An
// `omp simd reduction` clause instead ends with g++ adding its 16 lane
// partials one by one in order (float addition does not reassociate): ~10
// cycles per reduction and row, as much as the rest of a row of 16.
//
// A buffer holds `n` values and kRowReducePad (8) more writable elements:
// the functions pad it with the identity up to the next whole vector, so
// every load is a whole vector. The `_in` variants read an input row in
// place (the reduced value is an f32 Load: copying it to a buffer would
// become a memcpy call). GNU vector types, no intrinsics or includes: g++
// and clang compile them to AVX/AVX-512 under -march=native and to narrower
// vectors or scalars elsewhere.
#ifndef AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_ROWS_H_
#define AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_ROWS_H_

// 8 lanes (32 bytes): the loop before wrote the buffer with 32- or 64-byte
// stores (g++ stores the f32 values of a 16-bit loop as two 32-byte halves),
// and a load within one store forwards from it; a 64-byte load over two
// 32-byte stores would wait ~20 cycles for them to reach the cache.
typedef float af_f32x8 __attribute__((vector_size(32)));
typedef int32_t af_i32x8 __attribute__((vector_size(32)));
// Unaligned, aliasing views of buffer memory.
typedef float af_f32x8_mem __attribute__((vector_size(32), aligned(4), may_alias));

// Lane i takes lane i ^ k (k = 4, 2, 1: the halves, quarters, ... swapped).
#if defined(__clang__)
#define AF_SWAP_LANES(v, k) \
  __builtin_shufflevector(v, v, 0 ^ k, 1 ^ k, 2 ^ k, 3 ^ k, 4 ^ k, 5 ^ k, 6 ^ k, 7 ^ k)
#else
#define AF_SWAP_LANES(v, k) \
  __builtin_shuffle(v, (af_i32x8){0 ^ k, 1 ^ k, 2 ^ k, 3 ^ k, 4 ^ k, 5 ^ k, 6 ^ k, 7 ^ k})
#endif

/// The sum of *v's 8 lanes by the tree (halves, quarters, pairs).
AF_INLINE float af_lanes_sum8(const af_f32x8* v) {
  af_f32x8 acc = *v;
  acc += AF_SWAP_LANES(acc, 4);
  acc += AF_SWAP_LANES(acc, 2);
  acc += AF_SWAP_LANES(acc, 1);
  return acc[0];
}

/// Sum of the whole vectors in p[0, n): four vector accumulators (consecutive
/// vectors round robin, so a long row is not one chain of dependent adds),
/// added pairwise, then the tree over the lanes. (Vectors go by pointer: by
/// value they would change the ABI without AVX-512, and g++ warns.)
/// Measured against 64 partial sums (eight 8-lane accumulators over runs of
/// 64, the vector pass's order below): mse f32 [64, 1024] 1.2x the time
/// (its loop's 64-byte stores read back by 32-byte loads), softmax_mask bf16
/// [8, 12, 384, 384] 1.05x; with 16-lane loads 1.3x (a 16-bit loop's f32
/// values are stored as 32-byte halves: the 64-byte loads wait for store
/// forwarding).
AF_INLINE float af_row_vector_sum_f32(const float* p, int64_t n) {
  af_f32x8 a0 = {}, a1 = {}, a2 = {}, a3 = {};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 += *(const af_f32x8_mem*)(p + i);
    a1 += *(const af_f32x8_mem*)(p + i + 8);
    a2 += *(const af_f32x8_mem*)(p + i + 16);
    a3 += *(const af_f32x8_mem*)(p + i + 24);
  }
  for (; i + 8 <= n; i += 8)
    a0 += *(const af_f32x8_mem*)(p + i);
  const af_f32x8 acc = (a0 + a1) + (a2 + a3);
  return af_lanes_sum8(&acc);
}

// ---- a short row's pass as 16-lane vectors (vector_pass.cpp) -----------------
// The vector passes are compiled only where 16 lanes are one register: built
// for AVX2 (-march=haswell, on this Zen 5) they took 1.4-2.2x the buffered
// loops' time (rmsnorm f32, bert_embeddings; session 35), so there each
// such pass keeps its loop (`#if AF_VECTOR_PASS ... #else ... #endif`).
// Its lambdas are inlined wherever they are called: a call would keep the
// accumulators they update in memory.
#define AF_LAMBDA_INLINE __attribute__((always_inline))
#if defined(__AVX512F__)
#define AF_VECTOR_PASS 1
#else
#define AF_VECTOR_PASS 0
#endif

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
AF_INLINE void af_load16_bf16(af_f32x16* v, const uint16_t* p, int64_t n) {
  af_u16x16 h = {};
  if (n >= 16) {
    h = *(const af_u16x16_mem*)p;
  } else {
#if defined(AF_MASKED_U16X16)
    // (clang's builtin takes a vector pointer, g++'s a short pointer.)
#if defined(__clang__)
    const af_i16x16* from = (const af_i16x16*)p;
#else
    const short* from = (const short*)p;
#endif
    h = (af_u16x16)__builtin_ia32_loaddquhi256_mask(from, (af_i16x16){}, AF_TAIL_MASK(n));
#else
    for (int64_t k = 0; k < n; ++k)
      h[k] = p[k];
#endif
  }
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

// ---- the column layout's sums as 16-lane vectors (column_vectors.cpp) -------
/// Lanes [c, c + n) of a tile starting at t0 (V vectors; n - 16 (V - 1) may
/// be below 16: the last vector's tail), rows [r0, r1): lanes(r, c + 16 k,
/// lanes left, s[k]) adds vector k's S values into s[k][0, S), kept in
/// registers; sums[j] (tile array j, lane t at sums[j][t - t0]) before and
/// after.
template <int S, int V, class F>
AF_INLINE void af_column_strip(float* const* sums, int64_t t0, int64_t c, int64_t n, int64_t r0,
                               int64_t r1, F& lanes) {
  af_f32x16 s[V][S];
#pragma GCC unroll 16
  for (int k = 0; k < V; ++k)
#pragma GCC unroll 16
    for (int j = 0; j < S; ++j)
      af_load16(&s[k][j], sums[j] + (c - t0) + 16 * k, n - 16 * k);
  for (int64_t r = r0; r < r1; ++r)
#pragma GCC unroll 16
    for (int k = 0; k < V; ++k)
      lanes(r, c + 16 * k, n - 16 * k, s[k]);
#pragma GCC unroll 16
  for (int k = 0; k < V; ++k)
#pragma GCC unroll 16
    for (int j = 0; j < S; ++j)
      af_store16(sums[j] + (c - t0) + 16 * k, &s[k][j], n - 16 * k);
}
/// The tile's lanes [t0, t1) in strips of 16 vectors for one sum, else of
/// 8 (registers), then one by one. (A strip reads a row's 16 V lanes, then
/// the next row's: f32 rows from memory as fast as whole rows at 512 bytes
/// or more per row, bf16 rows not at 256 or 512: column_vectors.cpp.)
template <int S, class F>
AF_INLINE void af_column_rows(float* const* sums, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                              F& lanes) {
  int64_t c = t0;
  constexpr int V = S == 1 ? 16 : 8;
  for (; c + 16 * V <= t1; c += 16 * V)
    af_column_strip<S, V>(sums, t0, c, 16 * V, r0, r1, lanes);
  for (; c < t1; c += 16)
    af_column_strip<S, 1>(sums, t0, c, t1 - c, r0, r1, lanes);
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

/// Sum of the buffer p[0, n); writes zeros to p[n, n + 8) so that the last
/// partial vector is a whole one. The empty asm hides where p points, so
/// the sum reads the values the loop stored: without it g++ may keep a
/// static short row's buffer in registers and contract the loop's x * y
/// with the sum's add into an FMA, differently in the variants of one pass
/// (the streaming key's and the ordinary one gave different roundings).
AF_INLINE float af_row_sum_f32(float* p, int64_t n) {
  *(af_f32x8_mem*)(p + n) = (af_f32x8){};
  __asm__("" : "+r"(p));
  return af_row_vector_sum_f32(p, (n + 7) / 8 * 8);
}

/// Sum of p[0, n) read in place (an input row): the elements after the last
/// whole vector are added one by one.
AF_INLINE float af_row_sum_f32_in(const float* p, int64_t n) {
  const int64_t whole = n / 8 * 8;
  float tail = 0.0f;
  for (int64_t i = whole; i < n; ++i)
    tail += p[i];
  return af_row_vector_sum_f32(p, whole) + tail;
}

// The clause's step: x replaces a when it is larger (max) or smaller (min);
// `is_max` comes from the function using it.
#define AF_EXTREME(x, a) (is_max ? ((x) > (a) ? (x) : (a)) : ((x) < (a) ? (x) : (a)))

/// The end of a row max / min: the four vector accumulators a[0..3]
/// pairwise, the tree over the lanes, then the n2 elements at `tail` one by
/// one; *saw_nan = `saw` or a NaN among them.
AF_INLINE float af_row_extreme_finish(const af_f32x8* a, const float* tail, int64_t n2, int saw,
                                      int* saw_nan, bool is_max) {
  // Pairwise: a NaN-free operand either way, so the order only picks
  // between equal values (+0 and -0).
  af_f32x8 acc = AF_EXTREME(AF_EXTREME(a[3], a[2]), AF_EXTREME(a[1], a[0]));
  acc = AF_EXTREME(AF_SWAP_LANES(acc, 4), acc);
  acc = AF_EXTREME(AF_SWAP_LANES(acc, 2), acc);
  acc = AF_EXTREME(AF_SWAP_LANES(acc, 1), acc);
  float result = acc[0];
  for (int64_t j = 0; j < n2; ++j) {
    result = AF_EXTREME(tail[j], result);
    saw |= tail[j] != tail[j];
  }
  *saw_nan = saw;
  return result;
}

/// Max (`is_max`) or min of the whole vectors of p[0, n) and of the n2
/// elements after them (read one by one) over the non-NaN values (-inf /
/// +inf when none), as the clause's `x > a ? x : a` does, and *saw_nan =
/// whether any value was NaN. This one tests every vector for NaN
/// (a compare and a mask or per 8 lanes); af_row_extreme_f32 runs it only
/// for a row whose probe sum is NaN.
AF_INLINE float af_row_extreme_checked_f32(const float* p, int64_t n, int64_t n2, int* saw_nan,
                                           bool is_max) {
  const float identity = is_max ? -__builtin_inff() : __builtin_inff();
  af_f32x8 a[4];
  a[0] = a[1] = a[2] = a[3] = (af_f32x8){} + identity;
  af_i32x8 nan = {};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      const af_f32x8 x = *(const af_f32x8_mem*)(p + i + 8 * k);
      a[k] = AF_EXTREME(x, a[k]);  // vmaxps, vminps
      nan |= x != x;
    }
  }
  for (; i + 8 <= n; i += 8) {
    const af_f32x8 x = *(const af_f32x8_mem*)(p + i);
    a[0] = AF_EXTREME(x, a[0]);
    nan |= x != x;
  }
  nan |= AF_SWAP_LANES(nan, 4);
  nan |= AF_SWAP_LANES(nan, 2);
  nan |= AF_SWAP_LANES(nan, 1);
  return af_row_extreme_finish(a, p + i, n2, nan[0] != 0, saw_nan, is_max);
}

/// As af_row_extreme_checked_f32, with one add per 8 lanes instead of the
/// NaN test: the whole vectors are also summed into a probe, which is NaN
/// if any of them is NaN (and only otherwise when +inf and -inf or
/// overflowing sums of both signs meet); then, and only then, the row is
/// reduced again with the test. The max and NaN flag are exactly the
/// checked function's; the vector loop has ~3.5 instructions per 8 lanes
/// instead of ~5 (a plain row max in cache: 0.81-0.86x the time).
AF_INLINE float af_row_extreme_f32(const float* p, int64_t n, int64_t n2, int* saw_nan,
                                   bool is_max) {
  const float identity = is_max ? -__builtin_inff() : __builtin_inff();
  af_f32x8 a[4];
  a[0] = a[1] = a[2] = a[3] = (af_f32x8){} + identity;
  af_f32x8 s[4] = {};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      const af_f32x8 x = *(const af_f32x8_mem*)(p + i + 8 * k);
      a[k] = AF_EXTREME(x, a[k]);
      s[k] += x;
    }
  }
  for (; i + 8 <= n; i += 8) {
    const af_f32x8 x = *(const af_f32x8_mem*)(p + i);
    a[0] = AF_EXTREME(x, a[0]);
    s[0] += x;
  }
  const af_f32x8 probe = (s[0] + s[1]) + (s[2] + s[3]);
  const float probe_sum = af_lanes_sum8(&probe);
  if (__builtin_expect(probe_sum != probe_sum, 0))
    return af_row_extreme_checked_f32(p, n, n2, saw_nan, is_max);
  return af_row_extreme_finish(a, p + i, n2, 0, saw_nan, is_max);
}

/// The max (`is_max`) or min of a vector pass's accumulators m[0..3]
/// (af_extreme_lanes): pairwise, then the tree over the lanes (NaN-free, so
/// the order only picks between +0 and -0).
AF_INLINE float af_row_extreme16x4(const af_f32x16* m, bool is_max) {
  const af_f32x16 w = AF_EXTREME(AF_EXTREME(m[3], m[2]), AF_EXTREME(m[1], m[0]));
  const af_f32x8 lo = AF_LOW_HALF16(w), hi = AF_HIGH_HALF16(w);
  af_f32x8 acc = AF_EXTREME(hi, lo);
  acc = AF_EXTREME(AF_SWAP_LANES(acc, 4), acc);
  acc = AF_EXTREME(AF_SWAP_LANES(acc, 2), acc);
  acc = AF_EXTREME(AF_SWAP_LANES(acc, 1), acc);
  return acc[0];
}
#undef AF_EXTREME

/// Max / min of the buffer p[0, n); writes the identity to p[n, n + 8).
AF_INLINE float af_row_max_f32(float* p, int64_t n, int* saw_nan) {
  *(af_f32x8_mem*)(p + n) = (af_f32x8){} - __builtin_inff();
  return af_row_extreme_f32(p, (n + 7) / 8 * 8, 0, saw_nan, true);
}
AF_INLINE float af_row_min_f32(float* p, int64_t n, int* saw_nan) {
  *(af_f32x8_mem*)(p + n) = (af_f32x8){} + __builtin_inff();
  return af_row_extreme_f32(p, (n + 7) / 8 * 8, 0, saw_nan, false);
}
/// Max / min of p[0, n) read in place.
AF_INLINE float af_row_max_f32_in(const float* p, int64_t n, int* saw_nan) {
  return af_row_extreme_f32(p, n / 8 * 8, n % 8, saw_nan, true);
}
AF_INLINE float af_row_min_f32_in(const float* p, int64_t n, int* saw_nan) {
  return af_row_extreme_f32(p, n / 8 * 8, n % 8, saw_nan, false);
}

// ---- softmax's exp over a row buffer -----------------------------------------
// af_exp_nonpos_row(p, n) replaces p[0, n) (each x <= 64 or NaN) by
// af_exp_nonpos(x), bit for bit: a short row's pass writes the exponent to
// its buffer and this runs after the loop (short_row_reduce.cpp). With
// AVX-512 it works 16 lanes at a time with vmaxps for the lower clamp and
// vscalefps for 2^n: af_exp_nonpos's `x < -104` selects (a compare and two
// blends) exist because its final multiply into a subnormal or zero result
// takes a microcode assist; vscalefps rounds the same y * 2^n once at full
// speed. The same n (the shifter), r and polynomial as af_exp_core with
// k = 1, and (y * 2^-25) * 2^(n + 25) = y * 2^n exactly, so the results
// are af_exp_nonpos's (Prelude.ExpOfNonPositiveIsExp). Measured on Zen 5
// (16K floats in the L1/L2, one thread): 0.086 ns per element against
// af_exp_nonpos's 0.097 for x in [-20, 0], 0.086 against 0.29 for x in
// [-100, 0]; softmax_mask f32 [8, 12, 384, 384] 0.263 -> 0.253 ns per
// element. Elsewhere (no AVX-512, or a compiler without the builtins) the
// scalar function in a vector loop.
#if defined(__AVX512F__) && defined(__has_builtin)
#if __has_builtin(__builtin_ia32_scalefps512_mask) && __has_builtin(__builtin_ia32_maxps512_mask)
#define AF_MAX_PS512(a, b) __builtin_ia32_maxps512_mask(a, b, b, (unsigned short)-1, 4)
#elif __has_builtin(__builtin_ia32_scalefps512_mask) && __has_builtin(__builtin_ia32_maxps512)
#define AF_MAX_PS512(a, b) __builtin_ia32_maxps512(a, b, 4)
#endif
#endif

#if defined(AF_MAX_PS512)
#define AF_EXP_ROW_X16 1

/// af_exp_nonpos of 16 lanes (see above).
AF_INLINE af_f32x16 af_exp_nonpos_x16(af_f32x16 x) {
  // max(-104, x) is x when x is NaN (the second operand's).
  const af_f32x16 xc = AF_MAX_PS512((af_f32x16){} - 104.0f, x);
  const af_f32x16 shift = (af_f32x16){} + 12582912.0f;  // 1.5 * 2^23: b = 0
  const af_f32x16 t = xc * AF_EXP_LOG2E + shift;
  const af_f32x16 n = t - shift;
  af_f32x16 r = xc - n * AF_EXP_LN2_HI;
  r = r - n * AF_EXP_LN2_LO;
  af_f32x16 p = r * AF_EXP_P4 + AF_EXP_P3;
  p = p * r + AF_EXP_P2;
  p = p * r + AF_EXP_P1;
  p = p * r + AF_EXP_P0;
  const af_f32x16 y = (p * r + 1.0f) * r + 1.0f;
  return __builtin_ia32_scalefps512_mask(y, n, y, (unsigned short)-1, 4);
}
#else
#define AF_EXP_ROW_X16 0
#endif

AF_INLINE void af_exp_nonpos_row(float* p, int64_t n) {
  int64_t i = 0;
#if AF_EXP_ROW_X16
  for (; i + 16 <= n; i += 16)
    *(af_f32x16_mem*)(p + i) = af_exp_nonpos_x16(*(const af_f32x16_mem*)(p + i));
#endif
#pragma omp simd
  for (int64_t j = i; j < n; ++j)
    p[j] = af_exp_nonpos(p[j]);
}

// ---- a vector pass's stores (vector_pass.cpp) --------------------------------
// A static short row's storing pass computes 16 lanes at a time and stores
// them here: no chunk buffer between the values and the output. `nt`: the
// store streams under key 1; a vector whose address is not 64-byte aligned
// is stored by ordinary stores.

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
/// ordinary stores).
AF_INLINE void af_put16_bf16(uint16_t* p, af_f32x16 v, int64_t n) {
#if AF_BF16_CVT
  if (n >= 16 && __builtin_ia32_fpclassps512_mask(v, 0x20, 0xffff) == 0) {
    const af_nt_vec r = AF_CVTNE2PS2BF16(v, v);
    __builtin_memcpy(p, &r, 32);
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
#endif

#endif  // AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_ROWS_H_

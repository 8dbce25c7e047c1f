// The vector code's ops on 16 lanes (kernel_prelude_lanes.h's af_f32x16),
// embedded right after that file (see CMakeLists.txt): the elementwise ops
// the generated code names (vector passes, lane loops, column vectors), the
// column layout's sums and softmax's exp over a row buffer.
#ifndef AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_LANE_OPS_H_
#define AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_LANE_OPS_H_

// ---- elementwise ops on 16 lanes (vector passes, column vectors) -----------
// The names the generated code calls on floats (kernel_prelude_math.h), for
// af_f32x16 operands, with the same selects lane by lane: NaN and signed
// zeros come out as the scalar functions give them (vector_arithmetic in
// vector_pass.cpp lists the ops). A float operand is broadcast.
#if AF_VECTOR_PASS
template <class V>
AF_INLINE V af_lanes_abs(V x) {
  typedef decltype(x < x) M;  // the same-size integer vector
  return (V)((M)x & 0x7fffffff);
}
template <class V>
AF_INLINE V af_lanes_relu(V x) {
  const V z = {};
  return x <= z ? z : x;  // NaN <= 0 is false: a NaN stays; -0 gives +0
}
template <class V>
AF_INLINE V af_lanes_max(V a, V b) {
  return a != a ? a : (a > b ? a : b);
}
template <class V>
AF_INLINE V af_lanes_min(V a, V b) {
  return a != a ? a : (a < b ? a : b);
}
// A clamp against a bound k that is not NaN (kernel_prelude_math.h's
// af_fmax_vk & co.): one compare and one blend.
template <class V>
AF_INLINE V af_lanes_max_vk(V a, V k) {
  return k >= a ? k : a;
}
template <class V>
AF_INLINE V af_lanes_max_kv(V k, V a) {
  return k > a ? k : a;
}
template <class V>
AF_INLINE V af_lanes_min_vk(V a, V k) {
  return k <= a ? k : a;
}
template <class V>
AF_INLINE V af_lanes_min_kv(V k, V a) {
  return k < a ? k : a;
}
template <class V>
AF_INLINE V af_lanes_neg_abs(V x) {
  typedef decltype(x < x) M;
  return (V)((M)x | (-2147483647 - 1));  // the sign bit set, as af_neg_abs
}
/// af_sigmoid_from_exp's select and division, lane by lane (its bits).
template <class V>
AF_INLINE V af_lanes_sigmoid_from_exp(V x, V t) {
  const V one = V{} + 1.0f;
  return (x < V{} ? t : one) / (one + t);
}
#if AF_LANE_PAIRS
#define AF_LANES1(f, x) (af_f32x16{f((x).lo), f((x).hi)})
#define AF_LANES2(f, a, b) (af_f32x16{f((a).lo, (b).lo), f((a).hi, (b).hi)})
// (s - 0, not 0 + s: -0 stays -0.)
#define AF_LANES_SPLAT(s) (af_f32x16{(s) - (af_f32x8){}, (s) - (af_f32x8){}})
AF_INLINE af_f32x8 af_lanes_sqrt(af_f32x8 x) {
  return __builtin_ia32_sqrtps256(x);
}
#else
#define AF_LANES1(f, x) f(x)
#define AF_LANES2(f, a, b) f(a, b)
#define AF_LANES_SPLAT(s) ((s) - (af_f32x16){})
// vsqrtps: the builtin's name and form differ between g++ and clang.
#if defined(__has_builtin)
#if defined(__clang__) && __has_builtin(__builtin_ia32_sqrtps512)
#define AF_SQRT_PS512(x) __builtin_ia32_sqrtps512(x, 4)
#elif !defined(__clang__) && __has_builtin(__builtin_ia32_sqrtps512_mask)
#define AF_SQRT_PS512(x) __builtin_ia32_sqrtps512_mask(x, x, (unsigned short)0xffff, 4)
#endif
#endif
AF_INLINE af_f32x16 af_lanes_sqrt(af_f32x16 x) {
#if defined(AF_SQRT_PS512)
  return AF_SQRT_PS512(x);
#else
  af_f32x16 r;
  for (int k = 0; k < 16; ++k)
    r[k] = __builtin_sqrtf(x[k]);
  return r;
#endif
}
#endif
AF_INLINE af_f32x16 af_abs(af_f32x16 x) {
  return AF_LANES1(af_lanes_abs, x);
}
AF_INLINE af_f32x16 af_frelu(af_f32x16 x) {
  return AF_LANES1(af_lanes_relu, x);
}
AF_INLINE af_f32x16 af_sqrt(af_f32x16 x) {
  return AF_LANES1(af_lanes_sqrt, x);
}
AF_INLINE af_f32x16 af_neg_abs(af_f32x16 x) {
  return AF_LANES1(af_lanes_neg_abs, x);
}
/// sigmoid(x) from t = e^-|x| (a chunk sigmoid's buffer, inner_loop.cpp).
AF_INLINE af_f32x16 af_sigmoid_from_exp(af_f32x16 x, af_f32x16 t) {
  return AF_LANES2(af_lanes_sigmoid_from_exp, x, t);
}
#define AF_LANES_BINARY(name, impl)                    \
  AF_INLINE af_f32x16 name(af_f32x16 a, af_f32x16 b) { \
    return AF_LANES2(impl, a, b);                      \
  }                                                    \
  AF_INLINE af_f32x16 name(af_f32x16 a, float b) {     \
    return name(a, AF_LANES_SPLAT(b));                 \
  }                                                    \
  AF_INLINE af_f32x16 name(float a, af_f32x16 b) {     \
    return name(AF_LANES_SPLAT(a), b);                 \
  }
AF_LANES_BINARY(af_fmax, af_lanes_max)
AF_LANES_BINARY(af_fmin, af_lanes_min)
AF_LANES_BINARY(af_fmax_vk, af_lanes_max_vk)
AF_LANES_BINARY(af_fmax_kv, af_lanes_max_kv)
AF_LANES_BINARY(af_fmin_vk, af_lanes_min_vk)
AF_LANES_BINARY(af_fmin_kv, af_lanes_min_kv)
#undef AF_LANES_BINARY
#undef AF_LANES1
#undef AF_LANES2
#undef AF_LANES_SPLAT
#endif  // AF_VECTOR_PASS

#if AF_BF16_CVT && AF_LANE_PAIRS
#error "lane pairs assume bf16 chunk buffers of bf16 (lane_loops.cpp)"
#endif

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
  // (32 registers with AVX-512, 16 with AVX2, each vector two of them.)
  constexpr int V = AF_LANE_PAIRS ? (S == 1 ? 4 : S == 2 ? 2 : 1) : (S == 1 ? 16 : 8);
  for (; c + 16 * V <= t1; c += 16 * V)
    af_column_strip<S, V>(sums, t0, c, 16 * V, r0, r1, lanes);
  for (; c < t1; c += 16)
    af_column_strip<S, 1>(sums, t0, c, t1 - c, r0, r1, lanes);
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

#if defined(AF_MAX_PS512) && !AF_LANE_PAIRS
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

#endif  // AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_LANE_OPS_H_

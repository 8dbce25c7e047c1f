// The float math of the kernel prelude (elementwise ops in f32 and f64, f32
// vector math), embedded as text right after kernel_prelude.h (see
// CMakeLists.txt), whose macros and helpers (AF_INLINE, af_self, the bit
// casts) it uses: it includes nothing, so it is not a standalone header.
#ifndef AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_MATH_H_
#define AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_MATH_H_

// ---- Float elementwise ops (f32 and f64 overloads) -------------------------
// NaN behaviour follows the reference (graph/ops.h): max/min propagate NaN,
// relu(NaN) and sign(NaN) are NaN, round is half-to-even (rint in the
// default rounding mode), mod is floor-mod with a zero taking the divisor's
// sign.
AF_INLINE float af_abs(float x) {
  return __builtin_fabsf(x);
}
AF_INLINE double af_abs(double x) {
  return __builtin_fabs(x);
}
AF_INLINE float af_sqrt(float x) {
  return __builtin_sqrtf(x);
}
AF_INLINE double af_sqrt(double x) {
  return __builtin_sqrt(x);
}
AF_INLINE float af_rsqrt(float x) {
  return 1.0f / __builtin_sqrtf(x);
}
AF_INLINE double af_rsqrt(double x) {
  return 1.0 / __builtin_sqrt(x);
}
// floor and ceil through rint: g++ does not vectorize floorf/ceilf without
// -fno-trapping-math, but it does rintf. The result has the sign of x
// (floor(-0.0) = -0.0, ceil(-0.5) = -0.0).
AF_INLINE float af_floor(float x) {
  const float r = __builtin_rintf(x);
  return __builtin_copysignf(af_sel(r > x, r - 1.0f, r), x);
}
AF_INLINE double af_floor(double x) {
  const double r = __builtin_rint(x);
  return __builtin_copysign(af_sel(r > x, r - 1.0, r), x);
}
AF_INLINE float af_ceil(float x) {
  const float r = __builtin_rintf(x);
  return __builtin_copysignf(af_sel(r < x, r + 1.0f, r), x);
}
AF_INLINE double af_ceil(double x) {
  const double r = __builtin_rint(x);
  return __builtin_copysign(af_sel(r < x, r + 1.0, r), x);
}
AF_INLINE float af_round(float x) {
  return __builtin_rintf(x);
}
AF_INLINE double af_round(double x) {
  return __builtin_rint(x);
}
AF_INLINE bool af_isnan(float x) {
  return x != x;
}
AF_INLINE bool af_isnan(double x) {
  return x != x;
}
AF_INLINE bool af_isinf(float x) {
  return __builtin_fabsf(x) == __builtin_inff();
}
AF_INLINE bool af_isinf(double x) {
  return __builtin_fabs(x) == __builtin_inf();
}
template <class F>
AF_INLINE F af_frelu(F x) {
  return af_pick(x <= 0, (F)0, x);  // NaN <= 0 is false: a NaN stays; -0 gives +0
}
template <class F>
AF_INLINE F af_fsign(F x) {
  return af_sel(x > 0, (F)1, af_sel(x < 0, (F)-1, af_sel(x != x, x, (F)0)));
}
// NaN if either is: a when a is NaN, else b (a > b is false), the same NaN
// as the reference's a + b for quiet NaNs; equal values (+0, -0) give b.
// Two selects, not one of an OR of the compares: g++ 12 turns the OR's
// masks into three byte blends, an AND and an OR on AVX2 (7 instructions
// against 4; on AVX-512 the first select becomes vmaxps); chain30 f32
// [1024, 1024] 0.93x. (af_sel's NaN test of both and a + b: five more.)
template <class F>
AF_INLINE F af_fmax(F a, F b) {
  return af_pick(a != a, a, af_pick(a > b, a, b));
}
template <class F>
AF_INLINE F af_fmin(F a, F b) {
  return af_pick(a != a, a, af_pick(a < b, a, b));
}
// The same against a constant k that is not NaN (a clamp's bound), one
// compare and one blend: af_fmax(a, k) is k >= a ? k : a (a NaN a compares
// false and stays; equal values give k, the second operand) and af_fmax(k,
// a) is k > a ? k : a (equal: a). Min likewise.
template <class F>
AF_INLINE F af_fmax_vk(F a, F k) {
  return af_pick(k >= a, k, a);
}
template <class F>
AF_INLINE F af_fmax_kv(F k, F a) {
  return af_pick(k > a, k, a);
}
template <class F>
AF_INLINE F af_fmin_vk(F a, F k) {
  return af_pick(k <= a, k, a);
}
template <class F>
AF_INLINE F af_fmin_kv(F k, F a) {
  return af_pick(k < a, k, a);
}
AF_INLINE float af_fmod(float a, float b) {
  const float r = __builtin_fmodf(a, b);
  if (r == 0) return __builtin_copysignf(0.0f, b);
  return (r < 0) != (b < 0) ? r + b : r;
}
AF_INLINE double af_fmod(double a, double b) {
  const double r = __builtin_fmod(a, b);
  if (r == 0) return __builtin_copysign(0.0, b);
  return (r < 0) != (b < 0) ? r + b : r;
}
AF_INLINE float af_pow(float a, float b) {
  return __builtin_powf(a, b);
}
AF_INLINE double af_pow(double a, double b) {
  return __builtin_pow(a, b);
}

// f64 transcendental functions call libm (scalar; f64 kernels are rare).
AF_INLINE double af_exp(double x) {
  return __builtin_exp(x);
}
AF_INLINE double af_log(double x) {
  return __builtin_log(x);
}
AF_INLINE double af_sin(double x) {
  return __builtin_sin(x);
}
AF_INLINE double af_cos(double x) {
  return __builtin_cos(x);
}
AF_INLINE double af_tanh(double x) {
  return __builtin_tanh(x);
}
AF_INLINE double af_erf(double x) {
  return __builtin_erf(x);
}
AF_INLINE double af_sigmoid(double x) {
  return 1.0 / (1.0 + __builtin_exp(-x));
}

// ---- f32 vector math -------------------------------------------------------
// Own inline implementations: branch-free, so g++ and clang vectorize them
// in `#pragma omp simd` loops (g++ does not vectorize expf & co. without
// -ffast-math), no libmvec (-lmvec) dependency, the same results under both
// compilers. Accuracy against glibc over all 2^32 floats (exp, log) or every
// 7th bit pattern (the rest; both include denormals, huge |x|, inf, NaN):
// exp, log, sin, cos <= 1 ulp; tanh, erf <= 2 ulp (glibc's tanhf and erff
// are not correctly rounded either); sigmoid <= 2 ulp of the exact value
// (session 18: from e^-|x|; the test allows 4).
// Throughput measured on this project's machine (1M floats in L3, 1 thread,
// ns/element, g++ 12 -O3 -march=native; clang 14 in parentheses):
//            exp   log   tanh  erf   sin   cos   sigmoid
//   ours     0.19  0.34  0.39  0.43  1.37  1.38  0.22   (clang: 0.17 0.28 0.30 0.38 0.85 0.86 0.23)
//   libmvec  0.21  0.21  0.20  0.34  0.20  0.21  0.21   (clang does not call it: 1.5-8.6)
//   (libmvec's accuracy: up to 3-4 ulp for exp, log, tanh, erf; 2 for sin, cos.)
//   (first versions of tanh/erf in double: 0.61 / 0.79, <= 1 ulp.)
//   (session 33, Zen 5, 16K floats in the L1: erf 0.320 -> 0.232 without
//   its exp; see af_erf.)
// Decision: our own code everywhere: portable, more accurate, no link
// dependency. exp and sigmoid (softmax, SiLU) match libmvec; tanh/erf (GELU)
// are 1.3-2x slower than libmvec under g++ (against a memory-bound rate of
// ~0.15-0.3 ns/element for f32 in+out on 2 cores); sin/cos evaluate in
// double with an exact large-argument reduction on every lane (RoPE feeds
// them positions in the thousands), hence 6x.
// exp: n = round(x / ln2), r = x - n*ln2 (Cody-Waite, two parts), a
// degree-6 polynomial for e^r, times 2^n in two steps (a subnormal result
// rounds once; x > 88.73 overflows to inf, x < -103.98 gives 0). The first
// step adds n1 to y's exponent field instead of multiplying by 2^n1 (the
// same value: y * 2^n1 is normal, y in [0.7, 1.5) and n1 in [-75, 64]),
// and 1 + r + r^2 p is two FMAs, 1 + r (1 + r p): 26 vector instructions
// instead of 28, 0.54 -> 0.49 ns per element on an AVX2 Zen 3 (both within
// 1 ulp of glibc over all 2^32 floats). Session 12: 1 + r + r^2 P(r) with
// P of degree 4 fitted to e^r's relative error on [-ln2/2, ln2/2] (3.3e-9,
// a thirtieth of an ulp; Cephes' P of degree 5 took one FMA more): still
// within 1 ulp of glibc over all 2^32 floats (10.64 M results 1 ulp off,
// against 10.24 M).
// Session 17: n comes from a shifter, t = x / ln2 + (1.5 * 2^23 + b) (one
// FMA: t is an integer below 2^24, so its low mantissa bits are n + b), and
// 2^n is applied as y * 2^(n + b - 127) * 2^(127 - b): the first factor is
// t's bits shifted into the exponent field, a normal power of two for the
// caller's range of n, and the product with y (in [0.7, 1.5)) is exact and
// normal, so the last multiply rounds once (subnormal results too). That is
// 3 vector instructions after the polynomial instead of 8 (rint, convert,
// two exponent adds and the split of n), and a NaN stays NaN through the
// multiplies. softmax_mask f32 [1, 12, 384, 384] one thread on an AVX-512
// Xeon: see docs/benchmarks.md, session 17.
// af_exp_scaled is e^xc for xc with n = round(xc / ln2) in [2 - b, 254 - b]
// (b = shift - 12582912; y * 2^(n + b - 127) is then normal), or NaN; post
// = 2^(127 - b). af_exp_core is y * k * 2^(n + b - 127) for a constant power
// of two k: k scales the polynomial's coefficients at compile time, which
// is exact (nothing in it is near the subnormals), so y * k costs no
// multiply; with k = post, (y * post) * 2^(n + b - 127) rounds once, as
// (y * 2^(n + b - 127)) * post does: the same bits, one vector instruction
// fewer (af_exp_nonpos: softmax's and sigmoid's exp).
// exp's constants, shared with its 16-lane row form (kernel_prelude_rows.h):
// 1 / ln2, ln2 in two parts (Cody-Waite), P(r) from the highest degree.
#define AF_EXP_LOG2E 1.44269504088896341f
#define AF_EXP_LN2_HI 0.693359375f
#define AF_EXP_LN2_LO (-2.12194440e-4f)
#define AF_EXP_P4 1.3813144760e-3f
#define AF_EXP_P3 8.3694187924e-3f
#define AF_EXP_P2 4.1668456048e-2f
#define AF_EXP_P1 1.6666515172e-1f
#define AF_EXP_P0 4.9999994040e-1f
AF_INLINE float af_exp_core(float xc, float shift, float k) {
  const float t = xc * AF_EXP_LOG2E + shift;
  const float n = t - shift;
  float r = xc - n * AF_EXP_LN2_HI;
  r = r - n * AF_EXP_LN2_LO;
  float p = AF_EXP_P4 * k;
  p = p * r + AF_EXP_P3 * k;
  p = p * r + AF_EXP_P2 * k;
  p = p * r + AF_EXP_P1 * k;
  p = p * r + AF_EXP_P0 * k;
  const float y = (p * r + k) * r + k;
  return y * af_u2f(af_f2u(t) << 23);
}
AF_INLINE float af_exp_scaled(float xc, float shift, float post) {
  return af_exp_core(xc, shift, 1.0f) * post;
}
// Shifters (1.5 * 2^23 + b) and their post factors 2^(127 - b): b = 152
// for xc in [-104, 70] (n in [-150, 101]); b = 126 for xc in [0, 89] (n up
// to 128: y * 2^127 is finite, times 2 overflows to inf as it should);
// b = 127 (no post factor) for |xc| <= 86 (|n| <= 124).
#define AF_EXP_SHIFT_LOW 12583064.0f   /* b = 152 */
#define AF_EXP_POST_LOW 2.98023224e-8f /* 2^-25 */
#define AF_EXP_SHIFT_HIGH 12583038.0f  /* b = 126 */
#define AF_EXP_SHIFT_MID 12583039.0f   /* b = 127 */
// e^x is 0 below -104 by a select, not by the multiplies: an underflow there
// costs a microcode assist per vector (softmax over rows masked with -10000:
// 2.3x slower). The result is the same (e^-104 < 2^-150 rounds to 0).
AF_INLINE float af_exp(float x) {
  const bool zero = x < -104.0f;
  const bool low = x < 0.0f;
  const float xc = af_self(zero, 0.0f, af_self(x > 89.0f, 89.0f, x));
  const float e = af_exp_scaled(xc, af_self(low, AF_EXP_SHIFT_LOW, AF_EXP_SHIFT_HIGH),
                                af_self(low, AF_EXP_POST_LOW, 2.0f));
  return af_self(zero, 0.0f, e);
}
/// e^x for an x the code generator proved <= 0 or NaN (softmax's x -
/// max(x)): no upper clamp and one scaling, the same results as af_exp for
/// every x <= 64 (a contracted recomputation of x may exceed the max by an
/// ulp, so x is not always <= 0).
AF_INLINE float af_exp_nonpos(float x) {
  const bool zero = x < -104.0f;
  const float e = af_exp_core(af_self(zero, 0.0f, x), AF_EXP_SHIFT_LOW, AF_EXP_POST_LOW);
  return af_self(zero, 0.0f, e);
}

// log: x = 2^e * m with m in [sqrt(1/2), sqrt(2)), Cephes' polynomial for
// log(m) and e*ln2 in two parts; subnormals are scaled by 2^23 first.
AF_INLINE float af_log(float x) {
  const uint32_t ux = af_f2u(x);
  const bool den = ux < 0x00800000u;
  const float xs = x * af_self(den, 8388608.0f, 1.0f);
  const uint32_t u = af_f2u(xs);
  int32_t e = (int32_t)((u >> 23) & 0xffu) - (den ? 149 : 126);
  const float m = af_u2f((u & 0x007fffffu) | 0x3f000000u);
  const bool lt = m < 0.707106781186547524f;
  e = lt ? e - 1 : e;
  const float f = m * af_self(lt, 2.0f, 1.0f) - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  const float fe = (float)e;
  float y = f * z * p;
  y += -2.12194440e-4f * fe;
  y += -0.5f * z;
  float res = f + y;
  res += 0.693359375f * fe;
  res = af_self(x == 0, -__builtin_inff(), res);
  res = af_self(x < 0, __builtin_nanf(""), res);
  res = af_self(x == __builtin_inff(), x, res);
  return af_self(x != x, x, res);
}

// exp(y) in double for |y| <= 700, relative error < 1e-12.
// tanh: |x| < 0.55: x + x^3 * Q(x^2) (Chebyshev fit of tanh(x)/x, relative
// error 1e-9); else 1 - 2 / (exp(2|x|) + 1), which has no cancellation
// there (the result is >= 0.5); |x| >= 10 rounds to 1.
AF_INLINE float af_tanh(float x) {
  const float ax = __builtin_fabsf(x);
  const float u = x * x;
  float q = -0.00623363348795f;
  q = q * u + 0.0210382148063f;
  q = q * u - 0.0538423192468f;
  q = q * u + 0.133324565364f;
  q = q * u - 0.333333107977f;
  const float small = x + x * (u * q);
  // exp of [0, 20] (a NaN x gives 20 here): no clamps (tanh over 4096
  // floats in L1 1.16 -> 0.87 ns per element on an AVX2 Zen 3).
  const float e = af_exp_scaled(2.0f * af_self(ax < 10.0f, ax, 10.0f), AF_EXP_SHIFT_MID, 1.0f);
  const float large = __builtin_copysignf(1.0f - 2.0f / (e + 1.0f), x);
  return af_self(ax < 0.55f, small, af_self(x != x, x, large));
}

// erf: |x| < 1: x * P(x^2) (Chebyshev fit of erf(x)/x, relative error
// 4e-11; the leading term split off so it rounds once); else 1 - R(|x| - 1),
// R a rational of degree (6, 5) fitted to erfc on [1, 4] for absolute error
// (1.5e-9, a fortieth of erf's ulp there: erf is in [0.84, 1), so the ulp is
// 2^-24 throughout and erfc's relative error does not matter where it is
// small), |x| clamped at 4 where erf rounds to 1. Within 1 ulp of glibc over
// every float >= 1 (the branch below 1 stays within 2), like the form it
// replaced, 1 - exp(-x^2) * G(2 / (2 + |x|)), which cost an exp and a
// polynomial of degree 7: 0.320 -> 0.232 ns per element, GELU (x / 2 *
// (1 + erf(x / sqrt 2))) 0.377 -> 0.288 (16K floats in the L1, Zen 5).
AF_INLINE float af_erf(float x) {
  const float ax = __builtin_fabsf(x);
  const float u = x * x;
  float ps = -9.6670445714869964152e-6f;
  ps = ps * u + 0.00011265959025606608973f;
  ps = ps * u - 0.00084840804055351062944f;
  ps = ps * u + 0.0052210318078580227973f;
  ps = ps * u - 0.026865430727670242894f;
  ps = ps * u + 0.1128378249523684454f;
  ps = ps * u - 0.37612638468028710398f;
  const float small = x * 1.1283791670615434152f + x * (u * ps);
  // (A NaN x gives t = 3 here; the select below returns x.)
  const float t = af_self(ax < 4.0f, ax, 4.0f) - 1.0f;
  float p = 4.380510179e-04f;
  p = p * t - 6.829834911e-03f;
  p = p * t + 4.473611962e-02f;
  p = p * t - 1.578165945e-01f;
  p = p * t + 3.167244615e-01f;
  p = p * t - 3.433616676e-01f;
  p = p * t + 1.572992324e-01f;
  float q = 4.294142877e-02f;
  q = q * t + 1.134773309e-01f;
  q = q * t + 2.018162924e-01f;
  q = q * t + 5.777567838e-01f;
  q = q * t + 4.561330312e-01f;
  q = q * t + 1.0f;
  const float large = 1.0f - p / q;
  return af_self(ax < 1.0f, small, af_self(x != x, x, __builtin_copysignf(large, x)));
}

// r in [-pi/4, pi/4] (double) and the quadrant q with x = q * pi/2 + r.
AF_INLINE double af_trig_reduce(float x, int64_t* q) {
  const double xd = x;
  // |x| < 2: n is -1, 0 or 1; one subtraction of pi/2 in two parts.
  const double ns = __builtin_rint(xd * 0.63661977236758134);
  const double rs = (xd - ns * 1.57079632673412561417e+00) - ns * 6.07710050650619224932e-11;
  // |x| >= 2: Payne-Hanek after ARM optimized-routines' reduce_large: the
  // 24-bit mantissa times a 96-bit window of 4/pi gives the exact 2.62-bit
  // fixed-point product mod 4. The window is shifted out of 4/pi * 2^255
  // (four 64-bit limbs) instead of read from a table: no gathers.
  const uint32_t xi = af_f2u(x);
  const uint32_t idx = (xi >> 26) & 15;
  const uint32_t m = ((xi & 0xffffffu) | 0x800000u) << ((xi >> 23) & 7);
  const uint32_t sh = 184 - 8 * idx;  // in [64, 184]
  const bool q1 = sh < 128;
  const uint64_t s = sh & 63;
  const uint64_t l0 = 0xa2f9836e4e441529ull, l1 = 0xfc2757d1f534ddc0ull, l2 = 0xdb6295993c439041ull;
  const uint64_t hx = af_sel64(q1, l0, 0), hy = af_sel64(q1, l1, l0), hz = af_sel64(q1, l2, l1);
  const uint64_t lo = (hz >> s) | ((hy << 1) << (63 - s));
  const uint64_t hi = (hy >> s) | ((hx << 1) << (63 - s));
  const uint32_t a = (uint32_t)hi, b = (uint32_t)(lo >> 32), c = (uint32_t)lo;
  uint64_t res0 = (uint32_t)(m * a);
  const uint64_t res1 = (uint64_t)m * b;
  const uint64_t res2 = (uint64_t)m * c;
  res0 = (res2 >> 32) | (res0 << 32);
  res0 += res1;
  const uint64_t n = (res0 + (1ull << 61)) >> 62;
  res0 -= n << 62;
  const double rl = (double)(int64_t)res0 * 3.4061215800865545e-19;  // pi * 2^-63
  const bool neg = (xi >> 31) != 0;
  const bool small = __builtin_fabsf(x) < 2.0f;
  const int64_t nl = (int64_t)n;
  *q = (int64_t)af_sel64(small, (uint64_t)(int64_t)ns,
                         (uint64_t)af_sel64(neg, 0 - (uint64_t)nl, (uint64_t)nl));
  return af_seld(small, rs, af_seld(neg, -rl, rl));
}

// sin (shift_q = 0) and cos (shift_q = 1): reduce, then Taylor polynomials
// in double on |r| <= pi/4 (sin to r^9, cos to r^10: error < 3e-9 relative).
AF_INLINE float af_sincos(float x, int64_t shift_q) {
  int64_t q;
  const double r = af_trig_reduce(x, &q);
  q += shift_q;
  const double r2 = r * r;
  double s = 1.0 / 362880;
  s = s * r2 - 1.0 / 5040;
  s = s * r2 + 1.0 / 120;
  s = s * r2 - 1.0 / 6;
  s = r + r * r2 * s;
  double c = -1.0 / 3628800;
  c = c * r2 + 1.0 / 40320;
  c = c * r2 - 1.0 / 720;
  c = c * r2 + 1.0 / 24;
  c = c * r2 - 0.5;
  c = c * r2 + 1.0;
  double v = af_seld((q & 1) != 0, c, s);
  v = af_seld((q & 2) != 0, -v, v);
  return af_self(__builtin_fabsf(x) < __builtin_inff(), (float)v, x - x);
}
AF_INLINE float af_sin(float x) {
  return af_sincos(x, 0);
}
AF_INLINE float af_cos(float x) {
  return af_sincos(x, 1);
}
/// 1 / (1 + e^-x) from t = e^-|x| in [0, 1]: 1 / (1 + t) for x >= 0, t / (1
/// + t) below. exp's argument is never positive (af_exp_nonpos: no upper
/// clamp, one scaling; 8 vector instructions fewer than e^-x over both
/// signs), nothing overflows, and x down to -103.9 keeps its subnormal
/// result (1 / (1 + expf(-x)) is 0 below -88.7: expf overflows). -|x| is
/// x with its sign bit set: one vector instruction (g++ spells
/// -__builtin_fabsf(x) as two).
AF_INLINE float af_neg_abs(float x) {
  return af_u2f(af_f2u(x) | 0x80000000u);
}
/// sigmoid(x) from t = e^-|x| (af_exp_nonpos(af_neg_abs(x)), or its row
/// form over a chunk buffer: inner_loop.cpp's chunk sigmoids).
AF_INLINE float af_sigmoid_from_exp(float x, float t) {
  return af_self(x < 0.0f, t, 1.0f) / (1.0f + t);
}
AF_INLINE float af_sigmoid(float x) {
  return af_sigmoid_from_exp(x, af_exp_nonpos(af_neg_abs(x)));
}

#endif  // AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_MATH_H_

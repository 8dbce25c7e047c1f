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

#endif  // AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_ROWS_H_

// Stores of the vector loops, embedded after kernel_prelude.h (see
// CMakeLists.txt): non-temporal (streaming) stores of whole chunks, and bf16
// stores rounded by the chunk where the target has AVX512-BF16. Both write
// from a 64-byte aligned chunk buffer that the loop filled (inner_loop.cpp).
#ifndef AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_STORES_H_
#define AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_STORES_H_

// ---- Non-temporal (streaming) stores -----------------------------------------
// Under tiling_key 1 a kernel computes its contiguous outputs in chunks of
// AF_NT_CHUNK elements into an aligned local buffer and writes each chunk
// with af_nt_store: whole 64-byte lines (a chunk is 64 * sizeof(T) bytes)
// that bypass the cache, so a large output costs no read-for-ownership
// (cpu-facts.md: they help only when the output does not fit the cache).
// Builtins instead of <immintrin.h> (compile time); without any, AF_NT_STORES
// is 0 and the kernels never take the streaming branch. Non-temporal stores
// are weakly ordered: a block that streamed ends with af_nt_fence() before
// another thread may read its output.
#define AF_NT_CHUNK 64
#if defined(__clang__)
#define AF_NT_STORES 1
#define AF_NT_VEC_BYTES 64  // clang splits it into the widest NT store it has
#elif defined(__GNUC__) && defined(__AVX512F__)
#define AF_NT_STORES 1
#define AF_NT_VEC_BYTES 64
#elif defined(__GNUC__) && defined(__AVX__)
#define AF_NT_STORES 1
#define AF_NT_VEC_BYTES 32
#elif defined(__GNUC__) && defined(__SSE2__)
#define AF_NT_STORES 1
#define AF_NT_VEC_BYTES 16
#else
#define AF_NT_STORES 0
#define AF_NT_VEC_BYTES 16
#endif
typedef long long af_nt_vec __attribute__((vector_size(AF_NT_VEC_BYTES)));
typedef long long af_nt_vec_alias __attribute__((vector_size(AF_NT_VEC_BYTES), may_alias));

/// Elements of `elem_bytes` from `p` until it is 64-byte aligned, at most
/// `n` (all `n` when `p` is not a multiple of elem_bytes: it never aligns).
AF_INLINE int64_t af_nt_peel(const void* p, int64_t elem_bytes, int64_t n) {
  const int64_t mis = (int64_t)((uintptr_t)p & 63u);
  if (mis % elem_bytes != 0) return n;
  return af_min(n, ((64 - mis) & 63) / elem_bytes);
}

/// Streams `bytes` (a multiple of 64, a constant at every call) from the
/// 64-byte aligned buffer `src` to the 64-byte aligned `dst`. For a loop of
/// rows whose alignment the caller checked once: a per-row test of `dst`
/// (af_nt_store) cost attention_transpose f32 [16, 12, 1024, 64] rows of
/// 256 bytes ~15% on an AVX2 Zen 3, though the branch is never taken.
AF_INLINE void af_nt_store_aligned(void* dst, const void* src, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += AF_NT_VEC_BYTES) {
    const af_nt_vec v = (af_nt_vec)(*(const af_nt_vec_alias*)((const char*)src + o));
    af_nt_vec* d = (af_nt_vec*)((char*)dst + o);
#if defined(__clang__)
    __builtin_nontemporal_store(v, d);
#elif AF_NT_STORES && AF_NT_VEC_BYTES == 64
    __builtin_ia32_movntdq512(d, v);
#elif AF_NT_STORES && AF_NT_VEC_BYTES == 32
    __builtin_ia32_movntdq256(d, v);
#elif AF_NT_STORES
    __builtin_ia32_movntdq(d, v);
#else
    *d = v;
#endif
  }
}

/// Copies `bytes` (a multiple of 64, a constant at every call) from the
/// 64-byte aligned buffer `src` to `dst`: streaming when `dst` is 64-byte
/// aligned (another output of the kernel may not be where the first is),
/// else ordinary stores.
AF_INLINE void af_nt_store(void* dst, const void* src, int64_t bytes) {
  if (!AF_NT_STORES || ((uintptr_t)dst & 63u) != 0) {
    __builtin_memcpy(dst, src, (unsigned long)bytes);
    return;
  }
  af_nt_store_aligned(dst, src, bytes);
}

/// Orders the block's streaming stores before whatever signals its end.
AF_INLINE void af_nt_fence(void) {
#if defined(__SSE__)
  __builtin_ia32_sfence();
#elif AF_NT_STORES
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

// ---- bf16 stores by the chunk ------------------------------------------------
// With AVX512-BF16, vcvtne2ps2bf16 rounds 32 floats to bf16 (nearest even,
// NaN quieted: af_f32_to_bf16's results) in one instruction, where g++ 12
// vectorizes af_f32_to_bf16 into ~9 per 16 lanes; but it reads subnormal
// inputs as zero, so a chunk holding one (vfpclassps) is rounded element by
// element instead. A loop whose bf16 stores stream (inner_loop.cpp) then
// computes them into f32 chunk buffers and rounds each chunk here: chain30
// bf16 [256, 1024] one thread 0.28 -> 0.23 ms on an AVX-512 Xeon (session
// 17). Elsewhere a chunk buffer holds bf16 already (AF_BF16_CHUNK_VALUE
// rounds) and the functions copy it.
// The builtin's name differs by compiler and version (g++ 13 renamed
// g++ 12's _v32hi to _v32bf): without a known one, the per-element rounding.
#if defined(__has_builtin) && defined(__AVX512BF16__) && defined(__AVX512DQ__) && \
    defined(__AVX512F__) && AF_NT_VEC_BYTES == 64
#if __has_builtin(__builtin_ia32_fpclassps512_mask)
#if defined(__clang__) && __has_builtin(__builtin_ia32_cvtne2ps2bf16_512)
#define AF_CVTNE2PS2BF16(hi, lo) ((af_nt_vec)__builtin_ia32_cvtne2ps2bf16_512(hi, lo))
#elif !defined(__clang__) && __has_builtin(__builtin_ia32_cvtne2ps2bf16_v32hi)
#define AF_CVTNE2PS2BF16(hi, lo) ((af_nt_vec)__builtin_ia32_cvtne2ps2bf16_v32hi(hi, lo))
#elif !defined(__clang__) && __has_builtin(__builtin_ia32_cvtne2ps2bf16_v32bf)
#define AF_CVTNE2PS2BF16(hi, lo) ((af_nt_vec)__builtin_ia32_cvtne2ps2bf16_v32bf(hi, lo))
#endif
#endif
#endif
#if defined(AF_CVTNE2PS2BF16) && !defined(AF_FORCE_LANE_PAIRS)  // (kernel_prelude_lanes.h)
#define AF_BF16_CVT 1
typedef float af_bf16_chunk_t;
#define AF_BF16_CHUNK_VALUE(v) (v)
typedef float af_v16sf __attribute__((vector_size(64)));
typedef short af_v32hi_mem __attribute__((vector_size(64), aligned(2), may_alias));
/// Rounds the 64-byte aligned src[0, n) (n a multiple of 16) to bf16 into
/// dst: streaming stores when `nt` (dst then 64-byte aligned and n a
/// multiple of 32), else ordinary. 64-byte loads, although a loop with
/// 16-bit loads writes its f32 buffer in 32-byte halves (a load over two
/// stores waits for them to reach the cache): 32-byte loads and conversions
/// were slower in every loop measured (session 17, one thread, median of 4:
/// rmsnorm bf16 [4, 128, 768] 0.75 vs 0.90 of the old time, softmax_mask
/// bf16 0.86 vs 0.99, chain30 bf16 0.83 vs 0.91, attention_transpose bf16
/// 0.96 vs 0.99).
AF_INLINE void af_bf16_put(uint16_t* dst, const float* src, int64_t n, bool nt) {
  const af_v16sf* s = (const af_v16sf*)src;
  unsigned subnormal = 0;
  for (int64_t k = 0; k < n / 16; ++k)
    subnormal |= __builtin_ia32_fpclassps512_mask(s[k], 0x20, 0xffff);
  if (__builtin_expect(subnormal != 0, 0)) {
    for (int64_t i = 0; i < n; ++i)
      dst[i] = af_f32_to_bf16(src[i]);
    return;
  }
  for (int64_t k = 0; k < n / 32; ++k) {
    const af_nt_vec v = AF_CVTNE2PS2BF16(s[2 * k + 1], s[2 * k]);
    if (nt) {
#if defined(__clang__)
      __builtin_nontemporal_store(v, (af_nt_vec*)(dst + 32 * k));
#else
      __builtin_ia32_movntdq512((af_nt_vec*)(dst + 32 * k), v);
#endif
    } else {
      *(af_v32hi_mem*)(dst + 32 * k) = (af_v32hi_mem)v;
    }
  }
  if (n % 32 != 0) {  // the last 16: the low half of a conversion
    const af_nt_vec v = AF_CVTNE2PS2BF16(s[n / 16 - 1], s[n / 16 - 1]);
    __builtin_memcpy(dst + n - 16, &v, 32);
  }
}
AF_INLINE void af_bf16_store(uint16_t* dst, const af_bf16_chunk_t* src, int64_t n) {
  af_bf16_put(dst, src, n, false);
}
AF_INLINE void af_bf16_nt_store(uint16_t* dst, const af_bf16_chunk_t* src, int64_t n) {
  af_bf16_put(dst, src, n, ((uintptr_t)dst & 63u) == 0);
}
AF_INLINE void af_bf16_nt_store_aligned(uint16_t* dst, const af_bf16_chunk_t* src, int64_t n) {
  af_bf16_put(dst, src, n, true);
}
#else
#define AF_BF16_CVT 0
typedef uint16_t af_bf16_chunk_t;
#define AF_BF16_CHUNK_VALUE(v) af_f32_to_bf16(v)
AF_INLINE void af_bf16_store(uint16_t* dst, const af_bf16_chunk_t* src, int64_t n) {
  __builtin_memcpy(dst, src, (unsigned long)n * 2u);
}
AF_INLINE void af_bf16_nt_store(uint16_t* dst, const af_bf16_chunk_t* src, int64_t n) {
  af_nt_store(dst, src, n * 2);
}
AF_INLINE void af_bf16_nt_store_aligned(uint16_t* dst, const af_bf16_chunk_t* src, int64_t n) {
  af_nt_store_aligned(dst, src, n * 2);
}
#endif

// ---- bf16 word pairs (word_pairs.cpp) -------------------------------------
// Two bf16 elements in one 32-bit word, the first in its low half (little
// endian): each half is a float after one shift or mask, and two rounded
// floats make one word with a shift, a mask and an or, all in 32-bit lanes,
// where widening and packing 16-bit lanes costs shuffles.
AF_INLINE uint32_t af_load_word(const void* p) {
  uint32_t w;
  __builtin_memcpy(&w, p, 4);
  return w;
}
AF_INLINE void af_store_word(void* p, uint32_t w) {
  __builtin_memcpy(p, &w, 4);
}
AF_INLINE float af_bf16_lo(uint32_t w) {
  return af_u2f(w << 16);
}
AF_INLINE float af_bf16_hi(uint32_t w) {
  return af_u2f(w & 0xffff0000u);
}
/// af_f32_to_bf16(lo) | af_f32_to_bf16(hi) << 16.
AF_INLINE uint32_t af_bf16_word(float lo, float hi) {
  uint32_t a = af_f2u(lo), b = af_f2u(hi);
  af_bf16_round_bits(lo, &a);
  af_bf16_round_bits(hi, &b);
  return (a >> 16) | (b & 0xffff0000u);
}
// The same for f16, with its conversions.
AF_INLINE float af_f16_lo(uint32_t w) {
  return af_f16_to_f32((uint16_t)(w & 0xffffu));
}
AF_INLINE float af_f16_hi(uint32_t w) {
  return af_f16_to_f32((uint16_t)(w >> 16));
}
AF_INLINE uint32_t af_f16_word(float lo, float hi) {
  return (uint32_t)af_f32_to_f16(lo) | ((uint32_t)af_f32_to_f16(hi) << 16);
}

#endif  // AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_STORES_H_

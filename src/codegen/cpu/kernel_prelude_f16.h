// f16 data in 16 lanes (the vector passes, column vectors and lane loops:
// vector_pass.cpp, column_vectors.cpp, lane_loops.cpp), embedded after
// kernel_prelude_lanes.h (see CMakeLists.txt), whose types and row-tail
// loads it uses: af_load16_f16, af_put16_f16 and af_put32_f16, the f16
// twins of the bf16 functions there, and AF_F16C, which the generated code
// tests for the lane loops' F16C form; and the copies of f16 chunk buffers
// to memory (af_f16_nt_store & co., at the end) for every target.
//
// F16C (every AVX-512 CPU, and the AVX2 ones since Haswell and Piledriver)
// converts 8 or 16 lanes per instruction: vcvtph2ps is exact, and
// vcvtps2ph with rounding 0 rounds to nearest even, overflows to inf and
// keeps a NaN's sign and top payload bits, quieted: af_f32_to_f16's bits
// for all 2^32 floats (checked on an Ice Lake, session 43). vcvtph2ps
// quiets a signaling NaN too, as support/half.h's f16_to_f32 does since
// session 43 (IEEE 754's conversion). af_f16_to_f32's integer steps, which
// the `omp simd` loops keep (g++ 12 converts _Float16 by a library call
// without AVX512-FP16), take ~10 instructions per vector each way: a
// LayerNorm f16 [16384, 1024] took 12.7 ms before its passes used these,
// 6.1 ms after (bf16: 5.5; one thread, Ice Lake; vector_pass.cpp).
//
// Without F16C (a compiler or target that lacks it), lane by lane through
// the scalar conversions: the same bits.
#ifndef AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_F16_H_
#define AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_F16_H_

#ifndef AF_F16C  // (tests define it 0 to run the fallback)
#if defined(__F16C__) && defined(__has_builtin)
#if __has_builtin(__builtin_ia32_vcvtph2ps256) && __has_builtin(__builtin_ia32_vcvtps2ph256)
#define AF_F16C 1
#endif
#endif
#endif
#ifndef AF_F16C
#define AF_F16C 0
#endif

// 32 f16 values (a 64-byte line) joined from two 32-byte halves in a
// register (AF_F16_JOIN32: the compiler has __builtin_shufflevector, and
// the target 64-byte vectors: g++ rejects returning one without AVX-512,
// -Wpsabi).
typedef uint16_t af_u16x32_f16 __attribute__((vector_size(64)));
typedef uint16_t af_u16x32_f16_mem __attribute__((vector_size(64), aligned(2), may_alias));
typedef uint16_t af_u16x16_f16_mem __attribute__((vector_size(32), aligned(2), may_alias));
typedef uint16_t af_u16x16_f16 __attribute__((vector_size(32)));
#if defined(__has_builtin) && AF_NT_VEC_BYTES == 64
#if __has_builtin(__builtin_shufflevector)
#define AF_F16_JOIN32 1
AF_INLINE af_u16x32_f16 af_f16_join32(af_u16x16_f16 a, af_u16x16_f16 b) {
  return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
}
#endif
#endif

#if AF_VECTOR_PASS

typedef short af_i16x8_f16 __attribute__((vector_size(16)));
typedef short af_i16x8_f16_mem __attribute__((vector_size(16), aligned(2), may_alias));

/// 8 f16 values widened to f32, and 8 floats rounded to f16 (rounding 0:
/// to nearest even).
AF_INLINE af_f32x8 af_widen8_f16(af_i16x8_f16 h) {
#if AF_F16C
  return __builtin_ia32_vcvtph2ps256(h);
#else
  af_f32x8 v;
  for (int k = 0; k < 8; ++k)
    v[k] = af_f16_to_f32((uint16_t)h[k]);
  return v;
#endif
}
AF_INLINE af_i16x8_f16 af_narrow8_f16(af_f32x8 v) {
#if AF_F16C
  return __builtin_ia32_vcvtps2ph256(v, 0);
#else
  af_i16x8_f16 h;
  for (int k = 0; k < 8; ++k)
    h[k] = (short)af_f32_to_f16(v[k]);
  return h;
#endif
}

#if !AF_LANE_PAIRS
#if AF_F16C && defined(__AVX512F__)  // (AF_F16C: __has_builtin exists)
#if __has_builtin(__builtin_ia32_vcvtph2ps512_mask) && \
    __has_builtin(__builtin_ia32_vcvtps2ph512_mask)
#define AF_WIDEN16_F16(h) \
  __builtin_ia32_vcvtph2ps512_mask((af_i16x16)(h), (af_f32x16){}, (unsigned short)-1, 4)
#define AF_NARROW16_F16(v) \
  ((af_u16x16)__builtin_ia32_vcvtps2ph512_mask(v, 0, (af_i16x16){}, (unsigned short)-1))
#endif
#endif
#ifndef AF_WIDEN16_F16
#define AF_WIDEN16_F16(h) af_widen16_f16_halves(h)
#define AF_NARROW16_F16(v) af_narrow16_f16_halves(v)
AF_INLINE af_f32x16 af_widen16_f16_halves(af_u16x16 h) {
  const af_f32x8 lo = af_widen8_f16((af_i16x8_f16)AF_LOW_HALF16((af_i16x16)h));
  const af_f32x8 hi = af_widen8_f16((af_i16x8_f16)AF_HIGH_HALF16((af_i16x16)h));
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
AF_INLINE af_u16x16 af_narrow16_f16_halves(af_f32x16 v) {
  const af_i16x8_f16 lo = af_narrow8_f16(AF_LOW_HALF16(v));
  const af_i16x8_f16 hi = af_narrow8_f16(AF_HIGH_HALF16(v));
  return (af_u16x16)__builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                            14, 15);
}
#endif

/// af_load16 of 16 f16 values widened to f32 (exactly).
AF_INLINE void af_load16_f16(af_f32x16* v, const uint16_t* p, int64_t n) {
  af_u16x16 h;
  af_load_u16x16(&h, p, n);
  *v = AF_WIDEN16_F16(h);
}

/// p[0, 16), or its first n, = v rounded to f16 (ordinary stores).
AF_INLINE void af_put16_f16(uint16_t* p, af_f32x16 v, int64_t n) {
  if (n >= 16) {
    *(af_u16x16_mem*)p = AF_NARROW16_F16(v);
    return;
  }
  for (int64_t k = 0; k < n; ++k)
    p[k] = af_f32_to_f16(v[k]);
}

/// p[0, 32) = lo, hi rounded to f16; streaming when `nt` and p is 64-byte
/// aligned: the two halves joined in a register (from two 32-byte stores
/// to the stack, the 64-byte load missed store forwarding: RMSNorm f16
/// [16384, 1024] took 1.6x the time, session 44).
AF_INLINE void af_put32_f16(uint16_t* p, af_f32x16 lo, af_f32x16 hi, bool nt) {
  const af_u16x16 a = AF_NARROW16_F16(lo), b = AF_NARROW16_F16(hi);
  if (AF_NT_STORES && nt && ((uintptr_t)p & 63u) == 0) {
#if defined(AF_F16_JOIN32)
    const af_u16x32_f16 both = af_f16_join32(a, b);
    af_nt_store_aligned(p, &both, 64);
#else
    const af_u16x16 both[2] = {a, b};
    af_nt_store_aligned(p, both, 64);
#endif
    return;
  }
  *(af_u16x16_mem*)p = a;
  *(af_u16x16_mem*)(p + 16) = b;
}
#else   // AF_LANE_PAIRS

AF_INLINE void af_load16_f16(af_f32x16* v, const uint16_t* p, int64_t n) {
  af_load16_halves(v, p, n, [](af_u16x8 h) { return af_widen8_f16((af_i16x8_f16)h); });
}

/// 16 lanes rounded to f16, in order (as af_bf16_pack16).
AF_INLINE af_i64x4 af_f16_pack16(af_f32x8 lo, af_f32x8 hi) {
  return (af_i64x4)__builtin_shufflevector(af_narrow8_f16(lo), af_narrow8_f16(hi), 0, 1, 2, 3, 4, 5,
                                           6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/// Two 16-byte stores, not af_f16_pack16's 32 bytes: its insert made an
/// f16 chain built for AVX2 1.12x slower (session 43).
AF_INLINE void af_put16_f16(uint16_t* p, af_f32x16 v, int64_t n) {
  if (n >= 16) {
    *(af_i16x8_f16_mem*)p = af_narrow8_f16(v.lo);
    *(af_i16x8_f16_mem*)(p + 8) = af_narrow8_f16(v.hi);
    return;
  }
  for (int64_t k = 0; k < n; ++k)
    p[k] = af_f32_to_f16(k < 8 ? v.lo[k] : v.hi[k - 8]);
}

/// Streaming (`nt`) where p is 32-byte aligned.
AF_INLINE void af_put32_f16(uint16_t* p, af_f32x16 lo, af_f32x16 hi, bool nt) {
  af_put32_u16(p, af_f16_pack16(lo.lo, lo.hi), af_f16_pack16(hi.lo, hi.hi), nt);
}
#endif  // AF_LANE_PAIRS

#endif  // AF_VECTOR_PASS

// ---- f16 chunk buffers to memory (inner_loop.cpp's flush) ------------------
// af_nt_store's, af_nt_store_aligned's and an ordinary copy's twins for an
// f16 chunk or row-span buffer (bytes: whole lines), reading it in 32-byte
// halves joined for each 64-byte store: the F16C form writes the buffer 32
// bytes at a time (af_put16_f16), and a 64-byte load of two such stores
// misses store forwarding and waits for them to reach the L1 (rotary f16
// [16, 1024, 12, 64] streaming 3.5 -> 1.9 ms, one thread, session 44).
// Loads inside one earlier store forward, whatever wrote the buffer.
#if defined(AF_F16_JOIN32)
AF_INLINE af_u16x32_f16 af_f16_line(const void* src) {
  return af_f16_join32(*(const af_u16x16_f16_mem*)src,
                       *(const af_u16x16_f16_mem*)((const char*)src + 32));
}
AF_INLINE void af_f16_nt_store_aligned(void* dst, const void* src, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64) {
    const af_u16x32_f16 line = af_f16_line((const char*)src + o);
    af_nt_store_aligned((char*)dst + o, &line, 64);
  }
}
AF_INLINE void af_f16_store(void* dst, const void* src, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64)
    *(af_u16x32_f16_mem*)((char*)dst + o) = af_f16_line((const char*)src + o);
}
#else
AF_INLINE void af_f16_nt_store_aligned(void* dst, const void* src, int64_t bytes) {
  af_nt_store_aligned(dst, src, bytes);
}
AF_INLINE void af_f16_store(void* dst, const void* src, int64_t bytes) {
  __builtin_memcpy(dst, src, (unsigned long)bytes);
}
#endif
AF_INLINE void af_f16_nt_store(void* dst, const void* src, int64_t bytes) {
  if (!AF_NT_STORES || ((uintptr_t)dst & 63u) != 0) {
    af_f16_store(dst, src, bytes);
    return;
  }
  af_f16_nt_store_aligned(dst, src, bytes);
}

#endif  // AUTOFUSE_CODEGEN_CPU_KERNEL_PRELUDE_F16_H_

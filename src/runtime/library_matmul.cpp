// matmul: NumPy semantics (rank >= 2, broadcast batch dims) for float
// dtypes. Classic packed GEMM without K blocking: for a block of NC output
// columns the whole K x NC slab of B is packed (converted to the
// accumulation type, zero-padded to panels of NR columns, sized to stay in
// L2), then for each group of MR rows the MR x K sliver of A is packed and
// a register-blocked micro-kernel computes MR x NR tiles over all of K,
// rounded to the dtype once. Work units (batch, column block, row chunk) are
// spread over the thread pool.
#include <algorithm>
#include <cstring>

#include "autofuse/error.h"
#include "autofuse/support/half.h"
#include "runtime/library.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace autofuse::runtime {

namespace {

constexpr int kMR = 6;
/// Packed B slab budget: K * NC accumulators (half of a typical 1 MiB L2).
constexpr int64_t kSlabBytes = 512 * 1024;
/// Below this many multiply-adds one thread does it all (~10-20 us).
constexpr int64_t kParallelFma = int64_t{1} << 18;

template <typename Acc>
using MicroKernel = void (*)(int64_t k, const Acc* a, const Acc* b, Acc* c);

/// Portable micro-kernel: c[MR][NR] = sum_k a[k][MR] * b[k][NR].
template <typename Acc, int NR>
void kernel_generic(int64_t k_len, const Acc* a, const Acc* b, Acc* c) {
  Acc acc[kMR][NR] = {};
  for (int64_t k = 0; k < k_len; ++k) {
    const Acc* bk = b + k * NR;
    const Acc* ak = a + k * kMR;
    for (int r = 0; r < kMR; ++r)
      for (int j = 0; j < NR; ++j)
        acc[r][j] += ak[r] * bk[j];
  }
  for (int r = 0; r < kMR; ++r)
    for (int j = 0; j < NR; ++j)
      c[r * NR + j] = acc[r][j];
}

#if defined(__x86_64__)
// AVX-512: 6 rows x 32 columns in 12 zmm accumulators (enough independent
// FMAs to cover their latency on two FMA ports).
__attribute__((target("avx512f"))) void kernel_f32_avx512(int64_t k_len, const float* a,
                                                          const float* b, float* c) {
  __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps(), c10 = _mm512_setzero_ps(),
         c11 = _mm512_setzero_ps(), c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps(),
         c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps(), c40 = _mm512_setzero_ps(),
         c41 = _mm512_setzero_ps(), c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
  for (int64_t k = 0; k < k_len; ++k) {
    const __m512 b0 = _mm512_loadu_ps(b + k * 32);
    const __m512 b1 = _mm512_loadu_ps(b + k * 32 + 16);
    const float* ak = a + k * kMR;
#define AF_ROW(r)                              \
  {                                            \
    const __m512 x = _mm512_set1_ps(ak[r]);    \
    c##r##0 = _mm512_fmadd_ps(x, b0, c##r##0); \
    c##r##1 = _mm512_fmadd_ps(x, b1, c##r##1); \
  }
    AF_ROW(0) AF_ROW(1) AF_ROW(2) AF_ROW(3) AF_ROW(4) AF_ROW(5)
#undef AF_ROW
  }
#define AF_STORE(r)                      \
  _mm512_storeu_ps(c + (r)*32, c##r##0); \
  _mm512_storeu_ps(c + (r)*32 + 16, c##r##1);
  AF_STORE(0) AF_STORE(1) AF_STORE(2) AF_STORE(3) AF_STORE(4) AF_STORE(5)
#undef AF_STORE
}

// AVX2 + FMA: 6 rows x 16 columns in 12 ymm accumulators.
__attribute__((target("avx2,fma"))) void kernel_f32_avx2(int64_t k_len, const float* a,
                                                         const float* b, float* c) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps(),
         c11 = _mm256_setzero_ps(), c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps(),
         c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps(), c40 = _mm256_setzero_ps(),
         c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t k = 0; k < k_len; ++k) {
    const __m256 b0 = _mm256_loadu_ps(b + k * 16);
    const __m256 b1 = _mm256_loadu_ps(b + k * 16 + 8);
    const float* ak = a + k * kMR;
#define AF_ROW(r)                                 \
  {                                               \
    const __m256 x = _mm256_broadcast_ss(ak + r); \
    c##r##0 = _mm256_fmadd_ps(x, b0, c##r##0);    \
    c##r##1 = _mm256_fmadd_ps(x, b1, c##r##1);    \
  }
    AF_ROW(0) AF_ROW(1) AF_ROW(2) AF_ROW(3) AF_ROW(4) AF_ROW(5)
#undef AF_ROW
  }
#define AF_STORE(r)                      \
  _mm256_storeu_ps(c + (r)*16, c##r##0); \
  _mm256_storeu_ps(c + (r)*16 + 8, c##r##1);
  AF_STORE(0) AF_STORE(1) AF_STORE(2) AF_STORE(3) AF_STORE(4) AF_STORE(5)
#undef AF_STORE
}
#endif

template <typename Acc>
struct KernelChoice {
  MicroKernel<Acc> fn;
  int nr;
};

KernelChoice<float> choose_f32_kernel() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {kernel_f32_avx512, 32};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {kernel_f32_avx2, 16};
#endif
  return {kernel_generic<float, 16>, 16};
}

// Element access per dtype: storage type and conversion to/from Acc.
struct F32 {
  using Storage = float;
  using Acc = float;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};
struct F64 {
  using Storage = double;
  using Acc = double;
  static double load(double v) { return v; }
  static double store(double v) { return v; }
};
struct F16 {
  using Storage = uint16_t;
  using Acc = float;
  static float load(uint16_t v) { return f16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_f16(v); }
};
struct BF16 {
  using Storage = uint16_t;
  using Acc = float;
  static float load(uint16_t v) { return bf16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_bf16(v); }
};

/// Shapes reduced to: `batches` pairs of (M x K) @ (K x N) matrices.
struct Problem {
  int64_t m = 0, n = 0, k = 0;
  int64_t batches = 1;
  int batch_rank = 0;
  const int64_t* out_batch = nullptr;  // out batch dims
  int64_t a_stride[16] = {};           // per out batch dim: matrices to step in a (0: broadcast)
  int64_t b_stride[16] = {};
};

Problem make_problem(const TensorView& a, const TensorView& b, const TensorView& out) {
  const int ra = static_cast<int>(a.shape.size()), rb = static_cast<int>(b.shape.size());
  const int ro = static_cast<int>(out.shape.size());
  AF_CHECK(ra >= 2 && rb >= 2 && ro == std::max(ra, rb), "matmul ranks {} {} -> {}", ra, rb, ro);
  Problem p;
  p.m = a.shape[ra - 2];
  p.k = a.shape[ra - 1];
  p.n = b.shape[rb - 1];
  AF_CHECK(b.shape[rb - 2] == p.k && out.shape[ro - 2] == p.m && out.shape[ro - 1] == p.n,
           "matmul shapes");
  p.batch_rank = ro - 2;
  if (p.batch_rank > 16)
    throw UserError(
        fmt::format("matmul with {} batch dims: the runtime supports 16", p.batch_rank));
  p.out_batch = out.shape.data();
  // Strides (in matrices) of a's and b's batch dims, right-aligned to out's.
  int64_t sa = 1, sb = 1;
  for (int d = p.batch_rank - 1; d >= 0; --d) {
    const int da = d - (ro - ra), db = d - (ro - rb);
    const int64_t na = da >= 0 ? a.shape[da] : 1, nb = db >= 0 ? b.shape[db] : 1;
    p.a_stride[d] = na == 1 ? 0 : sa;
    p.b_stride[d] = nb == 1 ? 0 : sb;
    sa *= na;
    sb *= nb;
    p.batches *= out.shape[d];
  }
  // b shared by every batch and a not broadcast: one (batches*M) x K matmul.
  bool a_full = true, b_shared = true;
  for (int d = 0; d < p.batch_rank; ++d) {
    if (p.b_stride[d] != 0 && out.shape[d] != 1) b_shared = false;
    if (p.a_stride[d] == 0 && out.shape[d] != 1) a_full = false;
  }
  if (b_shared && a_full && p.batches > 1) {
    p.m *= p.batches;
    p.batches = 1;
    p.batch_rank = 0;
  }
  return p;
}

/// Matrix offsets of batch `index` in a and b.
void batch_offsets(const Problem& p, int64_t index, int64_t& a_off, int64_t& b_off) {
  a_off = b_off = 0;
  for (int d = p.batch_rank - 1; d >= 0; --d) {
    const int64_t i = index % p.out_batch[d];
    index /= p.out_batch[d];
    a_off += i * p.a_stride[d];
    b_off += i * p.b_stride[d];
  }
}

template <typename E>
void matmul_typed(const TensorView& av, const TensorView& bv, const TensorView& outv,
                  KernelChoice<typename E::Acc> kernel, LibraryContext& ctx) {
  using S = typename E::Storage;
  using Acc = typename E::Acc;
  const Problem p = make_problem(av, bv, outv);
  if (p.m == 0 || p.n == 0 || p.batches == 0) return;
  const auto* A = static_cast<const S*>(av.data);
  const auto* B = static_cast<const S*>(bv.data);
  auto* C = static_cast<S*>(outv.data);
  const int nr = kernel.nr;
  const int64_t M = p.m, N = p.n, K = p.k;

  // Column block: the packed K x NC slab stays in L2.
  const int64_t n_padded = (N + nr - 1) / nr * nr;
  int64_t nc = kSlabBytes / (std::max<int64_t>(K, 1) * static_cast<int64_t>(sizeof(Acc)));
  nc = std::clamp<int64_t>(nc / nr * nr, nr, n_padded);
  const int64_t col_blocks = (N + nc - 1) / nc;

  // Row chunks: enough units for every thread when the work is large.
  const int64_t threads = ctx.pool.num_threads();
  const int64_t fma = p.batches * M * N * std::max<int64_t>(K, 1);
  const bool parallel = threads > 1 && fma >= kParallelFma;
  int64_t row_chunk = M;
  if (parallel && p.batches * col_blocks < 4 * threads) {
    const int64_t want = (4 * threads + p.batches * col_blocks - 1) / (p.batches * col_blocks);
    row_chunk = std::max<int64_t>((M + want - 1) / want, 4 * kMR);
    row_chunk = (row_chunk + kMR - 1) / kMR * kMR;
  }
  const int64_t row_chunks = (M + row_chunk - 1) / row_chunk;
  const int64_t units = p.batches * col_blocks * row_chunks;

  // Per-thread scratch: B slab, A sliver, one output tile.
  auto align = [](int64_t elems) {
    return (elems * static_cast<int64_t>(sizeof(Acc)) + 63) / 64 * 64;
  };
  const int64_t slab_bytes = align(K * nc), sliver_bytes = align(K * kMR),
                tile_bytes = align(kMR * nr);
  const int64_t per_thread = slab_bytes + sliver_bytes + tile_bytes;
  char* scratch = static_cast<char*>(
      ctx.scratch.get(static_cast<size_t>(per_thread * (parallel ? threads : 1))));

  auto run_unit = [&](int64_t unit, int thread) {
    const int64_t rc = unit % row_chunks;
    const int64_t cb = (unit / row_chunks) % col_blocks;
    const int64_t batch = unit / (row_chunks * col_blocks);
    int64_t a_mat = 0, b_mat = 0;
    batch_offsets(p, batch, a_mat, b_mat);
    const S* a = A + a_mat * M * K;
    const S* b = B + b_mat * K * N;
    S* c = C + batch * M * N;
    char* base = scratch + thread * per_thread;
    Acc* slab = reinterpret_cast<Acc*>(base);
    Acc* sliver = reinterpret_cast<Acc*>(base + slab_bytes);
    Acc* tile = reinterpret_cast<Acc*>(base + slab_bytes + sliver_bytes);

    const int64_t j0 = cb * nc, cols = std::min(nc, N - j0);
    const int64_t panels = (cols + nr - 1) / nr;
    for (int64_t pnl = 0; pnl < panels; ++pnl) {
      Acc* dst = slab + pnl * K * nr;
      const int64_t jp = j0 + pnl * nr, w = std::min<int64_t>(nr, N - jp);
      for (int64_t k = 0; k < K; ++k) {
        const S* src = b + k * N + jp;
        Acc* d = dst + k * nr;
        for (int64_t j = 0; j < w; ++j)
          d[j] = E::load(src[j]);
        for (int64_t j = w; j < nr; ++j)
          d[j] = Acc(0);
      }
    }
    const int64_t i_end = std::min(M, (rc + 1) * row_chunk);
    for (int64_t i0 = rc * row_chunk; i0 < i_end; i0 += kMR) {
      const int64_t rows = std::min<int64_t>(kMR, i_end - i0);
      for (int64_t k = 0; k < K; ++k) {
        Acc* d = sliver + k * kMR;
        for (int64_t r = 0; r < rows; ++r)
          d[r] = E::load(a[(i0 + r) * K + k]);
        for (int64_t r = rows; r < kMR; ++r)
          d[r] = Acc(0);
      }
      for (int64_t pnl = 0; pnl < panels; ++pnl) {
        kernel.fn(K, sliver, slab + pnl * K * nr, tile);
        const int64_t jp = j0 + pnl * nr, w = std::min<int64_t>(nr, N - jp);
        for (int64_t r = 0; r < rows; ++r) {
          S* crow = c + (i0 + r) * N + jp;
          const Acc* trow = tile + r * nr;
          for (int64_t j = 0; j < w; ++j)
            crow[j] = E::store(trow[j]);
        }
      }
    }
  };
  if (!parallel) {
    for (int64_t u = 0; u < units; ++u)
      run_unit(u, 0);
    return;
  }
  ctx.pool.parallel_for(units, run_unit);
}

}  // namespace

void library_matmul(const TensorView& a, const TensorView& b, const TensorView& out,
                    LibraryContext& ctx) {
  AF_CHECK(a.dtype == b.dtype && out.dtype == a.dtype, "matmul of {} and {} into {}",
           dtype_name(a.dtype), dtype_name(b.dtype), dtype_name(out.dtype));
  switch (a.dtype) {
    case DType::f32:
      return matmul_typed<F32>(a, b, out, choose_f32_kernel(), ctx);
    case DType::f16:
      return matmul_typed<F16>(a, b, out, choose_f32_kernel(), ctx);
    case DType::bf16:
      return matmul_typed<BF16>(a, b, out, choose_f32_kernel(), ctx);
    case DType::f64:
      return matmul_typed<F64>(a, b, out, KernelChoice<double>{kernel_generic<double, 8>, 8}, ctx);
    default:
      AF_CHECK(false, "matmul of {}", dtype_name(a.dtype));
  }
}

}  // namespace autofuse::runtime

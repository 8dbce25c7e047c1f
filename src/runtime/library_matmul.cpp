// matmul: NumPy semantics (rank >= 2, broadcast batch dims) for float
// dtypes, through oneDNN's matmul primitive.
//
// The shapes are first normalized: out batch dims of size 1 are dropped and
// adjacent batch dims with the same broadcast pattern (a broadcast, b
// broadcast, neither) merge, so almost every problem is a oneDNN matmul of
// rank <= 5 whose size-1 batch dims broadcast; b shared by every batch of a
// folds into M (one 2-D GEMM). Rarer patterns with more merged dims run one
// 2-D primitive per batch.
//
// Primitives are cached per problem in the DnnlCache (creating one costs
// far more than a small matmul); memory objects are kept in the entry and
// only get new data handles per run, and the scratchpad is user-managed from
// the context's Scratch, so a repeated shape allocates nothing here (oneDNN's
// execute itself makes a few small allocations for its argument map). All
// caches share one immutable CPU engine, so a context without a cache still
// hits oneDNN's own (engine-keyed) kernel cache instead of generating code.
//
// dtypes: f32 natively; f16 and bf16 natively where oneDNN has a CPU kernel
// for them (f32 accumulation, rounded once; bf16 needs AVX512_CORE, f16
// AVX512-FP16); elsewhere (an AVX2 CPU: oneDNN 2.7 reports bf16
// unimplemented) they are converted to f32 in scratch, multiplied in f32
// and rounded once, which gives the same result. oneDNN has no f64 matmul:
// f64 is a plain loop over the thread pool.
//
// Threads: Debian's libdnnl is built with DNNL_CPU_RUNTIME=OMP (it links
// libgomp), so oneDNN parallelizes with its own OpenMP team, not with the
// runtime's pool; the pool's workers are idle while a library op runs. The
// team is bounded to the pool's size around each call (ScopedOmpThreads), so
// CompileOptions::threads holds for matmuls too. omp_set_num_threads only
// sets the calling thread's nthreads-var, so this does not leak into other
// threads of the process, and it is restored afterwards.
#include <algorithm>
#include <cstring>

#include "autofuse/error.h"
#include "runtime/dnnl_support.h"

namespace autofuse::runtime {

namespace {

constexpr int kMaxBatchRank = 16;
/// Merged batch dims handed to one oneDNN primitive (ndims = this + 2).
constexpr int kMaxDnnlBatchRank = kMaxDnnlMatmulRank - 2;
/// Below this many multiply-adds the f64 loop runs on one thread.
constexpr int64_t kParallelFma = int64_t{1} << 18;

/// A matmul reduced to merged batch dims: out[b..., M, N] = a[b'..., M, K] @
/// b[b''..., K, N], where a_batch/b_batch hold 1 for a broadcast dim.
struct Problem {
  int64_t m = 0, k = 0, n = 0;
  int batch_rank = 0;
  int64_t batches = 1;
  std::array<int64_t, kMaxBatchRank> out_batch{}, a_batch{}, b_batch{};
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
  int last_pattern = -1;
  for (int d = 0; d < ro - 2; ++d) {
    const int da = d - (ro - ra), db = d - (ro - rb);
    const int64_t na = da >= 0 ? a.shape[da] : 1, nb = db >= 0 ? b.shape[db] : 1;
    const int64_t no = out.shape[d];
    AF_CHECK((na == no || na == 1) && (nb == no || nb == 1), "matmul batch dim {}: {} {} -> {}", d,
             na, nb, no);
    p.batches *= no;
    if (no == 1) continue;  // size 1 everywhere: no stride, no pattern
    const int pattern = (na == 1 ? 1 : 0) | (nb == 1 ? 2 : 0);
    if (pattern == last_pattern) {
      const int i = p.batch_rank - 1;
      p.out_batch[i] *= no;
      p.a_batch[i] *= na;
      p.b_batch[i] *= nb;
      continue;
    }
    if (p.batch_rank == kMaxBatchRank)
      throw UserError(fmt::format(
          "matmul with more than {} batch dims of alternating broadcast patterns", kMaxBatchRank));
    p.out_batch[p.batch_rank] = no;
    p.a_batch[p.batch_rank] = na;
    p.b_batch[p.batch_rank] = nb;
    ++p.batch_rank;
    last_pattern = pattern;
  }
  if (p.batches == 0) p.batch_rank = 0;
  // b shared by every batch, a not broadcast: one (batches * M) x K matmul.
  if (p.batch_rank == 1 && p.b_batch[0] == 1 && p.a_batch[0] != 1) {
    p.m *= p.out_batch[0];
    p.batch_rank = 0;
  }
  if (p.batch_rank == 0) p.batches = p.batches == 0 ? 0 : 1;
  return p;
}

/// Matrix offsets of batch `index` in a and b (row-major over merged dims).
void batch_offsets(const Problem& p, int64_t index, int64_t& a_mat, int64_t& b_mat) {
  a_mat = b_mat = 0;
  int64_t sa = 1, sb = 1;
  for (int d = p.batch_rank - 1; d >= 0; --d) {
    const int64_t i = index % p.out_batch[d];
    index /= p.out_batch[d];
    if (p.a_batch[d] != 1) a_mat += i * sa;
    if (p.b_batch[d] != 1) b_mat += i * sb;
    sa *= p.a_batch[d];
    sb *= p.b_batch[d];
  }
}

// ---- f64: a plain loop -------------------------------------------------------

void matmul_f64(const Problem& p, const double* A, const double* B, double* C,
                LibraryContext& ctx) {
  const int64_t M = p.m, N = p.n, K = p.k;
  const int64_t threads = ctx.pool.num_threads();
  const bool parallel = threads > 1 && p.batches * M * N * K >= kParallelFma;
  const int64_t row_chunk =
      parallel ? std::max<int64_t>(1, (p.batches * M + 4 * threads - 1) / (4 * threads)) : M;
  const int64_t chunks_per_batch = (M + row_chunk - 1) / row_chunk;
  auto run_unit = [&](int64_t unit, int) {
    const int64_t batch = unit / chunks_per_batch, r0 = (unit % chunks_per_batch) * row_chunk;
    int64_t a_mat = 0, b_mat = 0;
    batch_offsets(p, batch, a_mat, b_mat);
    const double* a = A + a_mat * M * K;
    const double* b = B + b_mat * K * N;
    double* c = C + batch * M * N;
    for (int64_t i = r0; i < std::min(M, r0 + row_chunk); ++i) {
      double* crow = c + i * N;
      std::fill(crow, crow + N, 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double aik = a[i * K + k];
        const double* brow = b + k * N;
        for (int64_t j = 0; j < N; ++j)
          crow[j] += aik * brow[j];
      }
    }
  };
  const int64_t units = p.batches * chunks_per_batch;
  if (!parallel) {
    for (int64_t u = 0; u < units; ++u)
      run_unit(u, 0);
    return;
  }
  ctx.pool.parallel_for(units, run_unit);
}

// ---- oneDNN ------------------------------------------------------------------

DnnlEntry create_matmul(const MatmulKey& key, DType compute, const dnnl::engine& engine) {
  using dnnl::memory;
  const memory::data_type dt = dnnl_type(compute);
  memory::dims a(key.a.begin(), key.a.begin() + key.nd), b(key.b.begin(), key.b.begin() + key.nd);
  memory::dims c(key.nd);
  for (int i = 0; i < key.nd - 2; ++i)
    c[i] = std::max(a[i], b[i]);
  c[key.nd - 2] = a[key.nd - 2];
  c[key.nd - 1] = b[key.nd - 1];
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(plain_desc(a, dt), plain_desc(b, dt), plain_desc(c, dt)), attr, engine);
  DnnlEntry e = make_entry(pd, engine, /*bias=*/false);
  e.prim = dnnl::matmul(pd);
  return e;
}

void matmul_dnnl(const Problem& p, const TensorView& av, const TensorView& bv,
                 const TensorView& outv, DnnlCache::Impl& cache, Scratch& scratch, int threads) {
  // Primitive creation reads the team size too (oneDNN blocks for it).
  const ScopedOmpThreads team(threads);
  // One primitive over the merged batch dims, or a 2-D one per batch.
  const bool batched = p.batch_rank <= kMaxDnnlBatchRank;
  MatmulKey key;
  key.dtype = av.dtype;
  key.nd = batched ? p.batch_rank + 2 : 2;
  for (int d = 0; d < key.nd - 2; ++d) {
    key.a[d] = p.a_batch[d];
    key.b[d] = p.b_batch[d];
  }
  key.a[key.nd - 2] = p.m;
  key.a[key.nd - 1] = p.k;
  key.b[key.nd - 2] = p.k;
  key.b[key.nd - 1] = p.n;
  DnnlEntry& e = cache.get(
      cache.matmuls, key, key.dtype,
      [&](DType compute) { return create_matmul(key, compute, *cache.engine); },
      [&] {
        return fmt::format("matmul {}", fmt::join(key.a.begin(), key.a.begin() + key.nd, "x"));
      });

  // Scratch: [f32 copies of a, b, out when staged][oneDNN scratchpad].
  const int64_t na = av.numel(), nb = bv.numel(), nc = outv.numel();
  const size_t staged = e.staged_f32 ? align64(na * 4) + align64(nb * 4) + align64(nc * 4) : 0;
  char* base = static_cast<char*>(scratch.get(staged + align64(e.scratchpad_bytes) + 64));
  char* pad = base + staged;
  const void* a = av.data;
  const void* b = bv.data;
  void* c = outv.data;
  size_t elem = static_cast<size_t>(dtype_size(av.dtype));
  if (e.staged_f32) {
    float* a32 = reinterpret_cast<float*>(base);
    float* b32 = reinterpret_cast<float*>(base + align64(na * 4));
    float* c32 = reinterpret_cast<float*>(base + align64(na * 4) + align64(nb * 4));
    half_to_f32_n(av.dtype, av.data, a32, na);
    half_to_f32_n(bv.dtype, bv.data, b32, nb);
    a = a32;
    b = b32;
    c = c32;
    elem = 4;
  }
  if (batched) {
    execute(cache, e, a, b, nullptr, c, pad);
  } else {
    for (int64_t batch = 0; batch < p.batches; ++batch) {
      int64_t a_mat = 0, b_mat = 0;
      batch_offsets(p, batch, a_mat, b_mat);
      execute(cache, e, static_cast<const char*>(a) + a_mat * p.m * p.k * elem,
              static_cast<const char*>(b) + b_mat * p.k * p.n * elem, nullptr,
              static_cast<char*>(c) + batch * p.m * p.n * elem, pad);
    }
  }
  if (e.staged_f32) f32_to_half_n(outv.dtype, static_cast<const float*>(c), outv.data, nc);
}

}  // namespace

void library_matmul(const TensorView& a, const TensorView& b, const TensorView& out,
                    LibraryContext& ctx) {
  AF_CHECK(a.dtype == b.dtype && out.dtype == a.dtype, "matmul of {} and {} into {}",
           dtype_name(a.dtype), dtype_name(b.dtype), dtype_name(out.dtype));
  AF_CHECK(is_float(a.dtype), "matmul of {}", dtype_name(a.dtype));
  const Problem p = make_problem(a, b, out);
  if (p.m == 0 || p.n == 0 || p.batches == 0) return;
  if (p.k == 0) {  // empty sums; all-zero bits are +0 in every float dtype
    std::memset(out.data, 0, out.nbytes());
    return;
  }
  if (a.dtype == DType::f64) {
    return matmul_f64(p, static_cast<const double*>(a.data), static_cast<const double*>(b.data),
                      static_cast<double*>(out.data), ctx);
  }
  if (ctx.dnnl_cache != nullptr) {
    matmul_dnnl(p, a, b, out, ctx.dnnl_cache->impl(), ctx.scratch, ctx.pool.num_threads());
    return;
  }
  DnnlCache temporary;
  matmul_dnnl(p, a, b, out, temporary.impl(), ctx.scratch, ctx.pool.num_threads());
}

}  // namespace autofuse::runtime

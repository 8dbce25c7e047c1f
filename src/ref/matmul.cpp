// matmul: NumPy semantics for rank >= 2 with broadcast batch dims. Naive
// loops with double accumulation (k ascending), rounded to the dtype once.
#include "ref/dtype_traits.h"
#include "ref/kernels.h"
#include "ref/strided.h"

namespace autofuse::ref {

namespace {

template <DType D>
void matmul_typed(const HostTensor& a, const HostTensor& b, HostTensor& out) {
  const int ra = a.rank(), rb = b.rank(), ro = out.rank();
  const int64_t m = a.shape()[ra - 2], k = a.shape()[ra - 1], n = b.shape()[rb - 1];
  AF_CHECK(b.shape()[rb - 2] == k && out.shape()[ro - 2] == m && out.shape()[ro - 1] == n,
           "matmul {} x {} -> {}", a.type_string(), b.type_string(), out.type_string());

  // Batch offsets (in matrices) of a and b for each output batch index.
  std::vector<int64_t> batch(out.shape().begin(), out.shape().end() - 2);
  std::vector<int64_t> a_batch(a.shape().begin(), a.shape().end() - 2);
  std::vector<int64_t> b_batch(b.shape().begin(), b.shape().end() - 2);
  StridedSpace<2> space;
  space.shape = batch;
  space.strides = {broadcast_strides(a_batch, batch), broadcast_strides(b_batch, batch)};
  std::vector<std::array<int64_t, 2>> pairs;
  for_each_row(space, [&](const std::array<int64_t, 2>& off, int64_t count,
                          const std::array<int64_t, 2>& st) {
    for (int64_t i = 0; i < count; ++i)
      pairs.push_back({off[0] + i * st[0], off[1] + i * st[1]});
  });

  const std::vector<double> av = values_f64<D>(a);
  const std::vector<double> bv = values_f64<D>(b);
  auto* o = out.data_as<StorageOf<D>>();
  std::vector<double> row(static_cast<size_t>(n));
  for (size_t p = 0; p < pairs.size(); ++p) {
    const double* am = av.data() + pairs[p][0] * m * k;
    const double* bm = bv.data() + pairs[p][1] * k * n;
    auto* om = o + static_cast<int64_t>(p) * m * n;
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t kk = 0; kk < k; ++kk) {
        const double x = am[i * k + kk];
        const double* brow = bm + kk * n;
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * brow[j];
      }
      for (int64_t j = 0; j < n; ++j)
        om[i * n + j] = store_f64<D>(row[j]);
    }
  }
}

}  // namespace

void matmul(const HostTensor& a, const HostTensor& b, HostTensor& out) {
  AF_CHECK(a.rank() >= 2 && b.rank() >= 2 && a.dtype() == b.dtype() && out.dtype() == a.dtype(),
           "matmul {} x {} -> {}", a.type_string(), b.type_string(), out.type_string());
  visit_dtype(a.dtype(), [&](auto dtype_tag) {
    constexpr DType D = decltype(dtype_tag)::value;
    if constexpr (kIsFloat<D>) {
      matmul_typed<D>(a, b, out);
    } else {
      AF_CHECK(false, "matmul does not take {}", dtype_name(D));
    }
  });
}

}  // namespace autofuse::ref

// Strided iteration for the reference kernels. An iteration space is a shape
// plus, per operand, a stride per dim and a base offset (all in elements;
// strides may be 0 for broadcasting or negative for reversed slices). The
// walker merges dims that are contiguous for every operand and calls the
// body once per innermost row, so per-element work is a plain loop.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace autofuse::ref {

template <size_t K>
struct StridedSpace {
  std::vector<int64_t> shape;
  std::array<std::vector<int64_t>, K> strides;
  std::array<int64_t, K> offsets{};
};

/// Row-major strides of a contiguous tensor.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);

/// Strides that read a contiguous tensor of `in_shape` as if broadcast to
/// `out_shape` (NumPy: right-aligned, size-1 dims get stride 0).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_shape,
                                       const std::vector<int64_t>& out_shape);

/// Drops size-1 dims and merges neighbours that are contiguous for every
/// operand. Leaves a zero-size space alone.
template <size_t K>
void simplify(StridedSpace<K>& s) {
  for (int64_t d : s.shape)
    if (d == 0) return;
  StridedSpace<K> out;
  out.offsets = s.offsets;
  for (size_t d = 0; d < s.shape.size(); ++d) {
    if (s.shape[d] == 1) continue;
    bool merge = !out.shape.empty();
    for (size_t k = 0; k < K && merge; ++k)
      merge = out.strides[k].back() == s.strides[k][d] * s.shape[d];
    if (merge) {
      out.shape.back() *= s.shape[d];
      for (size_t k = 0; k < K; ++k)
        out.strides[k].back() = s.strides[k][d];
    } else {
      out.shape.push_back(s.shape[d]);
      for (size_t k = 0; k < K; ++k)
        out.strides[k].push_back(s.strides[k][d]);
    }
  }
  s = std::move(out);
}

/// Calls row(offsets, n, inner_strides) for every innermost row of the space:
/// element i of the row is at offsets[k] + i * inner_strides[k] for operand k.
template <size_t K, typename Row>
void for_each_row(StridedSpace<K> s, Row&& row) {
  simplify(s);
  for (int64_t d : s.shape)
    if (d == 0) return;
  std::array<int64_t, K> inner{};
  const int rank = static_cast<int>(s.shape.size());
  if (rank == 0) {
    row(s.offsets, int64_t{1}, inner);
    return;
  }
  for (size_t k = 0; k < K; ++k)
    inner[k] = s.strides[k][rank - 1];
  const int64_t n = s.shape[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  std::array<int64_t, K> off = s.offsets;
  while (true) {
    row(off, n, inner);
    int d = rank - 2;
    for (; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < K; ++k)
        off[k] += s.strides[k][d];
      if (index[d] < s.shape[d]) break;
      for (size_t k = 0; k < K; ++k)
        off[k] -= s.strides[k][d] * s.shape[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

/// Copies elements of `elem_size` bytes: operand 0 of the space indexes
/// `dst`, operand 1 indexes `src`.
void copy_strided(void* dst, const void* src, int elem_size, const StridedSpace<2>& space);

}  // namespace autofuse::ref

// Data movement library ops (transpose, slice, concat, split, gather), plain
// copies, and constant / iota creation. Movement copies storage bits
// unchanged, element by element of the dtype's size.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "autofuse/error.h"
#include "autofuse/ref/tensor.h"
#include "autofuse/support/host_memory.h"
#include "runtime/library.h"
#include "runtime/strided_copy.h"

namespace autofuse::runtime {

namespace {

void check_rank(const TensorView& t, const char* what) {
  if (t.shape.size() > static_cast<size_t>(kMaxCopyDims))
    throw UserError(fmt::format("{} of a rank-{} tensor: the runtime supports rank <= {}", what,
                                t.shape.size(), kMaxCopyDims));
}

/// Python slice semantics for one dim (same as the reference interpreter).
struct SliceRange {
  int64_t start;
  int64_t step;
  int64_t length;
};
SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step) {
  AF_CHECK(step != 0 && dim >= 0, "slice step {} dim {}", step, dim);
  if (step > 0) {
    auto clamp = [dim](int64_t i) {
      return i < 0 ? std::max<int64_t>(i + dim, 0) : std::min(i, dim);
    };
    const int64_t b = clamp(start);
    const int64_t e = end == kSliceEnd ? dim : clamp(end);
    return {b, step, e > b ? (e - b - 1) / step + 1 : 0};
  }
  auto clamp = [dim](int64_t i) {
    return i < 0 ? std::max<int64_t>(i + dim, -1) : std::min(i, dim - 1);
  };
  const int64_t b = clamp(start);
  const int64_t e = end == kSliceEnd ? -1 : clamp(end);
  const uint64_t stride = 0 - static_cast<uint64_t>(step);
  const int64_t len =
      b > e ? static_cast<int64_t>((static_cast<uint64_t>(b - e) - 1) / stride + 1) : 0;
  return {b, step, len};
}

int64_t product(std::span<const int64_t> shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

/// Copies `bytes` (a small constant-size memcpy when it can be).
inline void copy_row(char* dst, const char* src, size_t bytes) {
  switch (bytes) {
    case 1:
      std::memcpy(dst, src, 1);
      return;
    case 2:
      std::memcpy(dst, src, 2);
      return;
    case 4:
      std::memcpy(dst, src, 4);
      return;
    case 8:
      std::memcpy(dst, src, 8);
      return;
    default:
      std::memcpy(dst, src, bytes);
  }
}

}  // namespace

Scratch::~Scratch() {
  free_host_buffer(data_, capacity_);
}

void* Scratch::get(size_t bytes) {
  if (bytes <= capacity_) return data_;
  free_host_buffer(data_, capacity_);
  data_ = nullptr;
  capacity_ = 0;
  // Large arenas on huge pages (support/host_memory.h); first touch of
  // 4 KiB pages also costs ~2 us each on the project's VMs.
  const size_t rounded = (std::max<size_t>(bytes, 4096) + 63) / 64 * 64;
  data_ = allocate_host_buffer(rounded);
  capacity_ = rounded;
  return data_;
}

void library_copy(void* dst, const void* src, size_t bytes, LibraryContext& ctx) {
  if (bytes == 0 || dst == src) return;
  const int64_t n = static_cast<int64_t>(bytes);
  const int64_t shape[1] = {n}, strides[1] = {1};
  strided_copy(dst, src, 1, shape, strides, strides, ctx);
}

void library_transpose(const TensorView& x, std::span<const int64_t> perm, const TensorView& out,
                       LibraryContext& ctx) {
  check_rank(x, "transpose");
  const size_t rank = x.shape.size();
  AF_CHECK(perm.size() == rank && out.shape.size() == rank && x.dtype == out.dtype,
           "transpose of rank {} with perm of size {}", rank, perm.size());
  int64_t in_strides[kMaxCopyDims], out_strides[kMaxCopyDims], src_strides[kMaxCopyDims];
  contiguous_strides(x.shape, std::span<int64_t>(in_strides, rank));
  contiguous_strides(out.shape, std::span<int64_t>(out_strides, rank));
  for (size_t i = 0; i < rank; ++i) {
    AF_CHECK(out.shape[i] == x.shape[static_cast<size_t>(perm[i])], "transpose dim {}", i);
    src_strides[i] = in_strides[perm[i]];
  }
  strided_copy(out.data, x.data, dtype_size(x.dtype), out.shape,
               std::span<const int64_t>(out_strides, rank),
               std::span<const int64_t>(src_strides, rank), ctx);
}

void library_slice(const TensorView& x, const SliceAttrs& attrs, const TensorView& out,
                   LibraryContext& ctx) {
  check_rank(x, "slice");
  const size_t rank = x.shape.size();
  AF_CHECK(out.shape.size() == rank && x.dtype == out.dtype, "slice ranks {} -> {}", rank,
           out.shape.size());
  int64_t in_strides[kMaxCopyDims], out_strides[kMaxCopyDims], src_strides[kMaxCopyDims];
  contiguous_strides(x.shape, std::span<int64_t>(in_strides, rank));
  contiguous_strides(out.shape, std::span<int64_t>(out_strides, rank));
  std::copy(in_strides, in_strides + rank, src_strides);
  int64_t offset = 0;
  for (size_t i = 0; i < attrs.axes.size(); ++i) {
    const auto axis = static_cast<size_t>(attrs.axes[i]);
    AF_CHECK(axis < rank, "slice axis {}", axis);
    const SliceRange r = slice_range(x.shape[axis], attrs.starts[i], attrs.ends[i], attrs.steps[i]);
    AF_CHECK(r.length == out.shape[axis], "slice of axis {} gives {} elements, the plan says {}",
             axis, r.length, out.shape[axis]);
    if (r.length > 0) offset += r.start * in_strides[axis];
    src_strides[axis] = r.step * in_strides[axis];
  }
  if (out.numel() == 0) return;
  const char* src = static_cast<const char*>(x.data) + offset * dtype_size(x.dtype);
  strided_copy(out.data, src, dtype_size(x.dtype), out.shape,
               std::span<const int64_t>(out_strides, rank),
               std::span<const int64_t>(src_strides, rank), ctx);
}

void library_concat(std::span<const TensorView> xs, int64_t axis, const TensorView& out,
                    LibraryContext& ctx) {
  check_rank(out, "concat");
  const size_t rank = out.shape.size();
  const auto ax = static_cast<size_t>(axis);
  AF_CHECK(ax < rank, "concat axis {} of rank {}", axis, rank);
  int64_t out_strides[kMaxCopyDims], in_strides[kMaxCopyDims];
  contiguous_strides(out.shape, std::span<int64_t>(out_strides, rank));
  const int es = dtype_size(out.dtype);
  int64_t at = 0;
  for (const TensorView& x : xs) {
    AF_CHECK(x.dtype == out.dtype && x.shape.size() == rank, "concat input");
    contiguous_strides(x.shape, std::span<int64_t>(in_strides, rank));
    // (An empty output may have no buffer: no pointer arithmetic on it.)
    if (x.numel() > 0)
      strided_copy(static_cast<char*>(out.data) + at * out_strides[ax] * es, x.data, es, x.shape,
                   std::span<const int64_t>(out_strides, rank),
                   std::span<const int64_t>(in_strides, rank), ctx);
    at += x.shape[ax];
  }
  AF_CHECK(at == out.shape[ax], "concat sizes add up to {}, output has {}", at, out.shape[ax]);
}

void library_split(const TensorView& x, int64_t axis, std::span<const TensorView> outs,
                   LibraryContext& ctx) {
  check_rank(x, "split");
  const size_t rank = x.shape.size();
  const auto ax = static_cast<size_t>(axis);
  AF_CHECK(ax < rank, "split axis {} of rank {}", axis, rank);
  int64_t in_strides[kMaxCopyDims], out_strides[kMaxCopyDims];
  contiguous_strides(x.shape, std::span<int64_t>(in_strides, rank));
  const int es = dtype_size(x.dtype);
  int64_t at = 0;
  for (const TensorView& out : outs) {
    AF_CHECK(out.dtype == x.dtype && out.shape.size() == rank, "split output");
    contiguous_strides(out.shape, std::span<int64_t>(out_strides, rank));
    // (An empty input may have no buffer: no pointer arithmetic on it.)
    if (out.numel() > 0)
      strided_copy(out.data, static_cast<const char*>(x.data) + at * in_strides[ax] * es, es,
                   out.shape, std::span<const int64_t>(out_strides, rank),
                   std::span<const int64_t>(in_strides, rank), ctx);
    at += out.shape[ax];
  }
  AF_CHECK(at == x.shape[ax], "split sizes add up to {}, input has {}", at, x.shape[ax]);
}

namespace {

template <typename I>
void check_indices(const I* idx, int64_t n, int64_t axis, int64_t axis_size) {
  for (int64_t j = 0; j < n; ++j) {
    const auto v = static_cast<int64_t>(idx[j]);
    if (v < -axis_size || v >= axis_size)
      throw UserError(fmt::format(
          "gather index {} (element {} of the indices) is out of range for axis {} of size {}", v,
          j, axis, axis_size));
  }
}

template <typename I>
void gather_rows(const char* src, char* dst, const I* idx, int64_t n_idx, int64_t axis_size,
                 size_t row_bytes, int64_t lo, int64_t hi) {
  // Item r = (outer o, index j); rows of `row_bytes` bytes.
  for (int64_t r = lo; r < hi; ++r) {
    const int64_t o = r / n_idx, j = r % n_idx;
    int64_t v = static_cast<int64_t>(idx[j]);
    if (v < 0) v += axis_size;
    copy_row(dst + static_cast<size_t>(r) * row_bytes,
             src + static_cast<size_t>(o * axis_size + v) * row_bytes, row_bytes);
  }
}

template <typename F>
void visit_index_type(DType t, F&& f) {
  switch (t) {
    case DType::i8:
      return f(static_cast<const int8_t*>(nullptr));
    case DType::u8:
      return f(static_cast<const uint8_t*>(nullptr));
    case DType::i32:
      return f(static_cast<const int32_t*>(nullptr));
    case DType::i64:
      return f(static_cast<const int64_t*>(nullptr));
    default:
      AF_CHECK(false, "gather indices of type {}", dtype_name(t));
  }
}

}  // namespace

void library_gather(const TensorView& data, const TensorView& indices, int64_t axis,
                    const TensorView& out, LibraryContext& ctx) {
  const auto ax = static_cast<size_t>(axis);
  AF_CHECK(ax < data.shape.size() && data.dtype == out.dtype, "gather axis {}", axis);
  const int64_t axis_size = data.shape[ax];
  const int64_t outer = product(data.shape, 0, ax);
  const int64_t inner = product(data.shape, ax + 1, data.shape.size());
  const int64_t n_idx = indices.numel();
  AF_CHECK(out.numel() == outer * n_idx * inner, "gather output size");
  visit_index_type(indices.dtype, [&](auto tag) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(tag)>>;
    const I* idx = static_cast<const I*>(indices.data);
    // Every index is checked before any data moves.
    check_indices(idx, n_idx, axis, axis_size);
    const size_t row_bytes = static_cast<size_t>(inner) * dtype_size(data.dtype);
    const int64_t rows = outer * n_idx;
    if (row_bytes == 0 || rows == 0) return;
    const char* src = static_cast<const char*>(data.data);
    char* dst = static_cast<char*>(out.data);
    const int64_t moved = 2 * rows * static_cast<int64_t>(row_bytes);
    const int64_t blocks = std::min<int64_t>(
        {rows, 4 * ctx.pool.num_threads(), std::max<int64_t>(1, moved / ctx.min_block_bytes)});
    if (blocks <= 1) {
      gather_rows(src, dst, idx, n_idx, axis_size, row_bytes, 0, rows);
      return;
    }
    ctx.pool.parallel_for(blocks, [&](int64_t b, int) {
      gather_rows(src, dst, idx, n_idx, axis_size, row_bytes, rows * b / blocks,
                  rows * (b + 1) / blocks);
    });
  });
}

void fill_constant(const ConstantAttrs& attrs, const TensorView& out) {
  AF_CHECK(out.dtype == attrs.dtype, "constant of {} into {}", dtype_name(attrs.dtype),
           dtype_name(out.dtype));
  const int64_t n = out.numel();
  const size_t es = static_cast<size_t>(dtype_size(out.dtype));
  // HostTensor::set_f64 does the rounding / wrapping of the dtype.
  HostTensor one(out.dtype, {});
  auto* dst = static_cast<unsigned char*>(out.data);
  if (attrs.values.size() == 1) {
    one.set_f64(0, attrs.values[0]);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(dst + i * es, one.data(), es);
    return;
  }
  AF_CHECK(static_cast<int64_t>(attrs.values.size()) == n, "constant with {} values for {}",
           attrs.values.size(), n);
  for (int64_t i = 0; i < n; ++i) {
    one.set_f64(0, attrs.values[static_cast<size_t>(i)]);
    std::memcpy(dst + i * es, one.data(), es);
  }
}

void fill_iota(int64_t axis, const TensorView& out) {
  const auto ax = static_cast<size_t>(axis);
  AF_CHECK(ax < out.shape.size(), "iota axis {}", axis);
  const int64_t dim = out.shape[ax];
  const int64_t inner = product(out.shape, ax + 1, out.shape.size());
  const int64_t n = out.numel();
  const size_t es = static_cast<size_t>(dtype_size(out.dtype));
  HostTensor one(out.dtype, {});
  auto* dst = static_cast<unsigned char*>(out.data);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = (i / inner) % dim;
    if (is_float(out.dtype)) {
      one.set_f64(0, static_cast<double>(v));
    } else {
      one.set_i64(0, v);
    }
    std::memcpy(dst + i * es, one.data(), es);
  }
}

}  // namespace autofuse::runtime

// Data movement and creation: broadcast_to, transpose, reshape, slice,
// concat, split, gather, constant, iota. Movement copies storage bits
// unchanged (no rounding), element size by element size.
#include <cstring>

#include "ref/dtype_traits.h"
#include "ref/kernels.h"
#include "ref/strided.h"

namespace autofuse::ref {

namespace {

void check_same_dtype(const HostTensor& x, const HostTensor& out, const char* what) {
  AF_CHECK(x.dtype() == out.dtype(), "{} {} -> {}", what, x.type_string(), out.type_string());
}

int64_t product(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

}  // namespace

SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step) {
  AF_CHECK(step != 0 && dim >= 0, "slice step {} dim {}", step, dim);
  if (step > 0) {
    auto clamp = [dim](int64_t i) {
      return i < 0 ? std::max<int64_t>(i + dim, 0) : std::min(i, dim);
    };
    int64_t b = clamp(start);
    int64_t e = end == kSliceEnd ? dim : clamp(end);
    int64_t len = e > b ? (e - b - 1) / step + 1 : 0;
    return {b, step, len};
  }
  // Negative step: indices walk down from start (clamped to [-1, dim-1])
  // and stop before end; kSliceEnd walks through index 0.
  auto clamp = [dim](int64_t i) {
    return i < 0 ? std::max<int64_t>(i + dim, -1) : std::min(i, dim - 1);
  };
  int64_t b = clamp(start);
  int64_t e = end == kSliceEnd ? -1 : clamp(end);
  // step >= INT64_MIN + 1 is not guaranteed: negate in unsigned arithmetic.
  uint64_t stride = 0 - static_cast<uint64_t>(step);
  int64_t len = b > e ? static_cast<int64_t>((static_cast<uint64_t>(b - e) - 1) / stride + 1) : 0;
  return {b, step, len};
}

void broadcast_to(const HostTensor& x, HostTensor& out) {
  check_same_dtype(x, out, "broadcast_to");
  StridedSpace<2> space;
  space.shape = out.shape();
  space.strides = {contiguous_strides(out.shape()), broadcast_strides(x.shape(), out.shape())};
  copy_strided(out.data(), x.data(), dtype_size(x.dtype()), space);
}

void transpose(const HostTensor& x, const std::vector<int64_t>& perm, HostTensor& out) {
  check_same_dtype(x, out, "transpose");
  AF_CHECK(static_cast<int>(perm.size()) == x.rank() && out.rank() == x.rank(),
           "transpose perm of size {} for {}", perm.size(), x.type_string());
  std::vector<int64_t> in_strides = contiguous_strides(x.shape());
  StridedSpace<2> space;
  space.shape = out.shape();
  space.strides[0] = contiguous_strides(out.shape());
  for (size_t i = 0; i < perm.size(); ++i) {
    AF_CHECK(out.shape()[i] == x.shape()[perm[i]], "transpose {} -> {}", x.type_string(),
             out.type_string());
    space.strides[1].push_back(in_strides[perm[i]]);
  }
  copy_strided(out.data(), x.data(), dtype_size(x.dtype()), space);
}

void reshape(const HostTensor& x, HostTensor& out) {
  check_same_dtype(x, out, "reshape");
  AF_CHECK(x.numel() == out.numel(), "reshape {} -> {}", x.type_string(), out.type_string());
  if (x.nbytes() != 0) std::memcpy(out.data(), x.data(), x.nbytes());
}

void slice(const HostTensor& x, const SliceAttrs& attrs, HostTensor& out) {
  check_same_dtype(x, out, "slice");
  AF_CHECK(out.rank() == x.rank(), "slice {} -> {}", x.type_string(), out.type_string());
  std::vector<int64_t> in_strides = contiguous_strides(x.shape());
  StridedSpace<2> space;
  space.shape = x.shape();
  space.strides = {contiguous_strides(out.shape()), in_strides};
  for (size_t i = 0; i < attrs.axes.size(); ++i) {
    const int64_t axis = attrs.axes[i];
    AF_CHECK(axis >= 0 && axis < x.rank(), "slice axis {}", axis);
    SliceRange r = slice_range(x.shape()[axis], attrs.starts[i], attrs.ends[i], attrs.steps[i]);
    AF_CHECK(r.length == out.shape()[axis],
             "slice of axis {} (size {}) has {} elements but the inferred shape says {}", axis,
             x.shape()[axis], r.length, out.shape()[axis]);
    space.shape[axis] = r.length;
    if (r.length > 0) space.offsets[1] += r.start * in_strides[axis];
    space.strides[1][axis] = r.step * in_strides[axis];
  }
  AF_CHECK(space.shape == out.shape(), "slice {} -> {}", x.type_string(), out.type_string());
  copy_strided(out.data(), x.data(), dtype_size(x.dtype()), space);
}

void concat(const std::vector<const HostTensor*>& xs, int64_t axis, HostTensor& out) {
  AF_CHECK(axis >= 0 && axis < out.rank(), "concat axis {} of {}", axis, out.type_string());
  std::vector<int64_t> out_strides = contiguous_strides(out.shape());
  int64_t at = 0;
  for (const HostTensor* x : xs) {
    check_same_dtype(*x, out, "concat");
    StridedSpace<2> space;
    space.shape = x->shape();
    space.strides = {out_strides, contiguous_strides(x->shape())};
    space.offsets[0] = at * out_strides[axis];
    copy_strided(out.data(), x->data(), dtype_size(x->dtype()), space);
    at += x->shape()[axis];
  }
  AF_CHECK(at == out.shape()[axis], "concat sizes add up to {}, output has {}", at,
           out.shape()[axis]);
}

void split(const HostTensor& x, int64_t axis, const std::vector<HostTensor*>& outs) {
  AF_CHECK(axis >= 0 && axis < x.rank(), "split axis {} of {}", axis, x.type_string());
  std::vector<int64_t> in_strides = contiguous_strides(x.shape());
  int64_t at = 0;
  for (HostTensor* out : outs) {
    check_same_dtype(x, *out, "split");
    StridedSpace<2> space;
    space.shape = out->shape();
    space.strides = {contiguous_strides(out->shape()), in_strides};
    space.offsets[1] = at * in_strides[axis];
    copy_strided(out->data(), x.data(), dtype_size(x.dtype()), space);
    at += out->shape()[axis];
  }
  AF_CHECK(at == x.shape()[axis], "split sizes add up to {}, input has {}", at, x.shape()[axis]);
}

void gather(const HostTensor& data, const HostTensor& indices, int64_t axis, HostTensor& out) {
  check_same_dtype(data, out, "gather");
  AF_CHECK(axis >= 0 && axis < data.rank() && is_integer(indices.dtype()), "gather {} by {}",
           data.type_string(), indices.type_string());
  const int64_t axis_size = data.shape()[axis];
  const int64_t outer = product(data.shape(), 0, axis);
  const int64_t inner = product(data.shape(), axis + 1, data.shape().size());
  AF_CHECK(out.numel() == outer * indices.numel() * inner, "gather {} by {} -> {}",
           data.type_string(), indices.type_string(), out.type_string());

  // Validate and normalize every index before moving any data.
  std::vector<int64_t> idx(static_cast<size_t>(indices.numel()));
  visit_dtype(indices.dtype(), [&](auto dtype_tag) {
    constexpr DType D = decltype(dtype_tag)::value;
    const auto* p = indices.data_as<StorageOf<D>>();
    for (size_t j = 0; j < idx.size(); ++j)
      idx[j] = static_cast<int64_t>(p[j]);
  });
  for (size_t j = 0; j < idx.size(); ++j) {
    int64_t v = idx[j];
    if (v < -axis_size || v >= axis_size)
      throw UserError(fmt::format(
          "gather index {} (element {} of the indices) is out of range for axis {} of size {}", v,
          j, axis, axis_size));
    idx[j] = v < 0 ? v + axis_size : v;
  }

  const size_t row_bytes = static_cast<size_t>(inner) * dtype_size(data.dtype());
  if (row_bytes == 0) return;
  const auto* src = static_cast<const unsigned char*>(data.data());
  auto* dst = static_cast<unsigned char*>(out.data());
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t j = 0; j < idx.size(); ++j) {
      std::memcpy(dst, src + static_cast<size_t>(o * axis_size + idx[j]) * row_bytes, row_bytes);
      dst += row_bytes;
    }
  }
}

void constant(const ConstantAttrs& attrs, HostTensor& out) {
  AF_CHECK(out.dtype() == attrs.dtype && out.shape() == attrs.shape, "constant {} for {}",
           out.type_string(), dtype_name(attrs.dtype));
  const int64_t n = out.numel();
  if (attrs.values.size() == 1) {
    // Round the splat once, then replicate its bytes.
    HostTensor one(out.dtype(), {});
    one.set_f64(0, attrs.values[0]);
    const size_t es = static_cast<size_t>(dtype_size(out.dtype()));
    auto* dst = static_cast<unsigned char*>(out.data());
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(dst + i * es, one.data(), es);
    return;
  }
  AF_CHECK(static_cast<int64_t>(attrs.values.size()) == n, "constant with {} values for {}",
           attrs.values.size(), out.type_string());
  for (int64_t i = 0; i < n; ++i)
    out.set_f64(i, attrs.values[i]);
}

void iota(int64_t axis, HostTensor& out) {
  AF_CHECK(axis >= 0 && axis < out.rank(), "iota axis {} of {}", axis, out.type_string());
  const int64_t dim = out.shape()[axis];
  const int64_t inner = product(out.shape(), axis + 1, out.shape().size());
  const int64_t n = out.numel();
  visit_dtype(out.dtype(), [&](auto dtype_tag) {
    constexpr DType D = decltype(dtype_tag)::value;
    auto* o = out.data_as<StorageOf<D>>();
    for (int64_t i = 0; i < n; ++i)
      o[i] = store_i64<D>((i / inner) % dim);
  });
}

}  // namespace autofuse::ref

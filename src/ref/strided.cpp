#include "ref/strided.h"

#include "autofuse/error.h"

namespace autofuse::ref {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_shape,
                                       const std::vector<int64_t>& out_shape) {
  AF_CHECK(in_shape.size() <= out_shape.size(), "broadcast from rank {} to rank {}",
           in_shape.size(), out_shape.size());
  std::vector<int64_t> in_strides = contiguous_strides(in_shape);
  std::vector<int64_t> strides(out_shape.size(), 0);
  size_t lead = out_shape.size() - in_shape.size();
  for (size_t d = 0; d < in_shape.size(); ++d) {
    AF_CHECK(in_shape[d] == out_shape[lead + d] || in_shape[d] == 1,
             "dim {} of size {} does not broadcast to {}", d, in_shape[d], out_shape[lead + d]);
    strides[lead + d] = in_shape[d] == 1 ? 0 : in_strides[d];
  }
  return strides;
}

namespace {
template <typename T>
void copy_typed(void* dst, const void* src, const StridedSpace<2>& space) {
  T* out = static_cast<T*>(dst);
  const T* in = static_cast<const T*>(src);
  for_each_row(space,
               [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
                 T* o = out + off[0];
                 const T* i = in + off[1];
                 if (st[0] == 1 && st[1] == 1) {
                   for (int64_t j = 0; j < n; ++j)
                     o[j] = i[j];
                 } else {
                   for (int64_t j = 0; j < n; ++j)
                     o[j * st[0]] = i[j * st[1]];
                 }
               });
}
}  // namespace

void copy_strided(void* dst, const void* src, int elem_size, const StridedSpace<2>& space) {
  switch (elem_size) {
    case 1:
      return copy_typed<uint8_t>(dst, src, space);
    case 2:
      return copy_typed<uint16_t>(dst, src, space);
    case 4:
      return copy_typed<uint32_t>(dst, src, space);
    case 8:
      return copy_typed<uint64_t>(dst, src, space);
  }
  AF_CHECK(false, "element size {}", elem_size);
}

}  // namespace autofuse::ref

// conv: ONNX Conv (cross-correlation with zero padding, groups, strides,
// dilations) over any number of spatial axes. Naive loops with double
// accumulation (bias first, then input channels and kernel positions in
// row-major order), rounded to the dtype once.
#include "ref/dtype_traits.h"
#include "ref/kernels.h"

namespace autofuse::ref {

namespace {

/// Row-major strides of `shape`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

/// Advances a row-major multi-index over `extent`; false after the last.
bool next_index(std::vector<int64_t>& index, const std::vector<int64_t>& extent) {
  for (size_t i = index.size(); i-- > 0;) {
    if (++index[i] < extent[i]) return true;
    index[i] = 0;
  }
  return false;
}

template <DType D>
void conv_typed(const HostTensor& x, const HostTensor& w, const HostTensor* bias,
                const ConvAttrs& attrs, HostTensor& out) {
  const int k = attrs.spatial_rank();
  AF_CHECK(x.rank() == k + 2 && w.rank() == k + 2 && out.rank() == k + 2, "conv {} * {} -> {}",
           x.type_string(), w.type_string(), out.type_string());
  const int64_t batch = x.shape()[0], channels = x.shape()[1];
  const int64_t out_channels = w.shape()[0], group_channels = w.shape()[1];
  const int64_t out_per_group = out_channels / attrs.group;
  AF_CHECK(group_channels * attrs.group == channels && out.shape()[1] == out_channels,
           "conv channels {} {} {}", channels, group_channels, out_channels);
  const std::vector<int64_t> in_dims(x.shape().begin() + 2, x.shape().end());
  const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  const std::vector<int64_t> out_dims(out.shape().begin() + 2, out.shape().end());
  const std::vector<int64_t> in_strides = strides_of(in_dims);
  int64_t in_size = 1, kernel_size = 1, out_size = 1;
  for (int i = 0; i < k; ++i) {
    in_size *= in_dims[i];
    kernel_size *= kernel[i];
    out_size *= out_dims[i];
  }

  const std::vector<double> xv = values_f64<D>(x), wv = values_f64<D>(w);
  std::vector<double> bv;
  if (bias != nullptr) bv = values_f64<D>(*bias);
  auto* o = out.data_as<StorageOf<D>>();
  if (out_size == 0) return;
  std::vector<int64_t> pos(static_cast<size_t>(k)), tap(static_cast<size_t>(k));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < out_channels; ++m) {
      const int64_t g = m / out_per_group;
      std::fill(pos.begin(), pos.end(), 0);
      int64_t flat = 0;
      do {
        double sum = bias != nullptr ? bv[static_cast<size_t>(m)] : 0.0;
        for (int64_t c = 0; c < group_channels; ++c) {
          const double* xc = xv.data() + (n * channels + g * group_channels + c) * in_size;
          const double* wc = wv.data() + (m * group_channels + c) * kernel_size;
          if (kernel_size == 0) break;
          std::fill(tap.begin(), tap.end(), 0);
          int64_t t = 0;
          do {
            int64_t offset = 0;
            bool inside = true;
            for (int i = 0; i < k && inside; ++i) {
              const int64_t p =
                  pos[i] * attrs.strides[i] - attrs.pad_begin(i) + tap[i] * attrs.dilations[i];
              inside = p >= 0 && p < in_dims[i];
              offset += p * in_strides[i];
            }
            if (inside) sum += xc[offset] * wc[t];
            ++t;
          } while (next_index(tap, kernel));
        }
        o[(n * out_channels + m) * out_size + flat] = store_f64<D>(sum);
        ++flat;
      } while (next_index(pos, out_dims));
    }
  }
}

}  // namespace

void conv(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const ConvAttrs& attrs,
          HostTensor& out) {
  AF_CHECK(x.dtype() == w.dtype() && out.dtype() == x.dtype() &&
               (bias == nullptr || bias->dtype() == x.dtype()),
           "conv {} * {} -> {}", x.type_string(), w.type_string(), out.type_string());
  visit_dtype(x.dtype(), [&](auto dtype_tag) {
    constexpr DType D = decltype(dtype_tag)::value;
    if constexpr (kIsFloat<D>) {
      conv_typed<D>(x, w, bias, attrs, out);
    } else {
      AF_CHECK(false, "conv does not take {}", dtype_name(D));
    }
  });
}

}  // namespace autofuse::ref

// conv: ONNX Conv (ops.h) for float dtypes, through oneDNN's convolution
// primitive (convolution_direct, forward inference) on plain row-major
// layouts: x as ncw/nchw/ncdhw, w as oiw.. or, with groups, as goiw.. (ONNX's
// [M, C/group, K...] is exactly [group, M/group, C/group, K...] in memory),
// bias [M], the output plain too, so no reorder runs around the call.
// oneDNN's dilation counts the gaps (ONNX's dilation - 1). Primitives are
// cached per geometry in the DnnlCache like matmul's; f16/bf16 run natively
// where oneDNN has kernels and through f32 copies elsewhere; f64 (no oneDNN
// kernel) is a direct loop over the pool. Degenerate problems (no output,
// no input channel or kernel tap) are handled here: the output is the bias,
// or zero.
#include <algorithm>
#include <cstring>

#include "autofuse/error.h"
#include "runtime/dnnl_support.h"

namespace autofuse::runtime {

namespace {

struct Geometry {
  int k = 0;  ///< spatial axes
  int64_t batch = 0, channels = 0, out_channels = 0, group_channels = 0, out_per_group = 0;
  std::array<int64_t, 3> in{}, kernel{}, out{};
  int64_t in_size = 1, kernel_size = 1, out_size = 1;
};

Geometry geometry(const TensorView& x, const TensorView& w, const ConvAttrs& attrs,
                  const TensorView& out) {
  Geometry g;
  g.k = attrs.spatial_rank();
  AF_CHECK(g.k >= 1 && g.k <= 3 && x.shape.size() == static_cast<size_t>(g.k + 2) &&
               w.shape.size() == x.shape.size() && out.shape.size() == x.shape.size(),
           "conv ranks {} {} {} for {} spatial axes", x.shape.size(), w.shape.size(),
           out.shape.size(), g.k);
  g.batch = x.shape[0];
  g.channels = x.shape[1];
  g.out_channels = w.shape[0];
  g.group_channels = w.shape[1];
  AF_CHECK(g.group_channels * attrs.group == g.channels && out.shape[1] == g.out_channels &&
               g.out_channels % attrs.group == 0 && out.shape[0] == g.batch,
           "conv channels");
  g.out_per_group = g.out_channels / attrs.group;
  for (int i = 0; i < g.k; ++i) {
    g.in[i] = x.shape[i + 2];
    g.kernel[i] = w.shape[i + 2];
    g.out[i] = out.shape[i + 2];
    g.in_size *= g.in[i];
    g.kernel_size *= g.kernel[i];
    g.out_size *= g.out[i];
  }
  return g;
}

/// Every output element is its channel's bias (or zero): no tap reads x.
void fill_with_bias(const Geometry& g, const TensorView* bias, const TensorView& out) {
  if (bias == nullptr) {
    std::memset(out.data, 0, out.nbytes());  // +0 in every float dtype
    return;
  }
  const size_t elem = dtype_size(out.dtype);
  auto* dst = static_cast<char*>(out.data);
  const auto* b = static_cast<const char*>(bias->data);
  for (int64_t plane = 0; plane < g.batch * g.out_channels; ++plane)
    for (int64_t i = 0; i < g.out_size; ++i)
      std::memcpy(dst + (plane * g.out_size + i) * elem, b + (plane % g.out_channels) * elem, elem);
}

// ---- f64: a direct loop -------------------------------------------------------

void conv_f64(const Geometry& g, const ConvAttrs& attrs, const double* x, const double* w,
              const double* bias, double* out, LibraryContext& ctx) {
  const auto run_plane = [&](int64_t plane, int) {
    const int64_t n = plane / g.out_channels, m = plane % g.out_channels;
    const int64_t grp = m / g.out_per_group;
    double* o = out + plane * g.out_size;
    std::array<int64_t, 3> pos{}, tap{};
    for (int64_t flat = 0; flat < g.out_size; ++flat) {
      int64_t rest = flat;
      for (int i = g.k - 1; i >= 0; --i) {
        pos[i] = rest % g.out[i];
        rest /= g.out[i];
      }
      double sum = bias != nullptr ? bias[m] : 0.0;
      for (int64_t c = 0; c < g.group_channels; ++c) {
        const double* xc = x + (n * g.channels + grp * g.group_channels + c) * g.in_size;
        const double* wc = w + (m * g.group_channels + c) * g.kernel_size;
        for (int64_t t = 0; t < g.kernel_size; ++t) {
          int64_t trest = t, offset = 0, stride = 1;
          bool inside = true;
          for (int i = g.k - 1; i >= 0; --i) {
            tap[i] = trest % g.kernel[i];
            trest /= g.kernel[i];
            const int64_t p =
                pos[i] * attrs.strides[i] - attrs.pad_begin(i) + tap[i] * attrs.dilations[i];
            inside = inside && p >= 0 && p < g.in[i];
            offset += p * stride;
            stride *= g.in[i];
          }
          if (inside) sum += xc[offset] * wc[t];
        }
      }
      o[flat] = sum;
    }
  };
  const int64_t planes = g.batch * g.out_channels;
  if (ctx.pool.num_threads() <= 1 || planes == 1) {
    for (int64_t p = 0; p < planes; ++p)
      run_plane(p, 0);
    return;
  }
  ctx.pool.parallel_for(planes, run_plane);
}

// ---- oneDNN ------------------------------------------------------------------

ConvKey conv_key(const Geometry& g, const ConvAttrs& attrs, DType dtype, bool bias) {
  ConvKey key;
  key.dtype = dtype;
  key.k = g.k;
  key.batch = g.batch;
  key.channels = g.channels;
  key.out_channels = g.out_channels;
  key.group = attrs.group;
  key.bias = bias;
  for (int i = 0; i < g.k; ++i) {
    key.in[i] = g.in[i];
    key.kernel[i] = g.kernel[i];
    key.out[i] = g.out[i];
    key.strides[i] = attrs.strides[i];
    key.dilations[i] = attrs.dilations[i];
    key.pad_begin[i] = attrs.pad_begin(i);
    key.pad_end[i] = attrs.pad_end(i);
  }
  return key;
}

DnnlEntry create_conv(const ConvKey& key, DType compute, const dnnl::engine& engine) {
  using dnnl::memory;
  const memory::data_type dt = dnnl_type(compute);
  memory::dims src{key.batch, key.channels}, dst{key.batch, key.out_channels}, weights;
  if (key.group > 1) weights.push_back(key.group);
  weights.push_back(key.out_channels / key.group);
  weights.push_back(key.channels / key.group);
  memory::dims strides, dilates, pad_l, pad_r;
  for (int i = 0; i < key.k; ++i) {
    src.push_back(key.in[i]);
    dst.push_back(key.out[i]);
    weights.push_back(key.kernel[i]);
    strides.push_back(key.strides[i]);
    dilates.push_back(key.dilations[i] - 1);
    pad_l.push_back(key.pad_begin[i]);
    pad_r.push_back(key.pad_end[i]);
  }
  const memory::desc src_md = plain_desc(src, dt), dst_md = plain_desc(dst, dt);
  const memory::desc w_md = plain_desc(weights, dt);
  using fwd = dnnl::convolution_forward;
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto algo = dnnl::algorithm::convolution_direct;
  const fwd::desc desc =
      key.bias ? fwd::desc(prop, algo, src_md, w_md, plain_desc({key.out_channels}, dt), dst_md,
                           strides, dilates, pad_l, pad_r)
               : fwd::desc(prop, algo, src_md, w_md, dst_md, strides, dilates, pad_l, pad_r);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const fwd::primitive_desc pd(desc, attr, engine);
  DnnlEntry e = make_entry(pd, engine, key.bias);
  e.prim = fwd(pd);
  return e;
}

void conv_dnnl(const Geometry& g, const ConvAttrs& attrs, const TensorView& x, const TensorView& w,
               const TensorView* bias, const TensorView& out, DnnlCache::Impl& cache,
               Scratch& scratch, int threads) {
  // Primitive creation reads the team size too (oneDNN blocks for it).
  const ScopedOmpThreads team(threads);
  const ConvKey key = conv_key(g, attrs, x.dtype, bias != nullptr);
  DnnlEntry& e = cache.get(
      cache.convs, key, key.dtype,
      [&](DType compute) { return create_conv(key, compute, *cache.engine); },
      [&] {
        return fmt::format("convolution of x [{}, {}, {}] with kernel [{}]", g.batch, g.channels,
                           fmt::join(g.in.begin(), g.in.begin() + g.k, ", "),
                           fmt::join(g.kernel.begin(), g.kernel.begin() + g.k, ", "));
      });

  // Scratch: [f32 copies of x, w, bias, out when staged][oneDNN scratchpad].
  const int64_t nx = x.numel(), nw = w.numel(), nb = bias != nullptr ? bias->numel() : 0;
  const int64_t no = out.numel();
  const size_t staged =
      e.staged_f32 ? align64(nx * 4) + align64(nw * 4) + align64(nb * 4) + align64(no * 4) : 0;
  char* base = static_cast<char*>(scratch.get(staged + align64(e.scratchpad_bytes) + 64));
  const void* src = x.data;
  const void* weights = w.data;
  const void* b = bias != nullptr ? bias->data : nullptr;
  void* dst = out.data;
  if (e.staged_f32) {
    float* x32 = reinterpret_cast<float*>(base);
    float* w32 = reinterpret_cast<float*>(base + align64(nx * 4));
    float* b32 = reinterpret_cast<float*>(base + align64(nx * 4) + align64(nw * 4));
    float* o32 =
        reinterpret_cast<float*>(base + align64(nx * 4) + align64(nw * 4) + align64(nb * 4));
    half_to_f32_n(x.dtype, x.data, x32, nx);
    half_to_f32_n(w.dtype, w.data, w32, nw);
    if (bias != nullptr) {
      half_to_f32_n(bias->dtype, bias->data, b32, nb);
      b = b32;
    }
    src = x32;
    weights = w32;
    dst = o32;
  }
  execute(cache, e, src, weights, b, dst, base + staged);
  if (e.staged_f32) f32_to_half_n(out.dtype, static_cast<const float*>(dst), out.data, no);
}

}  // namespace

void library_conv(const TensorView& x, const TensorView& w, const TensorView* bias,
                  const ConvAttrs& attrs, const TensorView& out, LibraryContext& ctx) {
  AF_CHECK(
      x.dtype == w.dtype && out.dtype == x.dtype && (bias == nullptr || bias->dtype == x.dtype),
      "conv of {} and {} into {}", dtype_name(x.dtype), dtype_name(w.dtype), dtype_name(out.dtype));
  AF_CHECK(is_float(x.dtype), "conv of {}", dtype_name(x.dtype));
  const Geometry g = geometry(x, w, attrs, out);
  if (g.batch == 0 || g.out_channels == 0 || g.out_size == 0) return;
  if (g.group_channels == 0 || g.kernel_size == 0) return fill_with_bias(g, bias, out);
  if (x.dtype == DType::f64) {
    return conv_f64(g, attrs, static_cast<const double*>(x.data),
                    static_cast<const double*>(w.data),
                    bias != nullptr ? static_cast<const double*>(bias->data) : nullptr,
                    static_cast<double*>(out.data), ctx);
  }
  if (ctx.dnnl_cache != nullptr) {
    conv_dnnl(g, attrs, x, w, bias, out, ctx.dnnl_cache->impl(), ctx.scratch,
              ctx.pool.num_threads());
    return;
  }
  DnnlCache temporary;
  conv_dnnl(g, attrs, x, w, bias, out, temporary.impl(), ctx.scratch, ctx.pool.num_threads());
}

}  // namespace autofuse::runtime

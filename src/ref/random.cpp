// Seeded random inputs and checksums. The generator is splitmix64 and floats
// are built from its bits, so the values are the same on every platform and
// standard library (std::uniform_*_distribution are implementation-defined).
#include "autofuse/ref/random.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ref/dtype_traits.h"

namespace autofuse {

namespace {

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

/// A float rounded toward zero to f16/bf16/float8, so values in (-1, 1)
/// stay there. These formats are sign-magnitude, so one step down of the
/// code is one step toward zero (the magnitude is not 0 when it overshoots).
template <DType D>
ref::StorageOf<D> to_narrow_toward_zero(float v) {
  using T = ref::DTypeTraits<D>;
  ref::StorageOf<D> h = T::store(v);
  if (std::fabs(T::load(h)) > std::fabs(v)) --h;
  return h;
}

template <DType D>
void fill_random(HostTensor& t, SplitMix64& rng, int64_t lo, int64_t hi) {
  auto* p = t.data_as<ref::StorageOf<D>>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = rng.next();
    if constexpr (D == DType::f64) {
      p[i] = static_cast<double>(bits >> 11) * 0x1p-52 - 1.0;  // 53 bits: exact
    } else if constexpr (ref::kIsFloat<D>) {
      const float v = static_cast<float>(bits >> 40) * 0x1p-23f - 1.0f;  // 24 bits: exact
      if constexpr (D == DType::f32)
        p[i] = v;
      else
        p[i] = to_narrow_toward_zero<D>(v);
    } else if constexpr (ref::kIsBool<D>) {
      p[i] = static_cast<uint8_t>(bits >> 63);
    } else {
      // Unsigned arithmetic: hi - lo may exceed int64 (span 0 = all 2^64).
      const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
      const uint64_t offset = span == 0 ? bits : bits % span;
      p[i] = ref::DTypeTraits<D>::store(
          static_cast<ref::ComputeOf<D>>(static_cast<uint64_t>(lo) + offset));
    }
  }
}

/// For each graph input, the smallest axis size over the gathers that read
/// it as indices (nullopt when none does).
std::vector<std::optional<int64_t>> gather_limits(const Graph& graph, const sym::Binding& binding) {
  std::vector<std::optional<int64_t>> limit_of_value(graph.values().size());
  for (const Node& node : graph.nodes()) {
    if (node.op != OpKind::Gather) continue;
    const int64_t axis = std::get<AxisAttrs>(node.attrs).axis;
    const Shape& data_shape = graph.value(node.inputs[0]).type.shape;
    const int64_t size = sym::evaluate(data_shape.at(axis), binding);
    std::optional<int64_t>& limit = limit_of_value[node.inputs[1]];
    limit = limit ? std::min(*limit, size) : size;
  }
  std::vector<std::optional<int64_t>> out;
  for (ValueId id : graph.inputs())
    out.push_back(limit_of_value[id]);
  return out;
}

}  // namespace

std::vector<int64_t> concrete_shape(const Shape& shape, const sym::Binding& binding) {
  std::vector<int64_t> dims;
  dims.reserve(shape.size());
  for (const sym::Expr& e : shape) {
    int64_t d = sym::evaluate(e, binding);
    if (d < 0) {
      std::vector<std::string> names;
      for (const sym::Expr& x : shape)
        names.push_back(x.to_string());
      std::vector<std::string> values;
      for (const auto& [name, value] : binding)
        values.push_back(fmt::format("{}={}", name, value));
      throw UserError(fmt::format("shape [{}] has a negative dim {} = {} under {}",
                                  fmt::join(names, ", "), e.to_string(), d,
                                  fmt::join(values, ", ")));
    }
    dims.push_back(d);
  }
  return dims;
}

std::vector<HostTensor> random_inputs(const Graph& graph, const sym::Binding& binding,
                                      uint64_t seed) {
  const std::vector<std::optional<int64_t>> limits = gather_limits(graph, binding);
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const TensorType& type = graph.value(graph.inputs()[i]).type;
    HostTensor t(type.dtype, concrete_shape(type.shape, binding));
    // One independent stream per input, so adding an input does not change
    // the values of the others.
    SplitMix64 rng{seed};
    SplitMix64 stream{rng.next() ^ (0xd1b54a32d192ed03ull * (i + 1))};
    int64_t lo = -8, hi = 8;
    if (is_integer(type.dtype)) {  // clipped to the dtype ([0, 8] unsigned, [-8, 7] i4)
      const auto [type_lo, type_hi] = integer_limits(type.dtype);
      lo = std::max(lo, type_lo);
      hi = std::min(hi, type_hi);
    }
    if (limits[i] && is_integer(type.dtype)) {
      // Valid for every gather reading this input: [-size, size), clipped to
      // the dtype. With size 0 no index is valid; zeros let the reference
      // report the error.
      const int64_t size = *limits[i];
      const auto [type_lo, type_hi] = integer_limits(type.dtype);
      lo = size == 0 ? 0 : std::max(-size, type_lo);
      hi = size == 0 ? 0 : std::min(size - 1, type_hi);
    }
    ref::visit_dtype(type.dtype,
                     [&](auto tag) { fill_random<decltype(tag)::value>(t, stream, lo, hi); });
    inputs.push_back(std::move(t));
  }
  return inputs;
}

Checksum checksum(const HostTensor& t) {
  Checksum c;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.get_f64(i);
    c.sum += v;
    c.abs_sum += std::fabs(v);
  }
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
  const auto* bytes = static_cast<const unsigned char*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ull;
  }
  c.hash = h;
  return c;
}

}  // namespace autofuse

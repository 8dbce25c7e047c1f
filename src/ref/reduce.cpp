// Reductions. The oracle is meant to be more accurate than the kernels it
// checks: float sum/mean/prod accumulate in double (in row-major input order)
// and round to the storage dtype once at the end. max/min are exact in the
// compute type and propagate NaN. Integers accumulate in int64 (u64: uint64)
// with wraparound (the same low bits as wrapping in the storage type); an
// integer mean is that sum divided by the count, truncated.
// Empty reductions give the identities of ops.h; an empty integer mean is 0
// (integers have no NaN; matches x/0 == 0).
#include <cmath>
#include <limits>

#include "ref/dtype_traits.h"
#include "ref/kernels.h"
#include "ref/strided.h"

namespace autofuse::ref {

namespace {

template <OpKind K, DType D>
void reduce_typed(const HostTensor& x, const std::vector<bool>& reduced, int64_t count,
                  HostTensor& out) {
  using enum OpKind;
  using T = DTypeTraits<D>;
  using C = typename T::Compute;
  constexpr bool kWide = kIsFloat<D> && (K == ReduceSum || K == ReduceMean || K == ReduceProd);
  using Acc = std::conditional_t<kWide, double, C>;

  Acc identity{};
  if constexpr (K == ReduceProd) {
    identity = Acc{1};
  } else if constexpr (K == ReduceMax) {
    if constexpr (kIsFloat<D>)
      identity = -std::numeric_limits<C>::infinity();
    else
      identity = T::kMin;
  } else if constexpr (K == ReduceMin) {
    if constexpr (kIsFloat<D>)
      identity = std::numeric_limits<C>::infinity();
    else
      identity = T::kMax;
  }
  std::vector<Acc> acc(static_cast<size_t>(out.numel()), identity);

  // Walk the input in row-major order; the accumulator index ignores the
  // reduced dims (stride 0).
  const std::vector<int64_t>& shape = x.shape();
  std::vector<int64_t> acc_strides(shape.size(), 0);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (reduced[d]) continue;
    acc_strides[d] = stride;
    stride *= shape[d];
  }
  AF_CHECK(stride == out.numel(), "reduce {} -> {}", x.type_string(), out.type_string());
  StridedSpace<2> space;
  space.shape = shape;
  space.strides = {acc_strides, contiguous_strides(shape)};
  const auto* in = x.data_as<typename T::Storage>();
  for_each_row(space,
               [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
                 Acc* a = acc.data() + off[0];
                 const auto* v = in + off[1];
                 for (int64_t i = 0; i < n; ++i) {
                   Acc& dst = a[i * st[0]];
                   C value = T::load(v[i * st[1]]);
                   if constexpr (K == ReduceSum || K == ReduceMean) {
                     if constexpr (kWide)
                       dst += static_cast<double>(value);
                     else
                       dst = wrap_add(dst, value);
                   } else if constexpr (K == ReduceProd) {
                     if constexpr (kWide)
                       dst *= static_cast<double>(value);
                     else
                       dst = wrap_mul(dst, value);
                   } else if constexpr (K == ReduceMax || K == ReduceMin) {
                     if constexpr (kIsFloat<D>) {
                       // Once dst is NaN no comparison is true, so NaN sticks.
                       if (std::isnan(value) || (K == ReduceMax ? value > dst : value < dst))
                         dst = value;
                     } else {
                       if (K == ReduceMax ? value > dst : value < dst) dst = value;
                     }
                   } else {
                     static_assert(kDependentFalse<Acc>, "not a reduction");
                   }
                 }
               });

  auto* o = out.data_as<typename T::Storage>();
  for (size_t i = 0; i < acc.size(); ++i) {
    Acc r = acc[i];
    if constexpr (K == ReduceMean) {
      if constexpr (kIsFloat<D>)
        r = count == 0 ? std::numeric_limits<double>::quiet_NaN() : r / count;
      else
        r = count == 0 ? 0 : r / count;  // count >= 1: no overflow
    }
    if constexpr (kWide)
      o[i] = store_f64<D>(r);
    else
      o[i] = T::store(r);
  }
}

}  // namespace

void reduce(OpKind op, const HostTensor& x, const std::vector<int64_t>& axes, HostTensor& out) {
  AF_CHECK(x.dtype() == out.dtype(), "reduce {} -> {}", x.type_string(), out.type_string());
  std::vector<bool> reduced(x.shape().size(), axes.empty());
  for (int64_t axis : axes) {
    AF_CHECK(axis >= 0 && axis < x.rank(), "reduce axis {} of rank {}", axis, x.rank());
    reduced[axis] = true;
  }
  int64_t count = 1;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) count *= x.shape()[d];

  visit_op(op, [&](auto op_tag) {
    constexpr OpKind K = decltype(op_tag)::value;
    if constexpr (op_class_of(K) == OpClass::Reduce) {
      visit_dtype(x.dtype(), [&](auto dtype_tag) {
        constexpr DType D = decltype(dtype_tag)::value;
        if constexpr (kIsFloat<D> || kIsInt<D>) {
          reduce_typed<K, D>(x, reduced, count, out);
        } else {
          AF_CHECK(false, "{} does not take {}", op_name(K), dtype_name(D));
        }
      });
    } else {
      AF_CHECK(false, "{} is not a reduction", op_name(K));
    }
  });
}

}  // namespace autofuse::ref

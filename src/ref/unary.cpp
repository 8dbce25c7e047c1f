// Unary elementwise ops. Floats compute in the dtype's compute type (f16/bf16
// and float8 in float, rounded on store); integers in int64 (u64: uint64),
// wrapping.
#include <cmath>

#include "ref/dtype_traits.h"
#include "ref/kernels.h"

namespace autofuse::ref {

namespace {

template <OpKind K, typename C>
auto apply_unary(C x) {
  using enum OpKind;
  if constexpr (std::is_same_v<C, bool>) {
    static_assert(K == Not);
    return !x;
  } else if constexpr (K == Not) {  // integers: bitwise (the store keeps the low bits)
    return C(~x);
  } else if constexpr (std::is_unsigned_v<C>) {  // u64
    if constexpr (K == Neg)
      return C(C{0} - x);
    else if constexpr (K == Abs || K == Relu)
      return x;
    else if constexpr (K == Sign)
      return C(x != 0 ? 1 : 0);
    else
      static_assert(kDependentFalse<C>, "not an integer unary op");
  } else if constexpr (std::is_integral_v<C>) {
    if constexpr (K == Neg)
      return wrap_neg(x);
    else if constexpr (K == Abs)
      return x < 0 ? wrap_neg(x) : x;
    else if constexpr (K == Relu)
      return x > 0 ? x : C{0};
    else if constexpr (K == Sign)
      return static_cast<C>((x > 0) - (x < 0));
    else
      static_assert(kDependentFalse<C>, "not an integer unary op");
  } else {
    if constexpr (K == Neg)
      return -x;
    else if constexpr (K == Abs)
      return std::fabs(x);
    else if constexpr (K == Exp)
      return std::exp(x);
    else if constexpr (K == Log)
      return std::log(x);
    else if constexpr (K == Sqrt)
      return std::sqrt(x);
    else if constexpr (K == Rsqrt)
      return C{1} / std::sqrt(x);
    else if constexpr (K == Reciprocal)
      return C{1} / x;
    else if constexpr (K == Sin)
      return std::sin(x);
    else if constexpr (K == Cos)
      return std::cos(x);
    else if constexpr (K == Tanh)
      return std::tanh(x);
    else if constexpr (K == Sigmoid)
      return C{1} / (C{1} + std::exp(-x));
    else if constexpr (K == Relu)
      return std::isnan(x) ? x : (x > 0 ? x : C{0});
    else if constexpr (K == Erf)
      return std::erf(x);
    else if constexpr (K == Floor)
      return std::floor(x);
    else if constexpr (K == Ceil)
      return std::ceil(x);
    else if constexpr (K == Round)
      return std::nearbyint(x);  // default mode: half to even
    else if constexpr (K == Sign)
      return std::isnan(x) ? x : (x > 0 ? C{1} : x < 0 ? C{-1} : C{0});
    else if constexpr (K == IsNan)
      return static_cast<bool>(std::isnan(x));
    else if constexpr (K == IsInf)
      return static_cast<bool>(std::isinf(x));
    else
      static_assert(kDependentFalse<C>, "not a float unary op");
  }
}

template <OpKind K, DType In>
void unary_typed(const HostTensor& x, HostTensor& out) {
  constexpr DType Out = result_dtype<K, In>();
  using InT = DTypeTraits<In>;
  using OutT = DTypeTraits<Out>;
  AF_CHECK(out.dtype() == Out && out.numel() == x.numel(), "{} output {} for input {}", op_name(K),
           out.type_string(), x.type_string());
  const auto* in = x.data_as<typename InT::Storage>();
  auto* o = out.data_as<typename OutT::Storage>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i)
    o[i] = OutT::store(apply_unary<K>(InT::load(in[i])));
}

}  // namespace

void unary(OpKind op, const HostTensor& x, HostTensor& out) {
  visit_op(op, [&](auto op_tag) {
    constexpr OpKind K = decltype(op_tag)::value;
    if constexpr (op_class_of(K) == OpClass::Unary) {
      visit_dtype(x.dtype(), [&](auto dtype_tag) {
        constexpr DType D = decltype(dtype_tag)::value;
        if constexpr (accepts_dtype<K, D>()) {
          unary_typed<K, D>(x, out);
        } else {
          AF_CHECK(false, "{} does not take {}", op_name(K), dtype_name(D));
        }
      });
    } else {
      AF_CHECK(false, "{} is not a unary op", op_name(K));
    }
  });
}

}  // namespace autofuse::ref

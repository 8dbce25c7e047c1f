// cast: every dtype to every dtype, rounding once.
//  * float -> float: round to nearest even (f64 -> f16/bf16/float8 without
//    double rounding); NaN stays NaN, overflow gives inf; a float8 target
//    follows the cast's `saturate` (ops.h, support/float8.h).
//  * float -> int: truncate toward zero; NaN -> 0; out-of-range values
//    saturate to the target type's min/max (C++ leaves this undefined; we
//    pick saturation, as Rust and most GPU hardware do).
//  * int -> int wraps (two's complement), int -> float rounds to nearest even.
//  * x -> i4/u4 rounds half to even and saturates to the 4-bit range from
//    any type (ONNX Cast-21); NaN -> 0.
//  * x -> bool is x != 0 (NaN is true); bool -> x is 0 or 1.
#include "ref/dtype_traits.h"
#include "ref/kernels.h"

namespace autofuse::ref {

namespace {

template <DType From, DType To>
StorageOf<To> convert(StorageOf<From> s, bool saturate) {
  using FromT = DTypeTraits<From>;
  using ToT = DTypeTraits<To>;
  if constexpr (From == To) {
    return s;
  } else if constexpr (To == DType::boolean) {
    return FromT::load(s) != 0 ? 1 : 0;
  } else if constexpr (From == DType::boolean) {
    return store_int<To>(int64_t{FromT::load(s)});  // 0 or 1: exact everywhere
  } else if constexpr (kIsFloat8<To>) {
    // One rounding to a float (exact from float types and small integers,
    // round-to-odd otherwise), then to the float8 type with `saturate`.
    float f;
    if constexpr (std::is_same_v<ComputeOf<From>, double>)
      f = f64_to_f32_round_odd(FromT::load(s));
    else if constexpr (kIsFloat<From>)
      f = FromT::load(s);
    else
      f = int_to_f32_round_odd(FromT::load(s));
    return ToT::store_cast(f, saturate);
  } else if constexpr (To == DType::i4 || To == DType::u4) {
    const auto v = FromT::load(s);
    if constexpr (kIsFloat<From>)
      return static_cast<StorageOf<To>>(float_to_int4(v, ToT::kMin, ToT::kMax));
    else if constexpr (std::is_same_v<ComputeOf<From>, uint64_t>)  // may exceed int64
      return static_cast<StorageOf<To>>(v > static_cast<uint64_t>(ToT::kMax) ? ToT::kMax : v);
    else
      return static_cast<StorageOf<To>>(v < ToT::kMin ? ToT::kMin : v > ToT::kMax ? ToT::kMax : v);
  } else if constexpr (kIsFloat<From>) {
    auto v = FromT::load(s);  // float or double
    if constexpr (kIsFloat<To>) {
      if constexpr (std::is_same_v<decltype(v), double>)
        return store_f64<To>(v);
      else if constexpr (To == DType::f64)
        return static_cast<double>(v);
      else
        return ToT::store(v);  // float -> f32/f16/bf16: one rounding
    } else {
      return static_cast<StorageOf<To>>(
          float_to_int_saturating<ComputeOf<To>>(v, ToT::kMin, ToT::kMax));
    }
  } else {
    return store_int<To>(FromT::load(s));
  }
}

template <DType From, DType To>
void cast_typed(const HostTensor& x, HostTensor& out, bool saturate) {
  const auto* in = x.data_as<StorageOf<From>>();
  auto* o = out.data_as<StorageOf<To>>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i)
    o[i] = convert<From, To>(in[i], saturate);
}

}  // namespace

void cast(const HostTensor& x, HostTensor& out, bool saturate) {
  AF_CHECK(x.numel() == out.numel(), "cast {} -> {}", x.type_string(), out.type_string());
  AF_CHECK(saturate || is_float8(out.dtype()), "cast to {} with saturate=false",
           dtype_name(out.dtype()));
  visit_dtype(x.dtype(), [&](auto from_tag) {
    visit_dtype(out.dtype(), [&](auto to_tag) {
      cast_typed<decltype(from_tag)::value, decltype(to_tag)::value>(x, out, saturate);
    });
  });
}

}  // namespace autofuse::ref

namespace autofuse {

HostTensor cast_tensor(const HostTensor& x, const CastAttrs& attrs) {
  HostTensor out(attrs.to, x.shape());
  ref::cast(x, out, attrs.saturate);
  return out;
}

}  // namespace autofuse

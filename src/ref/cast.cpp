// cast: every dtype to every dtype, rounding once.
//  * float -> float: round to nearest even (f64 -> f16/bf16 without double
//    rounding); NaN stays NaN, overflow gives inf.
//  * float -> int: truncate toward zero; NaN -> 0; out-of-range values
//    saturate to the target type's min/max (C++ leaves this undefined; we
//    pick saturation, as Rust and most GPU hardware do).
//  * int -> int wraps (two's complement), int -> float rounds to nearest even.
//  * x -> bool is x != 0 (NaN is true); bool -> x is 0 or 1.
#include "ref/dtype_traits.h"
#include "ref/kernels.h"

namespace autofuse::ref {

namespace {

template <DType From, DType To>
StorageOf<To> convert(StorageOf<From> s) {
  using FromT = DTypeTraits<From>;
  if constexpr (From == To) {
    return s;
  } else if constexpr (To == DType::boolean) {
    return FromT::load(s) != 0 ? 1 : 0;
  } else if constexpr (kIsFloat<From>) {
    auto v = FromT::load(s);  // float or double
    if constexpr (kIsFloat<To>) {
      if constexpr (std::is_same_v<decltype(v), double>)
        return store_f64<To>(v);
      else if constexpr (To == DType::f64)
        return static_cast<double>(v);
      else
        return DTypeTraits<To>::store(v);  // float -> f32/f16/bf16: one rounding
    } else {
      return float_to_int_saturating<StorageOf<To>>(v);
    }
  } else {
    return store_i64<To>(static_cast<int64_t>(FromT::load(s)));
  }
}

template <DType From, DType To>
void cast_typed(const HostTensor& x, HostTensor& out) {
  const auto* in = x.data_as<StorageOf<From>>();
  auto* o = out.data_as<StorageOf<To>>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i)
    o[i] = convert<From, To>(in[i]);
}

}  // namespace

void cast(const HostTensor& x, HostTensor& out) {
  AF_CHECK(x.numel() == out.numel(), "cast {} -> {}", x.type_string(), out.type_string());
  visit_dtype(x.dtype(), [&](auto from_tag) {
    visit_dtype(out.dtype(), [&](auto to_tag) {
      cast_typed<decltype(from_tag)::value, decltype(to_tag)::value>(x, out);
    });
  });
}

}  // namespace autofuse::ref

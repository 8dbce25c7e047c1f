// Compile-time dtype and op dispatch for the reference kernels: each dtype's
// storage and compute type, and visitors that turn a run-time DType / OpKind
// into a template argument once per tensor, outside the element loops.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "autofuse/error.h"
#include "autofuse/graph/dtype.h"
#include "autofuse/graph/ops.h"
#include "autofuse/ref/tensor.h"
#include "autofuse/support/half.h"
#include "ref/convert.h"
#include "support/float8.h"

namespace autofuse::ref {

template <DType D>
struct DTypeTraits;

/// Floats stored as themselves.
template <typename T>
struct NativeFloatTraits {
  using Storage = T;
  using Compute = T;
  static Compute load(Storage v) { return v; }
  static Storage store(Compute v) { return v; }
};
template <>
struct DTypeTraits<DType::f32> : NativeFloatTraits<float> {};
template <>
struct DTypeTraits<DType::f64> : NativeFloatTraits<double> {};
template <>
struct DTypeTraits<DType::f16> {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage v) { return f16_to_f32(v); }
  static Storage store(Compute v) { return f32_to_f16(v); }
};
template <>
struct DTypeTraits<DType::bf16> {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage v) { return bf16_to_f32(v); }
  static Storage store(Compute v) { return f32_to_bf16(v); }
};

/// float8: one byte, computed in float. `store` (an op's result, a
/// constant) rounds like IEEE: overflow gives inf (f8e5m2) or NaN (the types
/// without inf); `store_cast` follows a cast's `saturate` (ops.h).
template <float (*Load)(uint8_t), uint8_t (*Store)(float, bool)>
struct Float8Traits {
  using Storage = uint8_t;
  using Compute = float;
  static Compute load(Storage v) { return Load(v); }
  static Storage store(Compute v) { return Store(v, false); }
  static Storage store_cast(Compute v, bool saturate) { return Store(v, saturate); }
};
template <>
struct DTypeTraits<DType::f8e4m3fn> : Float8Traits<f8e4m3fn_to_f32, f32_to_f8e4m3fn> {};
template <>
struct DTypeTraits<DType::f8e4m3fnuz> : Float8Traits<f8e4m3fnuz_to_f32, f32_to_f8e4m3fnuz> {};
template <>
struct DTypeTraits<DType::f8e5m2> : Float8Traits<f8e5m2_to_f32, f32_to_f8e5m2> {};
template <>
struct DTypeTraits<DType::f8e5m2fnuz> : Float8Traits<f8e5m2fnuz_to_f32, f32_to_f8e5m2fnuz> {};

/// Integers of `Bits` bits stored in T compute in int64 (u64: uint64); the
/// store keeps the low `Bits` bits (C++20 modular; i4 sign-extends them).
template <typename T, int Bits = 8 * sizeof(T)>
struct IntTraits {
  using Storage = T;
  using Compute = std::conditional_t<std::is_same_v<T, uint64_t>, uint64_t, int64_t>;
  static constexpr bool kSigned = std::is_signed_v<T>;
  static constexpr bool kFullWidth = Bits == 8 * sizeof(T);
  static constexpr Compute kMin = kFullWidth ? std::numeric_limits<T>::lowest()
                                  : kSigned  ? -(Compute{1} << (Bits - 1))
                                             : 0;
  static constexpr Compute kMax = kFullWidth ? std::numeric_limits<T>::max()
                                  : kSigned  ? (Compute{1} << (Bits - 1)) - 1
                                             : (Compute{1} << Bits) - 1;
  static Compute load(Storage v) { return static_cast<Compute>(v); }
  static Storage store(Compute v) {
    if constexpr (kFullWidth) {
      return static_cast<Storage>(v);
    } else {
      const auto low = static_cast<uint64_t>(v) & static_cast<uint64_t>(kMax - kMin);
      if constexpr (kSigned)  // sign-extend bit Bits-1
        return static_cast<Storage>(static_cast<int64_t>(low ^ uint64_t{kMax + 1}) - (kMax + 1));
      else
        return static_cast<Storage>(low);
    }
  }
};
template <>
struct DTypeTraits<DType::i4> : IntTraits<int8_t, 4> {};
template <>
struct DTypeTraits<DType::u4> : IntTraits<uint8_t, 4> {};
template <>
struct DTypeTraits<DType::i8> : IntTraits<int8_t> {};
template <>
struct DTypeTraits<DType::u8> : IntTraits<uint8_t> {};
template <>
struct DTypeTraits<DType::i16> : IntTraits<int16_t> {};
template <>
struct DTypeTraits<DType::u16> : IntTraits<uint16_t> {};
template <>
struct DTypeTraits<DType::i32> : IntTraits<int32_t> {};
template <>
struct DTypeTraits<DType::u32> : IntTraits<uint32_t> {};
template <>
struct DTypeTraits<DType::i64> : IntTraits<int64_t> {};
template <>
struct DTypeTraits<DType::u64> : IntTraits<uint64_t> {};

/// bool is one byte holding 0 or 1 (any non-zero byte reads as true).
template <>
struct DTypeTraits<DType::boolean> {
  using Storage = uint8_t;
  using Compute = bool;
  static Compute load(Storage v) { return v != 0; }
  static Storage store(Compute v) { return v ? 1 : 0; }
};

template <DType D>
using StorageOf = typename DTypeTraits<D>::Storage;
template <DType D>
using ComputeOf = typename DTypeTraits<D>::Compute;

template <DType D>
inline constexpr bool kIsFloat = std::is_floating_point_v<ComputeOf<D>>;
template <DType D>
inline constexpr bool kIsInt =
    std::is_integral_v<ComputeOf<D>> && !std::is_same_v<ComputeOf<D>, bool>;
template <DType D>
inline constexpr bool kIsFloat8 = is_float8(D);
template <DType D>
inline constexpr bool kIsBool = D == DType::boolean;

template <typename T>
inline constexpr bool kDependentFalse = false;

/// Calls f(std::integral_constant<DType, D>{}) for the run-time dtype.
template <typename F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
#define AUTOFUSE_REF_VISIT_DTYPE(id, text, bytes, is_float, is_sint, is_uint) \
  case DType::id:                                                             \
    return f(std::integral_constant<DType, DType::id>{});
    AUTOFUSE_DTYPES(AUTOFUSE_REF_VISIT_DTYPE)
#undef AUTOFUSE_REF_VISIT_DTYPE
  }
  AF_CHECK(false, "unknown dtype {}", static_cast<int>(dtype));
  __builtin_unreachable();
}

/// Calls f(std::integral_constant<OpKind, K>{}) for the run-time op.
template <typename F>
decltype(auto) visit_op(OpKind op, F&& f) {
  switch (op) {
#define AUTOFUSE_REF_VISIT_OP(id, text, cls, rule, attrs) \
  case OpKind::id:                                        \
    return f(std::integral_constant<OpKind, OpKind::id>{});
    AUTOFUSE_OPS(AUTOFUSE_REF_VISIT_OP)
#undef AUTOFUSE_REF_VISIT_OP
  }
  AF_CHECK(false, "unknown op {}", static_cast<int>(op));
  __builtin_unreachable();
}

/// Compile-time copies of the op table columns the kernels dispatch on.
constexpr OpClass op_class_of(OpKind op) {
  constexpr OpClass kClasses[] = {
#define AUTOFUSE_REF_OP_CLASS(id, text, cls, rule, attrs) OpClass::cls,
      AUTOFUSE_OPS(AUTOFUSE_REF_OP_CLASS)
#undef AUTOFUSE_REF_OP_CLASS
  };
  return kClasses[static_cast<int>(op)];
}
constexpr DTypeRule dtype_rule_of(OpKind op) {
  constexpr DTypeRule kRules[] = {
#define AUTOFUSE_REF_OP_RULE(id, text, cls, rule, attrs) DTypeRule::rule,
      AUTOFUSE_OPS(AUTOFUSE_REF_OP_RULE)
#undef AUTOFUSE_REF_OP_RULE
  };
  return kRules[static_cast<int>(op)];
}

/// Whether an elementwise op with a fixed dtype rule takes input dtype D.
template <OpKind K, DType D>
constexpr bool accepts_dtype() {
  switch (dtype_rule_of(K)) {
    case DTypeRule::FloatSame:
    case DTypeRule::FloatToBool:
      return kIsFloat<D>;
    case DTypeRule::NumericSame:
      return kIsFloat<D> || kIsInt<D>;
    case DTypeRule::BoolOrIntSame:
      return kIsBool<D> || kIsInt<D>;
    case DTypeRule::AnyToBool:
      return true;
    case DTypeRule::Special:
      return false;
  }
  return false;
}

/// Output dtype of an elementwise op with a fixed dtype rule.
template <OpKind K, DType D>
constexpr DType result_dtype() {
  DTypeRule rule = dtype_rule_of(K);
  return rule == DTypeRule::FloatToBool || rule == DTypeRule::AnyToBool ? DType::boolean : D;
}

/// A double rounded once to a float dtype's storage (float8: through a
/// round-to-odd float, so no double rounding).
template <DType D>
StorageOf<D> store_f64(double v) {
  if constexpr (D == DType::f64)
    return v;
  else if constexpr (D == DType::f32)
    return f64_to_f32(v);
  else if constexpr (D == DType::f16)
    return f64_to_f16(v);
  else if constexpr (D == DType::bf16)
    return f64_to_bf16(v);
  else if constexpr (kIsFloat8<D>)
    return DTypeTraits<D>::store(f64_to_f32_round_odd(v));
  else
    static_assert(kDependentFalse<StorageOf<D>>, "store_f64 is for float dtypes");
}

/// The elements of a tensor of dtype D as doubles (matmul and conv
/// accumulate in double).
template <DType D>
std::vector<double> values_f64(const HostTensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  const auto* p = t.data_as<StorageOf<D>>();
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(DTypeTraits<D>::load(p[i]));
  return v;
}

/// An integer (int64 or uint64 value `v`) converted to any dtype: floats
/// round once, integers wrap, bool is v != 0.
template <DType D, typename I>
StorageOf<D> store_int(I v) {
  static_assert(std::is_same_v<I, int64_t> || std::is_same_v<I, uint64_t>);
  if constexpr (D == DType::f64)
    return static_cast<double>(v);
  else if constexpr (D == DType::f32)
    return static_cast<float>(v);
  else if constexpr (D == DType::f16)
    return f32_to_f16(int_to_f32_round_odd(v));
  else if constexpr (D == DType::bf16)
    return f32_to_bf16(int_to_f32_round_odd(v));
  else if constexpr (kIsFloat8<D>)
    return DTypeTraits<D>::store(int_to_f32_round_odd(v));
  else if constexpr (D == DType::boolean)
    return v != 0 ? 1 : 0;
  else
    return DTypeTraits<D>::store(static_cast<ComputeOf<D>>(v));
}
template <DType D>
StorageOf<D> store_i64(int64_t v) {
  return store_int<D>(v);
}

}  // namespace autofuse::ref

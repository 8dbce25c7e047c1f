// Binary elementwise ops and where, with NumPy broadcasting. Floats compute
// in the dtype's compute type; integers in int64 (u64: uint64) with
// wraparound (and/or/xor bitwise: the store keeps the dtype's low bits),
// division truncating and x/0 == x mod 0 == 0; mod is floor-mod for ints and
// floats; max/min of floats propagate NaN.
#include <cmath>
#include <limits>

#include "ref/dtype_traits.h"
#include "ref/kernels.h"
#include "ref/strided.h"

namespace autofuse::ref {

namespace {

/// base^exp modulo 2^64.
uint64_t uint_pow(uint64_t base, uint64_t exp) {
  uint64_t result = 1;
  for (; exp != 0; exp >>= 1) {
    if ((exp & 1) != 0) result *= base;
    base *= base;
  }
  return result;
}

/// base^exp modulo 2^64; a negative exponent gives 0 except for base +-1.
int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) != 0 ? -1 : 1;
    return 0;
  }
  return static_cast<int64_t>(uint_pow(static_cast<uint64_t>(base), static_cast<uint64_t>(exp)));
}

template <OpKind K, typename C>
auto apply_binary(C a, C b) {
  using enum OpKind;
  if constexpr (K == Eq)
    return a == b;
  else if constexpr (K == Ne)
    return a != b;
  else if constexpr (K == Lt)
    return a < b;
  else if constexpr (K == Le)
    return a <= b;
  else if constexpr (K == Gt)
    return a > b;
  else if constexpr (K == Ge)
    return a >= b;
  else if constexpr (std::is_same_v<C, bool>) {
    if constexpr (K == And)
      return a && b;
    else if constexpr (K == Or)
      return a || b;
    else if constexpr (K == Xor)
      return a != b;
    else
      static_assert(kDependentFalse<C>, "not a bool binary op");
  } else if constexpr (K == And) {  // integers: bitwise
    return C(a & b);
  } else if constexpr (K == Or) {
    return C(a | b);
  } else if constexpr (K == Xor) {
    return C(a ^ b);
  } else if constexpr (std::is_unsigned_v<C>) {  // u64: uint64 arithmetic wraps by itself
    if constexpr (K == Add)
      return C(a + b);
    else if constexpr (K == Sub)
      return C(a - b);
    else if constexpr (K == Mul)
      return C(a * b);
    else if constexpr (K == Div)
      return b == 0 ? C{0} : C(a / b);
    else if constexpr (K == Mod)
      return b == 0 ? C{0} : C(a % b);
    else if constexpr (K == Pow)
      return uint_pow(a, b);
    else if constexpr (K == Max)
      return a > b ? a : b;
    else if constexpr (K == Min)
      return a < b ? a : b;
    else
      static_assert(kDependentFalse<C>, "not an integer binary op");
  } else if constexpr (std::is_integral_v<C>) {
    if constexpr (K == Add)
      return wrap_add(a, b);
    else if constexpr (K == Sub)
      return wrap_sub(a, b);
    else if constexpr (K == Mul)
      return wrap_mul(a, b);
    else if constexpr (K == Div) {
      if (b == 0) return C{0};
      if (b == -1) return wrap_neg(a);  // INT64_MIN / -1 wraps instead of trapping
      return a / b;
    } else if constexpr (K == Mod) {
      if (b == 0 || b == -1) return C{0};
      C r = a % b;
      return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    } else if constexpr (K == Pow)
      return int_pow(a, b);
    else if constexpr (K == Max)
      return a > b ? a : b;
    else if constexpr (K == Min)
      return a < b ? a : b;
    else
      static_assert(kDependentFalse<C>, "not an integer binary op");
  } else {
    if constexpr (K == Add)
      return a + b;
    else if constexpr (K == Sub)
      return a - b;
    else if constexpr (K == Mul)
      return a * b;
    else if constexpr (K == Div)
      return a / b;
    else if constexpr (K == Pow)
      return std::pow(a, b);
    else if constexpr (K == Max)
      return std::isnan(a) || std::isnan(b) ? a + b : (a > b ? a : b);
    else if constexpr (K == Min)
      return std::isnan(a) || std::isnan(b) ? a + b : (a < b ? a : b);
    else if constexpr (K == Mod) {
      // fmod has the sign of the dividend; move it to the divisor's side.
      // A zero result takes the divisor's sign, as in NumPy.
      C r = std::fmod(a, b);
      if (r == 0) return std::copysign(C{0}, b);
      return (r < 0) != (b < 0) ? r + b : r;
    } else
      static_assert(kDependentFalse<C>, "not a float binary op");
  }
}

template <OpKind K, DType In>
void binary_typed(const HostTensor& a, const HostTensor& b, HostTensor& out) {
  constexpr DType Out = result_dtype<K, In>();
  using InT = DTypeTraits<In>;
  using OutT = DTypeTraits<Out>;
  AF_CHECK(out.dtype() == Out && b.dtype() == In, "{}({}, {}) -> {}", op_name(K), a.type_string(),
           b.type_string(), out.type_string());
  StridedSpace<3> space;
  space.shape = out.shape();
  space.strides = {contiguous_strides(out.shape()), broadcast_strides(a.shape(), out.shape()),
                   broadcast_strides(b.shape(), out.shape())};
  auto* o = out.data_as<typename OutT::Storage>();
  const auto* pa = a.data_as<typename InT::Storage>();
  const auto* pb = b.data_as<typename InT::Storage>();
  for_each_row(
      space, [&](const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& st) {
        auto* ro = o + off[0];
        const auto* ra = pa + off[1];
        const auto* rb = pb + off[2];
        for (int64_t i = 0; i < n; ++i)
          ro[i * st[0]] =
              OutT::store(apply_binary<K>(InT::load(ra[i * st[1]]), InT::load(rb[i * st[2]])));
      });
}

template <typename T>
void where_typed(const HostTensor& cond, const HostTensor& a, const HostTensor& b,
                 HostTensor& out) {
  StridedSpace<4> space;
  space.shape = out.shape();
  space.strides = {contiguous_strides(out.shape()), broadcast_strides(cond.shape(), out.shape()),
                   broadcast_strides(a.shape(), out.shape()),
                   broadcast_strides(b.shape(), out.shape())};
  T* o = out.data_as<T>();
  const uint8_t* pc = cond.data_as<uint8_t>();
  const T* pa = a.data_as<T>();
  const T* pb = b.data_as<T>();
  for_each_row(
      space, [&](const std::array<int64_t, 4>& off, int64_t n, const std::array<int64_t, 4>& st) {
        for (int64_t i = 0; i < n; ++i)
          o[off[0] + i * st[0]] =
              pc[off[1] + i * st[1]] != 0 ? pa[off[2] + i * st[2]] : pb[off[3] + i * st[3]];
      });
}

}  // namespace

void binary(OpKind op, const HostTensor& a, const HostTensor& b, HostTensor& out) {
  visit_op(op, [&](auto op_tag) {
    constexpr OpKind K = decltype(op_tag)::value;
    if constexpr (op_class_of(K) == OpClass::Binary) {
      visit_dtype(a.dtype(), [&](auto dtype_tag) {
        constexpr DType D = decltype(dtype_tag)::value;
        if constexpr (accepts_dtype<K, D>()) {
          binary_typed<K, D>(a, b, out);
        } else {
          AF_CHECK(false, "{} does not take {}", op_name(K), dtype_name(D));
        }
      });
    } else {
      AF_CHECK(false, "{} is not an elementwise binary op", op_name(K));
    }
  });
}

void where(const HostTensor& cond, const HostTensor& a, const HostTensor& b, HostTensor& out) {
  AF_CHECK(cond.dtype() == DType::boolean && a.dtype() == b.dtype() && out.dtype() == a.dtype(),
           "where({}, {}, {}) -> {}", cond.type_string(), a.type_string(), b.type_string(),
           out.type_string());
  // Pure selection: copy the storage bits, no conversion.
  switch (dtype_size(a.dtype())) {
    case 1:
      return where_typed<uint8_t>(cond, a, b, out);
    case 2:
      return where_typed<uint16_t>(cond, a, b, out);
    case 4:
      return where_typed<uint32_t>(cond, a, b, out);
    case 8:
      return where_typed<uint64_t>(cond, a, b, out);
  }
  AF_CHECK(false, "element size {}", dtype_size(a.dtype()));
}

}  // namespace autofuse::ref

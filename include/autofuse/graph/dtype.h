// Element types. One X-macro list drives the enum, names, sizes and traits.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace autofuse {

// `bytes` is the size of one element in memory (autofuse's storage). The
// float8 types (ONNX FLOAT8E4M3FN, ...; conversions in support/float8.h) are
// storage types computed in f32, like f16 and bf16. The 4-bit integers are
// stored unpacked, one per byte (i4 sign-extended); only ONNX TensorProto
// files pack them two to a byte.
//
//       enum ident  text    bytes  float  signed-int  unsigned-int
#define AUTOFUSE_DTYPES(X)                           \
  X(f32, "f32", 4, true, false, false)               \
  X(f16, "f16", 2, true, false, false)               \
  X(bf16, "bf16", 2, true, false, false)             \
  X(f64, "f64", 8, true, false, false)               \
  X(i8, "i8", 1, false, true, false)                 \
  X(u8, "u8", 1, false, false, true)                 \
  X(i32, "i32", 4, false, true, false)               \
  X(i64, "i64", 8, false, true, false)               \
  X(boolean, "bool", 1, false, false, false)         \
  X(i16, "i16", 2, false, true, false)               \
  X(u16, "u16", 2, false, false, true)               \
  X(u32, "u32", 4, false, false, true)               \
  X(u64, "u64", 8, false, false, true)               \
  X(i4, "i4", 1, false, true, false)                 \
  X(u4, "u4", 1, false, false, true)                 \
  X(f8e4m3fn, "f8e4m3fn", 1, true, false, false)     \
  X(f8e4m3fnuz, "f8e4m3fnuz", 1, true, false, false) \
  X(f8e5m2, "f8e5m2", 1, true, false, false)         \
  X(f8e5m2fnuz, "f8e5m2fnuz", 1, true, false, false)

enum class DType : uint8_t {
#define AUTOFUSE_DTYPE_ENUM(id, text, bytes, is_float, is_sint, is_uint) id,
  AUTOFUSE_DTYPES(AUTOFUSE_DTYPE_ENUM)
#undef AUTOFUSE_DTYPE_ENUM
};

std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
int dtype_size(DType t);
bool is_float(DType t);
bool is_integer(DType t);  ///< signed or unsigned integer, not bool
bool is_signed_integer(DType t);
bool is_unsigned_integer(DType t);
inline bool is_bool(DType t) {
  return t == DType::boolean;
}
/// One of the four float8 types.
constexpr bool is_float8(DType t) {
  return t == DType::f8e4m3fn || t == DType::f8e4m3fnuz || t == DType::f8e5m2 ||
         t == DType::f8e5m2fnuz;
}
/// i4 or u4 (stored one per byte).
constexpr bool is_int4(DType t) {
  return t == DType::i4 || t == DType::u4;
}
/// The smallest and largest value of an integer dtype (u64's largest
/// clipped to INT64_MAX); {0, 1} for bool; internal error for the others.
std::pair<int64_t, int64_t> integer_limits(DType t);
/// Float or integer (what arithmetic accepts).
inline bool is_numeric(DType t) {
  return is_float(t) || is_integer(t);
}

/// All dtypes, in list order (for tests and tables).
inline constexpr DType kAllDTypes[] = {
#define AUTOFUSE_DTYPE_LIST(id, text, bytes, is_float, is_sint, is_uint) DType::id,
    AUTOFUSE_DTYPES(AUTOFUSE_DTYPE_LIST)
#undef AUTOFUSE_DTYPE_LIST
};

}  // namespace autofuse

// Element types. One X-macro list drives the enum, names, sizes and traits.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace autofuse {

//       enum ident  text    bytes  float  signed-int  unsigned-int
#define AUTOFUSE_DTYPES(X)               \
  X(f32, "f32", 4, true, false, false)   \
  X(f16, "f16", 2, true, false, false)   \
  X(bf16, "bf16", 2, true, false, false) \
  X(f64, "f64", 8, true, false, false)   \
  X(i8, "i8", 1, false, true, false)     \
  X(u8, "u8", 1, false, false, true)     \
  X(i32, "i32", 4, false, true, false)   \
  X(i64, "i64", 8, false, true, false)   \
  X(boolean, "bool", 1, false, false, false)

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
inline bool is_bool(DType t) {
  return t == DType::boolean;
}
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

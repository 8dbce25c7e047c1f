#include "autofuse/graph/dtype.h"

#include <cstdint>

#include "autofuse/error.h"

namespace autofuse {

namespace {
struct DTypeInfo {
  std::string_view name;
  int bytes;
  bool is_float, is_sint, is_uint;
};
constexpr DTypeInfo kInfo[] = {
#define AUTOFUSE_DTYPE_INFO(id, text, bytes, is_float, is_sint, is_uint) \
  {text, bytes, is_float, is_sint, is_uint},
    AUTOFUSE_DTYPES(AUTOFUSE_DTYPE_INFO)
#undef AUTOFUSE_DTYPE_INFO
};
const DTypeInfo& info(DType t) {
  return kInfo[static_cast<int>(t)];
}
}  // namespace

std::string_view dtype_name(DType t) {
  return info(t).name;
}
std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : kAllDTypes)
    if (info(t).name == name) return t;
  return std::nullopt;
}
int dtype_size(DType t) {
  return info(t).bytes;
}
bool is_float(DType t) {
  return info(t).is_float;
}
bool is_integer(DType t) {
  return info(t).is_sint || info(t).is_uint;
}
bool is_signed_integer(DType t) {
  return info(t).is_sint;
}
bool is_unsigned_integer(DType t) {
  return info(t).is_uint;
}

std::pair<int64_t, int64_t> integer_limits(DType t) {
  switch (t) {
    case DType::i4:
      return {-8, 7};
    case DType::u4:
      return {0, 15};
    case DType::i8:
      return {INT8_MIN, INT8_MAX};
    case DType::u8:
      return {0, UINT8_MAX};
    case DType::i16:
      return {INT16_MIN, INT16_MAX};
    case DType::u16:
      return {0, UINT16_MAX};
    case DType::i32:
      return {INT32_MIN, INT32_MAX};
    case DType::u32:
      return {0, UINT32_MAX};
    case DType::i64:
    case DType::u64:
      return {t == DType::i64 ? INT64_MIN : 0, INT64_MAX};
    case DType::boolean:
      return {0, 1};
    default:
      break;
  }
  AF_CHECK(false, "{} is not an integer dtype", dtype_name(t));
  return {0, 0};
}

}  // namespace autofuse

#include "autofuse/graph/dtype.h"

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

}  // namespace autofuse

#include "autofuse/ascir/vector_cost.h"

namespace autofuse::ascir {

bool is_transcendental(const AscNode& n) {
  if (n.kind != AscKind::Compute || !is_float(compute_dtype(n.dtype))) return false;
  switch (n.op) {
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tanh:
    case OpKind::Sigmoid:
    case OpKind::Erf:
    case OpKind::Pow:
      return true;
    default:
      return false;
  }
}

int vector_op_cost(const AscNode& n) {
  const bool software_float = n.dtype == DType::f16 || is_float8(n.dtype);
  switch (n.kind) {
    case AscKind::Load:
    case AscKind::Gather:
      if (software_float) return 8;
      return dtype_size(n.dtype) == 2 ? 3 : 1;
    case AscKind::Compute:
      return is_transcendental(n) ? 20 : 1;
    case AscKind::Store:
      if (software_float) return 20;
      return n.dtype == DType::bf16 ? 13 : 1;
    default:
      return 0;
  }
}

}  // namespace autofuse::ascir

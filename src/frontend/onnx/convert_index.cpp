// ONNX ops built from index arithmetic (iota, compares, where): ArgMax, ArgMin,
// Hardmax, Trilu, EyeLike, OneHot.
#include "frontend/onnx/converter.h"

namespace autofuse::frontend::onnx_import {

void register_index_ops(ConverterTable& table) {
  (void)table;
}

}  // namespace autofuse::frontend::onnx_import

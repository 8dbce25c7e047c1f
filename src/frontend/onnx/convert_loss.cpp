// ONNX loss ops decomposed into primitives: NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss. The target picks its class through a one-hot
// compare (iota over the class axis == target) and a sum over that axis,
// never a gather, so an ignored target (ignore_index, possibly outside
// [0, C)) reads nothing. Semantics follow the ops' function bodies (opsets
// 13..22): loss = -input[n, target, d...] * weight[target] (0 where the
// target is ignore_index); "mean" divides the sum by the sum of those
// weights (by the count of non-ignored targets without a weight input), so
// it is NaN (0/0) when every target is ignored. A target outside [0, C)
// that is not ignore_index is invalid input; here it contributes 0.
#include <fmt/format.h>

#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

/// The (N, C, d1, ...) input, which must be a float tensor of rank >= 2.
Tensor class_input(NodeContext& ctx, int i) {
  Tensor x = ctx.input(i);
  if (!is_float(x.dtype()) || x.rank() < 2)
    ctx.fail(fmt::format("input {} is {}; it must be a float tensor (N, C, d1, ...)", i,
                         x.type().to_string()));
  return x;
}

/// NegativeLogLikelihoodLoss on log-probabilities `lp` (compute dtype),
/// reading target (input `target_i`), weight (input `weight_i`, optional)
/// and the reduction / ignore_index attributes.
Tensor nll_loss(NodeContext& ctx, Tensor lp, int target_i, int weight_i) {
  GraphBuilder& b = ctx.builder();
  const DType dt = lp.dtype();
  const Shape s = lp.shape();  // copied: new nodes may move the graph's storage
  const int rank = lp.rank();

  Tensor target = ctx.input(target_i);
  Shape sample_shape = s;  // (N, d1, ...)
  sample_shape.erase(sample_shape.begin() + 1);
  if (!is_integer(target.dtype()) || target.rank() != rank - 1)
    ctx.fail(fmt::format("target is {}; it must be an integer tensor of rank {}",
                         target.type().to_string(), rank - 1));
  for (int d = 0; d < rank - 1; ++d)
    if (!sym::proven_eq(target.shape()[d], sample_shape[d]))
      ctx.fail(fmt::format("target {} does not match the input {} (it must be (N, d1, ...))",
                           target.type().to_string(), lp.type().to_string()));
  const std::string reduction = ctx.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    ctx.fail(fmt::format("reduction \"{}\" is not one of \"none\", \"sum\", \"mean\"", reduction));

  // one_hot[n, c, d...] = (c == target[n, d...])
  Shape class_shape(rank, sym::Expr(1));
  class_shape[1] = s[1];
  Tensor t = cast_if(b, target, DType::i64);
  Shape t_unsqueezed = target.shape();
  t_unsqueezed.insert(t_unsqueezed.begin() + 1, sym::Expr(1));
  Tensor one_hot =
      b.binary(OpKind::Eq, b.iota(DType::i64, class_shape, 1), b.reshape(t, t_unsqueezed));
  Tensor zero = b.scalar(0, dt);
  auto pick = [&](Tensor per_class) {
    return b.reduce_sum(b.where(one_hot, per_class, zero), {1}, /*keepdims=*/false);
  };
  Tensor loss = b.unary(OpKind::Neg, pick(lp));

  std::optional<Tensor> sample_weight;
  if (ctx.has_input(weight_i)) {
    Tensor w = ctx.input(weight_i);
    if (w.rank() != 1 || !sym::proven_eq(w.shape()[0], s[1]) || !is_float(w.dtype()))
      ctx.fail(fmt::format("weight is {}; it must be a float vector of the {} classes",
                           w.type().to_string(), s[1].to_string()));
    sample_weight = pick(b.reshape(cast_if(b, w, dt), class_shape));
    loss = b.mul(loss, *sample_weight);
  }
  if (ctx.has_attr("ignore_index")) {
    const int64_t ignore = ctx.attr_int("ignore_index");
    if (ignore < -(int64_t{1} << 53) || ignore > (int64_t{1} << 53))
      ctx.unsupported(fmt::format("ignore_index {} beyond 2^53", ignore));
    Tensor ignored = b.binary(OpKind::Eq, t, b.scalar(static_cast<double>(ignore), DType::i64));
    sample_weight = b.where(ignored, zero, sample_weight ? *sample_weight : b.scalar(1, dt));
    loss = b.where(ignored, zero, loss);  // not loss * 0: the picked value may be inf
  }
  if (reduction == "none") return loss;
  Tensor sum = b.reduce_sum(loss, {}, /*keepdims=*/false);
  if (reduction == "sum") return sum;
  if (!sample_weight) return b.reduce_mean(loss, {}, /*keepdims=*/false);
  return b.div(sum, b.reduce_sum(*sample_weight, {}, /*keepdims=*/false));
}

// NegativeLogLikelihoodLoss(input, target, weight?)
void convert_nll_loss(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = class_input(ctx, 0);
  Tensor loss = nll_loss(ctx, cast_if(b, x, float_compute_dtype(x.dtype())), 1, 2);
  ctx.set_output(0, cast_if(b, loss, x.dtype()));
}

// SoftmaxCrossEntropyLoss(scores, labels, weights?) -> (loss, log_prob?):
// NLL of LogSoftmax(scores) along the class axis.
void convert_softmax_cross_entropy(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  Tensor x = class_input(ctx, 0);
  Tensor xc = cast_if(b, x, float_compute_dtype(x.dtype()));
  Tensor shifted = b.sub(xc, b.reduce_max(xc, {1}, /*keepdims=*/true));
  Tensor sum = b.reduce_sum(b.exp(shifted), {1}, /*keepdims=*/true);
  Tensor log_prob = b.sub(shifted, b.unary(OpKind::Log, sum));
  ctx.set_output(0, cast_if(b, nll_loss(ctx, log_prob, 1, 2), x.dtype()));
  if (ctx.num_outputs() > 1 && ctx.has_output(1))
    ctx.set_output(1, cast_if(b, log_prob, x.dtype()));
}

}  // namespace

void register_loss_ops(ConverterTable& table) {
  table["NegativeLogLikelihoodLoss"] = convert_nll_loss;
  table["SoftmaxCrossEntropyLoss"] = convert_softmax_cross_entropy;
}

}  // namespace autofuse::frontend::onnx_import

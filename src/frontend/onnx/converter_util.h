// Helpers shared by the converter files of the importer core (elementwise,
// shape, reduce): reading known inputs and axes, and folding known values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/onnx/converter.h"

namespace autofuse::frontend::onnx_import {

/// A fresh graph value name for output i (derived from its ONNX name).
std::string output_name(NodeContext& ctx, int i);

/// The known elements of input i; fails naming `what` when not known at
/// import.
std::vector<sym::Expr> require_known(NodeContext& ctx, int i, std::string_view what);
/// The elements of input i as integer constants; fails naming `what`
/// otherwise.
std::vector<int64_t> require_const_ints(NodeContext& ctx, int i, std::string_view what);
/// Axes from input `input` (when given) or else attribute `attr`; nullopt
/// when neither is present.
std::optional<std::vector<int64_t>> axes_input_or_attr(NodeContext& ctx, int input,
                                                       std::string_view attr);
/// `axis` in [-rank, rank) normalized to [0, rank); fails otherwise.
int64_t normalize_axis(const NodeContext& ctx, int64_t axis, int64_t rank, std::string_view what);
/// The dtype of an ONNX DataType attribute value; UnsupportedError (via
/// ctx.unsupported) for ones autofuse lacks (STRING, COMPLEX*, ...).
DType dtype_of_onnx(const NodeContext& ctx, int64_t onnx_type, std::string_view what);

/// Input `i`, which must have a float dtype; fails naming it otherwise.
Tensor float_input(NodeContext& ctx, int i);
/// Input `i`, which must be numeric (float or integer); fails otherwise.
Tensor numeric_input(NodeContext& ctx, int i);
/// `x` cast to `to` (x itself when it has that dtype).
Tensor cast_if(GraphBuilder& b, Tensor x, DType to);
/// The type a float computation runs in where the result is not simply
/// rounded (losses and math functions summing or iterating): f64 stays f64,
/// every other type (f16, bf16, f8, f32) computes in f32. The kernels elide
/// such casts, so this costs nothing once fused.
DType float_compute_dtype(DType dt);
/// f16/bf16 widened to f32 where intermediate results (sums of
/// exponentials, variances) would lose too much; other types unchanged.
DType widened_dtype(DType dt);

/// Known rank-0/1 operands of an elementwise node, NumPy-broadcast: the
/// common length, and whether the result is a scalar.
struct KnownOperands {
  std::vector<std::vector<sym::Expr>> values;
  size_t length = 1;
  bool scalar = true;
  /// Element k of operand i under broadcasting.
  const sym::Expr& at(size_t i, size_t k) const {
    return values[i].size() == 1 ? values[i][0] : values[i][k];
  }
};
/// Every input known (and rank <= 1) and broadcast-compatible, else nullopt.
std::optional<KnownOperands> known_operands(NodeContext& ctx);

/// A rank-0 tensor holding the size expression `e` (>= 0) at run time: the
/// last element of iota([e + 1]), which keeps it symbolic and fuses as an
/// index expression.
Tensor size_tensor(GraphBuilder& b, const sym::Expr& e, DType dtype);

/// Whether `e` is >= 0 for every value of the symbols.
bool proven_non_negative(const sym::Expr& e);

/// The pads auto_pad `mode` (VALID, SAME_UPPER, SAME_LOWER) asks for on
/// spatial axis `i` of a Conv or pool: {begin, end}. SAME_* pad so that out
/// = ceil(in / stride), the odd unit at the end (UPPER) or the beginning
/// (LOWER). With stride 1 the total is dilation * (K - 1) for any input
/// size; otherwise the size must be known (UnsupportedError).
std::pair<int64_t, int64_t> auto_pads(NodeContext& ctx, const std::string& mode, int i,
                                      const sym::Expr& in, int64_t kernel, int64_t stride,
                                      int64_t dilation);

/// q (x / scale, or an integer accumulator times its scale) rounded to
/// nearest even, plus the zero point (both in q's type), saturated to the
/// limits of the integer type qdt and cast to it: NaN goes to the lower
/// limit (as the reference's and ONNX Runtime's integer conversion of NaN
/// does), +-inf saturate. (QuantizeLinear, QLinearMatMul, QLinearConv.)
Tensor round_and_saturate(GraphBuilder& b, Tensor q, std::optional<Tensor> zero_point, DType qdt);

/// The row-major flat index (int64) of coordinates (one tensor per dim,
/// broadcast together) into a tensor of shape `dims`.
Tensor flat_index(GraphBuilder& b, const std::vector<Tensor>& coords, const Shape& dims);

/// data (flattened over its first `lead` dims) gathered at `flat` where
/// `valid`; an invalid position reads past the end, which the gather
/// rejects at run time, so a bad index never yields a wrong element.
Tensor gather_flat(GraphBuilder& b, Tensor data, size_t lead, Tensor flat, Tensor valid);

/// Registered from convert_shape.cpp: Slice, Gather, Concat, Split, Pad
/// (convert_select.cpp).
void register_select_ops(ConverterTable& table);

}  // namespace autofuse::frontend::onnx_import

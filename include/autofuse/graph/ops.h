// The op set of the graph IR. One X-macro list (AUTOFUSE_OPS) drives the
// OpKind enum, the text names used by the printer and parser, each op's
// class (which inference and reference code handles it), arity and
// attribute type. Attributes are typed structs, one per attribute kind.
//
// Semantics worth knowing (the reference interpreter implements exactly these):
//  * Binary, compare, logical ops and where broadcast NumPy-style. Operand
//    dtypes must match (no implicit promotion; insert a cast).
//  * not/and/or/xor are logical on bool and bitwise on integers (two's
//    complement in the dtype's width, i4/u4 in 4 bits).
//  * Integer div truncates toward zero; integer x/0 == 0 and x mod 0 == 0.
//    mod is floor-mod (the sign of the divisor) for ints and floats.
//  * round is round-half-to-even (ONNX/NumPy); sign(0) == 0; relu(NaN) = NaN.
//  * reduce_* with empty `axes` reduces every axis. reduce_mean of an int
//    tensor truncates. Reducing an empty axis gives the identity (0 for sum,
//    1 for prod, -inf/+inf (or the int limits) for max/min, NaN for mean).
//  * Axes in attributes may be negative when written; nodes store them
//    normalized to [0, rank).
//  * slice follows Python: negative start/end count from the end, both are
//    clamped to the dim; step != 0 (negative steps walk backwards).
//  * gather follows ONNX Gather: out = data.shape[:axis] + indices.shape +
//    data.shape[axis+1:]; negative indices count from the end; an index out
//    of range is a run-time UserError.
//  * matmul follows NumPy matmul for rank >= 2 with broadcast batch dims.
//  * conv is ONNX Conv (cross-correlation): x [N, C, D1..Dk], w [M, C/group,
//    K1..Kk], optional bias [M] -> [N, M, O1..Ok] with Oi = floor((Di +
//    pad_begin_i + pad_end_i - dilation_i * (Ki - 1) - 1) / stride_i) + 1;
//    zero padding; k = 1..3 spatial dims.
//  * f16/bf16 and the float8 types are computed in f32 and rounded to the
//    storage type per op (nearest even; overflow gives inf, or NaN for the
//    float8 types without inf). Only cast saturates (CastAttrs).
//  * Integers wrap in their own width (i4/u4: 4 bits). cast follows ONNX:
//    float -> int truncates (NaN -> 0, out of range saturates), int -> int
//    wraps, except that a cast to i4/u4 rounds half to even and saturates
//    to [-8, 7] / [0, 15] from any type (ONNX Cast-21).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "autofuse/graph/dtype.h"
#include "autofuse/sym/expr.h"

namespace autofuse {

using Shape = std::vector<sym::Expr>;

/// Which family of inference/reference code handles an op.
enum class OpClass : uint8_t {
  Unary,        // one input, same shape
  Binary,       // two inputs, broadcast
  Where,        // cond, a, b; broadcast
  Cast,         // CastAttrs
  BroadcastTo,  // ShapeAttrs
  Reduce,       // ReduceAttrs
  Transpose,    // TransposeAttrs
  Reshape,      // ShapeAttrs
  Slice,        // SliceAttrs
  Concat,       // AxisAttrs, variadic
  Split,        // SplitAttrs, several outputs
  Gather,       // AxisAttrs; data, indices
  Constant,     // ConstantAttrs, no inputs
  Iota,         // IotaAttrs, no inputs
  MatMul,       // library op (not fused)
  Conv,         // ConvAttrs; library op (not fused); x, w[, bias]
};

/// Which input/output dtypes an elementwise op accepts and produces.
enum class DTypeRule : uint8_t {
  FloatSame,      // float in, same out
  NumericSame,    // float or int in, same out
  FloatToBool,    // float in, bool out (isnan, isinf)
  BoolOrIntSame,  // bool or integer in, same out (not/and/or/xor: logical, bitwise)
  AnyToBool,      // compare: any matching dtypes in, bool out
  Special,        // decided by the op's inference code
};

/// Which attribute struct an op carries.
enum class AttrKind : uint8_t {
  None,
  Cast,
  Shape,
  Reduce,
  Transpose,
  Slice,
  Axis,
  Split,
  Constant,
  Iota,
  Conv
};

//  enum ident    text name        class                 dtype rule               attrs
#define AUTOFUSE_OPS(X)                                       \
  X(Neg, "neg", Unary, NumericSame, None)                     \
  X(Abs, "abs", Unary, NumericSame, None)                     \
  X(Exp, "exp", Unary, FloatSame, None)                       \
  X(Log, "log", Unary, FloatSame, None)                       \
  X(Sqrt, "sqrt", Unary, FloatSame, None)                     \
  X(Rsqrt, "rsqrt", Unary, FloatSame, None)                   \
  X(Reciprocal, "reciprocal", Unary, FloatSame, None)         \
  X(Sin, "sin", Unary, FloatSame, None)                       \
  X(Cos, "cos", Unary, FloatSame, None)                       \
  X(Tanh, "tanh", Unary, FloatSame, None)                     \
  X(Sigmoid, "sigmoid", Unary, FloatSame, None)               \
  X(Relu, "relu", Unary, NumericSame, None)                   \
  X(Erf, "erf", Unary, FloatSame, None)                       \
  X(Floor, "floor", Unary, FloatSame, None)                   \
  X(Ceil, "ceil", Unary, FloatSame, None)                     \
  X(Round, "round", Unary, FloatSame, None)                   \
  X(Sign, "sign", Unary, NumericSame, None)                   \
  X(Not, "not", Unary, BoolOrIntSame, None)                   \
  X(IsNan, "isnan", Unary, FloatToBool, None)                 \
  X(IsInf, "isinf", Unary, FloatToBool, None)                 \
  X(Add, "add", Binary, NumericSame, None)                    \
  X(Sub, "sub", Binary, NumericSame, None)                    \
  X(Mul, "mul", Binary, NumericSame, None)                    \
  X(Div, "div", Binary, NumericSame, None)                    \
  X(Pow, "pow", Binary, NumericSame, None)                    \
  X(Max, "max", Binary, NumericSame, None)                    \
  X(Min, "min", Binary, NumericSame, None)                    \
  X(Mod, "mod", Binary, NumericSame, None)                    \
  X(And, "and", Binary, BoolOrIntSame, None)                  \
  X(Or, "or", Binary, BoolOrIntSame, None)                    \
  X(Xor, "xor", Binary, BoolOrIntSame, None)                  \
  X(Eq, "eq", Binary, AnyToBool, None)                        \
  X(Ne, "ne", Binary, AnyToBool, None)                        \
  X(Lt, "lt", Binary, AnyToBool, None)                        \
  X(Le, "le", Binary, AnyToBool, None)                        \
  X(Gt, "gt", Binary, AnyToBool, None)                        \
  X(Ge, "ge", Binary, AnyToBool, None)                        \
  X(Where, "where", Where, Special, None)                     \
  X(Cast, "cast", Cast, Special, Cast)                        \
  X(BroadcastTo, "broadcast_to", BroadcastTo, Special, Shape) \
  X(ReduceSum, "reduce_sum", Reduce, NumericSame, Reduce)     \
  X(ReduceMean, "reduce_mean", Reduce, NumericSame, Reduce)   \
  X(ReduceMax, "reduce_max", Reduce, NumericSame, Reduce)     \
  X(ReduceMin, "reduce_min", Reduce, NumericSame, Reduce)     \
  X(ReduceProd, "reduce_prod", Reduce, NumericSame, Reduce)   \
  X(Transpose, "transpose", Transpose, Special, Transpose)    \
  X(Reshape, "reshape", Reshape, Special, Shape)              \
  X(Slice, "slice", Slice, Special, Slice)                    \
  X(Concat, "concat", Concat, Special, Axis)                  \
  X(Split, "split", Split, Special, Split)                    \
  X(Gather, "gather", Gather, Special, Axis)                  \
  X(Constant, "constant", Constant, Special, Constant)        \
  X(Iota, "iota", Iota, Special, Iota)                        \
  X(MatMul, "matmul", MatMul, FloatSame, None)                \
  X(Conv, "conv", Conv, FloatSame, Conv)

enum class OpKind : uint8_t {
#define AUTOFUSE_OP_ENUM(id, text, cls, rule, attrs) id,
  AUTOFUSE_OPS(AUTOFUSE_OP_ENUM)
#undef AUTOFUSE_OP_ENUM
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  OpClass op_class;
  DTypeRule dtype_rule;
  AttrKind attr_kind;
  int min_inputs;
  int max_inputs;  ///< -1: variadic
};
const OpInfo& op_info(OpKind kind);
inline std::string_view op_name(OpKind kind) {
  return op_info(kind).name;
}
std::optional<OpKind> op_from_name(std::string_view name);
/// Every op, in list order.
std::vector<OpKind> all_ops();

// ---- Typed attributes ------------------------------------------------------

struct NoAttrs {
  bool operator==(const NoAttrs&) const = default;
};
/// cast: target dtype. `saturate` (ONNX Cast-19) only matters for a float8
/// target: a finite value beyond its range becomes +-max (true) or else inf
/// (f8e5m2) / NaN (the others), and inf becomes +-max (true) or else inf
/// (f8e5m2) / NaN; it must be true for every other target.
struct CastAttrs {
  DType to;
  bool saturate = true;
  bool operator==(const CastAttrs&) const = default;
};
/// broadcast_to, reshape: the (symbolic) target shape.
struct ShapeAttrs {
  Shape shape;
  bool operator==(const ShapeAttrs&) const = default;
};
/// reduce_*: axes (empty = all) and whether reduced dims stay as size 1.
struct ReduceAttrs {
  std::vector<int64_t> axes;
  bool keepdims = false;
  bool operator==(const ReduceAttrs&) const = default;
};
/// transpose: output dim i is input dim perm[i].
struct TransposeAttrs {
  std::vector<int64_t> perm;
  bool operator==(const TransposeAttrs&) const = default;
};
/// slice: per listed axis, Python-style start/end/step (all same length).
/// kSliceEnd as an `end` means "to the end" of the dim.
struct SliceAttrs {
  std::vector<int64_t> axes;
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::vector<int64_t> steps;
  bool operator==(const SliceAttrs&) const = default;
};
inline constexpr int64_t kSliceEnd = INT64_MAX;
/// concat, gather: the axis.
struct AxisAttrs {
  int64_t axis = 0;
  bool operator==(const AxisAttrs&) const = default;
};
/// split: the axis and the (symbolic) size of each output along it.
struct SplitAttrs {
  int64_t axis = 0;
  std::vector<sym::Expr> sizes;
  bool operator==(const SplitAttrs&) const = default;
};
/// constant: a static-shaped tensor; `values` holds one value (splat) or
/// one per element in row-major order. Integer values must be exact in a
/// double (|v| <= 2^53).
struct ConstantAttrs {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<double> values;
  bool operator==(const ConstantAttrs&) const = default;
};
/// iota: a tensor of `shape` whose element is its index along `axis`.
struct IotaAttrs {
  DType dtype = DType::i64;
  Shape shape;
  int64_t axis = 0;
  bool operator==(const IotaAttrs&) const = default;
};

/// conv: per spatial axis (all of the same length k once inferred; empty
/// when written means the default: strides and dilations 1, pads 0).
/// `pads` is ONNX's [begin_1..begin_k, end_1..end_k].
struct ConvAttrs {
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  int64_t group = 1;
  int spatial_rank() const { return static_cast<int>(strides.size()); }
  int64_t pad_begin(int i) const { return pads[static_cast<size_t>(i)]; }
  int64_t pad_end(int i) const { return pads[strides.size() + static_cast<size_t>(i)]; }
  bool operator==(const ConvAttrs&) const = default;
};

using Attrs = std::variant<NoAttrs, CastAttrs, ShapeAttrs, ReduceAttrs, TransposeAttrs, SliceAttrs,
                           AxisAttrs, SplitAttrs, ConstantAttrs, IotaAttrs, ConvAttrs>;

/// The AttrKind of an Attrs value (its variant alternative).
AttrKind attr_kind_of(const Attrs& attrs);

}  // namespace autofuse

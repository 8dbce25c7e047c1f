// The reviewed version tables behind opset_versions.h. Every entry was
// checked against the ONNX operator changelog (the onnx 1.17 operator
// schemas: attributes, inputs, outputs, type constraints and doc text of
// both versions compared); the reason says what differs.
#include "frontend/onnx/opset_versions.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

namespace autofuse::frontend::onnx_import {

namespace {

struct OldVersion {
  std::string_view op;
  int version;
  std::string_view reason;  ///< why it means what the opset-13 version means
};

// Versions before the one opset 13 uses, equal in semantics to it. Versions
// not listed differ (e.g. Softmax-11 coerces to 2-D, ReduceSum-11 takes its
// axes as an attribute, Dropout-7's mask has the data's type) and are
// rejected.
constexpr OldVersion kOldVersions[] = {
    {"Abs", 6, "13 added bfloat16 and reworded the doc"},
    {"Add", 7, "13 added bfloat16; same NumPy broadcasting"},
    {"Cast", 9, "13 added bfloat16 and wrote down the numeric conversion rules"},
    {"Ceil", 6, "13 added bfloat16 and documented that integral/inf/NaN values pass through"},
    {"Clip", 11, "12/13 added integer types and bfloat16; min and max are inputs as in 13"},
    {"Clip", 12, "13 added bfloat16"},
    {"Concat", 11, "13 added bfloat16"},
    {"Constant", 9, "11/12 added sparse_value and value_*; 13 added bfloat16"},
    {"Constant", 11, "12 added the value_* attributes; 13 added bfloat16"},
    {"Constant", 12, "13 added bfloat16"},
    {"DequantizeLinear", 10,
     "13 added per-axis scales (attribute axis); a scalar scale means the same"},
    {"Div", 7, "13 added bfloat16; same NumPy broadcasting"},
    {"Dropout", 10,
     "ratio is an attribute and there is no training_mode input: inference is the identity "
     "with an all-true bool mask, as Dropout-13 without training_mode"},
    {"Dropout", 12, "13 added bfloat16"},
    {"Equal", 7, "11/13 added float types and bfloat16"},
    {"Equal", 11, "13 added bfloat16"},
    {"Erf", 9, "13 added bfloat16"},
    {"Exp", 6, "13 added bfloat16"},
    {"Expand", 8, "13 added bfloat16"},
    {"Flatten", 11, "13 added bfloat16"},
    {"Floor", 6, "13 added bfloat16 and documented that integral/inf/NaN values pass through"},
    {"Gather", 11, "13 added bfloat16 and reformatted the doc"},
    {"Gemm", 11, "13 added bfloat16 and reformatted the doc"},
    {"Greater", 7, "9/13 added integer types and bfloat16"},
    {"Greater", 9, "13 added bfloat16"},
    {"Identity", 1, "13 added bfloat16"},
    {"IsNaN", 9, "13 added bfloat16"},
    {"Less", 7, "9/13 added integer types and bfloat16"},
    {"Less", 9, "13 added bfloat16"},
    {"Log", 6, "13 added bfloat16"},
    {"MatMul", 1, "9/13 added integer types and bfloat16"},
    {"MatMul", 9, "13 added bfloat16"},
    {"Max", 8, "12/13 added integer types and bfloat16"},
    {"Max", 12, "13 added bfloat16"},
    {"Mean", 8, "13 added bfloat16"},
    {"Min", 8, "12/13 added integer types and bfloat16"},
    {"Min", 12, "13 added bfloat16"},
    {"Mod", 10, "13 added bfloat16 and reindented the doc"},
    {"Mul", 7, "13 added bfloat16; same NumPy broadcasting"},
    {"Neg", 6, "13 added bfloat16"},
    {"PRelu", 7, "9 added integer types"},
    {"Pow", 12, "13 added bfloat16"},
    {"QuantizeLinear", 10,
     "13 added per-axis scales (attribute axis); a scalar scale means the same"},
    {"Reciprocal", 6, "13 added bfloat16"},
    // 11 allowed negative axes; 13 added bfloat16 and kept the axes
    // attribute (ReduceSum-13 and the others from 18 take axes as an input).
    {"ReduceL1", 11, "13 added bfloat16"},
    {"ReduceL2", 11, "13 added bfloat16"},
    {"ReduceLogSum", 11, "13 added bfloat16"},
    {"ReduceLogSumExp", 11, "13 added bfloat16"},
    {"ReduceMax", 11, "12 added int8/uint8, 13 bfloat16"},
    {"ReduceMax", 12, "13 added bfloat16"},
    {"ReduceMean", 11, "13 added bfloat16"},
    {"ReduceMin", 11, "12 added int8/uint8, 13 bfloat16"},
    {"ReduceMin", 12, "13 added bfloat16"},
    {"ReduceProd", 11, "13 added bfloat16"},
    {"ReduceSumSquare", 11, "13 added bfloat16"},
    {"Relu", 6, "13 added bfloat16"},
    {"Reshape", 5, "13 added bfloat16"},
    {"Scatter", 9,
     "11 allowed negative indices (from the end) and deprecated it for ScatterElements-11; "
     "the same for the non-negative indices 9 allows"},
    {"Shape", 1, "13 added bfloat16"},
    {"Sigmoid", 6, "13 added bfloat16"},
    {"Sign", 9, "13 added bfloat16"},
    {"Size", 1, "13 added bfloat16"},
    {"Sqrt", 6, "13 added bfloat16"},
    {"Sub", 7, "13 added bfloat16; same NumPy broadcasting"},
    {"Sum", 8, "13 added bfloat16"},
    {"Tanh", 6, "13 added bfloat16"},
    {"Tile", 6, "13 added bfloat16"},
    {"Transpose", 1, "13 added bfloat16"},
    {"Upsample", 7,
     "scales is an attribute instead of input 1 (convert_upsample reads either); otherwise as "
     "9 and the deprecated 10"},
    {"Upsample", 9, "10 deprecated it for Resize-10 and changed nothing else"},
};

struct Opset22Version {
  std::string_view op;
  bool same_semantics;
  std::string_view change;  ///< what version 22 changed
};

// Every op that got a new version in opset 22 (the complete list of ONNX
// 1.17; opset 22 is final). Ops not listed are the same in 21 and 22.
constexpr Opset22Version kOpset22[] = {
    {"Acos", true, "added bfloat16"},
    {"Acosh", true, "added bfloat16"},
    {"Asin", true, "added bfloat16"},
    {"Asinh", true, "added bfloat16"},
    {"Atan", true, "added bfloat16"},
    {"Atanh", true, "added bfloat16"},
    {"AveragePool", true,
     "ceil_mode: sliding windows that would start in the right padded region are ignored "
     "(convert_pool.cpp implements 22 and refuses that case before it)"},
    {"Bernoulli", true, "added bfloat16"},
    {"Conv", true, "added bfloat16"},
    {"ConvTranspose", true, "added bfloat16"},
    {"Cos", true, "added bfloat16"},
    {"Cosh", true, "added bfloat16"},
    {"DeformConv", true, "added bfloat16"},
    {"Det", true, "added bfloat16"},
    {"Dropout", true, "added float8 types"},
    {"Elu", true, "added bfloat16"},
    {"EyeLike", true, "added bfloat16"},
    {"GRU", true, "added bfloat16"},
    {"GlobalAveragePool", true, "added bfloat16"},
    {"GlobalLpPool", true, "added bfloat16"},
    {"GlobalMaxPool", true, "added bfloat16"},
    {"GridSample", true, "added bfloat16"},
    {"HardSigmoid", true, "added bfloat16"},
    {"HardSwish", true, "added bfloat16"},
    {"InstanceNormalization", true, "added bfloat16"},
    {"LSTM", true, "added bfloat16"},
    {"LpNormalization", true, "added bfloat16"},
    {"LpPool", true, "added bfloat16"},
    {"MaxPool", true,
     "ceil_mode: sliding windows that would start in the right padded region are ignored "
     "(convert_pool.cpp implements 22 and refuses that case before it)"},
    {"MaxRoiPool", true, "added bfloat16"},
    {"MaxUnpool", true, "added bfloat16"},
    {"Mish", true, "added bfloat16"},
    {"Multinomial", true, "added bfloat16"},
    {"NegativeLogLikelihoodLoss", true, "added bfloat16"},
    {"RNN", true, "added bfloat16"},
    {"RandomNormal", true, "added bfloat16"},
    {"RandomNormalLike", true, "added bfloat16"},
    {"RandomUniform", true, "added bfloat16"},
    {"RandomUniformLike", true, "added bfloat16"},
    {"RoiAlign", true, "added bfloat16"},
    {"Round", true, "added bfloat16"},
    {"Selu", true, "added bfloat16"},
    {"Sin", true, "added bfloat16"},
    {"Sinh", true, "added bfloat16"},
    {"Softplus", true, "added bfloat16"},
    {"Softsign", true, "added bfloat16"},
    {"Tan", true, "added bfloat16"},
    {"ThresholdedRelu", true, "added bfloat16"},
};

}  // namespace

bool old_version_matches(const std::string& op, int version, int version_13) {
  if (version == version_13) return true;
  return std::any_of(std::begin(kOldVersions), std::end(kOldVersions),
                     [&](const OldVersion& v) { return v.op == op && v.version == version; });
}

std::optional<std::string> unreviewed_opset22_version(const std::string& op) {
  for (const Opset22Version& v : kOpset22)
    if (v.op == op)
      return v.same_semantics ? std::nullopt
                              : std::optional<std::string>(fmt::format("{}-22 ({})", op, v.change));
  return std::nullopt;
}

}  // namespace autofuse::frontend::onnx_import

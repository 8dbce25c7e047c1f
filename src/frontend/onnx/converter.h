// The interface between the ONNX importer and its op converters. Each
// converter file registers the ONNX op types it handles; a converter reads
// its node through a NodeContext and builds primitive graph ops with the
// GraphBuilder. Shape computations are carried as *known values*: integer
// tensors of rank 0 or 1 whose elements are symbolic expressions (the output
// of Shape, and what Gather/Unsqueeze/Concat/Slice/Squeeze/Cast/arithmetic
// make of it), used by Reshape, Expand, ConstantOfShape, Range, Tile, ... as
// their (symbolic) shape arguments. A known value becomes a graph tensor
// only when a real op reads it as data: a constant when all its elements
// are, else (non-negative integers only) a run-time sum that stays symbolic.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <onnx/onnx_pb.h>

#include "autofuse/graph/builder.h"
#include "autofuse/ref/tensor.h"

namespace autofuse::frontend::onnx_import {

class NodeContext {
 public:
  virtual ~NodeContext() = default;

  virtual const onnx::NodeProto& node() const = 0;
  /// Opset of the default domain the model imports.
  virtual int64_t opset() const = 0;
  virtual GraphBuilder& builder() = 0;

  /// Inputs as listed (an empty name = an omitted optional input).
  virtual int num_inputs() const = 0;
  virtual bool has_input(int i) const = 0;
  /// The input as a graph tensor (a known value is materialized as a
  /// constant). UserError (via fail) if omitted.
  virtual Tensor input(int i) = 0;
  virtual DType input_dtype(int i) const = 0;
  virtual Shape input_shape(int i) const = 0;
  /// The elements of a rank-0/1 integer input when known at import
  /// (constants, initializers, shape computations); nullopt otherwise.
  virtual std::optional<std::vector<sym::Expr>> known_ints(int i) const = 0;
  /// The input's values when it is a constant (initializer, Constant node,
  /// folded known value), any dtype, as a host tensor; nullopt otherwise.
  virtual std::optional<HostTensor> constant(int i) const = 0;

  // Attributes (by name); the default is returned when absent. Without a
  // default an absent attribute is a UserError. A wrong attribute type is a
  // UserError naming the attribute.
  virtual bool has_attr(std::string_view name) const = 0;
  virtual int64_t attr_int(std::string_view name,
                           std::optional<int64_t> def = std::nullopt) const = 0;
  virtual float attr_float(std::string_view name,
                           std::optional<float> def = std::nullopt) const = 0;
  virtual std::vector<int64_t> attr_ints(
      std::string_view name, std::optional<std::vector<int64_t>> def = std::nullopt) const = 0;
  virtual std::vector<float> attr_floats(
      std::string_view name, std::optional<std::vector<float>> def = std::nullopt) const = 0;
  virtual std::string attr_string(std::string_view name,
                                  std::optional<std::string> def = std::nullopt) const = 0;
  virtual HostTensor attr_tensor(std::string_view name) const = 0;

  /// Number of outputs the node declares (trailing optional ones may be empty).
  virtual int num_outputs() const = 0;
  virtual bool has_output(int i) const = 0;
  virtual void set_output(int i, Tensor t) = 0;
  /// Sets a host-side known value (rank 0 when `scalar`, else rank 1).
  virtual void set_known_output(int i, std::vector<sym::Expr> values, DType dtype, bool scalar) = 0;
  /// Sets an output to a constant (folded at import): it stays known to
  /// later nodes (constant(), known_ints()) and becomes a graph constant only
  /// when a real op reads it.
  virtual void set_constant_output(int i, HostTensor value) = 0;
  /// Output `out` is input `in` unchanged (Identity and friends): whatever
  /// is known about the input stays known.
  virtual void forward_input(int out, int in) = 0;

  /// A fresh graph value name derived from the node (sanitized, unique).
  virtual std::string fresh_name(std::string_view hint) = 0;
  /// UserError naming the node (name and op type) and the reason.
  [[noreturn]] virtual void fail(const std::string& reason) const = 0;
  /// UnsupportedError naming the node: the node is valid ONNX but uses
  /// something autofuse does not implement (an attribute value, a mode).
  [[noreturn]] virtual void unsupported(const std::string& reason) const = 0;
};

using ConvertFn = void (*)(NodeContext&);
using ConverterTable = std::map<std::string, ConvertFn, std::less<>>;

// One registration function per converter file.
void register_elementwise_ops(ConverterTable& table);  // convert_elementwise.cpp
void register_shape_ops(ConverterTable& table);        // convert_shape.cpp
void register_reduce_ops(ConverterTable& table);       // convert_reduce.cpp
void register_composite_ops(ConverterTable& table);    // convert_composite.cpp
void register_library_ops(ConverterTable& table);      // convert_library.cpp (MatMul, Gemm)
void register_index_ops(ConverterTable& table);        // convert_index.cpp (ArgMax, Trilu, ...)
void register_loss_ops(ConverterTable& table);         // convert_loss.cpp (NLL, SoftmaxCE)
void register_math_ops(ConverterTable& table);         // convert_math.cpp (trig, ThresholdedRelu)
void register_quantize_ops(ConverterTable& table);     // convert_quantize.cpp (Q/DQ)
void register_pool_ops(ConverterTable& table);         // convert_pool.cpp (MaxPool, ...)
void register_conv_ops(ConverterTable& table);         // convert_conv.cpp (Conv, ConvTranspose)
void register_resize_ops(ConverterTable& table);       // convert_resize.cpp
void register_einsum_ops(ConverterTable& table);       // convert_einsum.cpp
void register_sample_ops(ConverterTable& table);  // convert_sample.cpp (GridSample, Col2Im, ...)

}  // namespace autofuse::frontend::onnx_import

// What the importer knows about every ONNX value while it walks the graph,
// and the NodeContext the converters see. Private to the importer.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/onnx/converter.h"

namespace autofuse::frontend::onnx_import {

/// One ONNX value. At least one of tensor, known and constant is set unless
/// `unavailable` says why the value cannot be used.
struct OnnxValue {
  DType dtype = DType::f32;
  Shape shape;
  /// The graph value, once there is one (graph inputs, op results, and
  /// known values or constants a real op has read).
  std::optional<Tensor> tensor;
  /// Rank-0/1 integer or bool elements known at import (shape computations).
  std::optional<std::vector<sym::Expr>> known;
  /// Values known at import (initializers, Constant nodes, folds).
  std::shared_ptr<const HostTensor> constant;
  /// Non-empty: a node output autofuse does not produce (e.g. Dropout's
  /// mask); using it is a UserError with this reason.
  std::string unavailable;
};

class ImportState {
 public:
  ImportState(std::string source, const std::string& graph_name, int64_t opset);

  const std::string& source() const { return source_; }
  int64_t opset() const { return opset_; }
  GraphBuilder& builder() { return builder_; }

  /// A C identifier derived from `hint`, unique among graph values and every
  /// name handed out before.
  std::string unique_name(std::string_view hint);

  /// The value named `name`; nullptr if no node or input defined it.
  OnnxValue* find(const std::string& name);
  /// Defines a value. UserError if the name is already defined (ONNX graphs
  /// are in SSA form).
  OnnxValue& define(const std::string& name, OnnxValue value);

  /// The value's graph tensor, making a constant for a known value or an
  /// import-time constant on first use. UserError (no location) when a
  /// known value cannot become a tensor.
  Tensor materialize(const std::string& name, OnnxValue& value);

  /// The elements of a rank-0/1 integer/bool value known at import.
  static std::optional<std::vector<sym::Expr>> known_ints(const OnnxValue& value);
  /// The value's contents when known at import.
  static std::optional<HostTensor> constant_of(const OnnxValue& value);

 private:
  Tensor materialize_known(const std::string& name, const OnnxValue& value);

  std::string source_;
  int64_t opset_;
  GraphBuilder builder_;
  std::unordered_map<std::string, OnnxValue> values_;
  std::set<std::string> used_names_;
};

/// Throws the kind of `e` (UnsupportedError or UserError) at `where` with
/// `message`: re-wrapping an error never turns "not implemented" into
/// "wrong input".
[[noreturn]] void rethrow_at(const UserError& e, SourceLocation where, std::string message);

/// The context for converting one node.
class NodeContextImpl final : public NodeContext {
 public:
  NodeContextImpl(ImportState& state, const onnx::NodeProto& node, int index);

  /// How errors name the node: its name, else "#<index>".
  static std::string label(const onnx::NodeProto& node, int index);
  SourceLocation location() const;

  const onnx::NodeProto& node() const override { return node_; }
  int64_t opset() const override { return state_.opset(); }
  GraphBuilder& builder() override { return state_.builder(); }

  int num_inputs() const override { return node_.input_size(); }
  bool has_input(int i) const override;
  Tensor input(int i) override;
  DType input_dtype(int i) const override;
  Shape input_shape(int i) const override;
  std::optional<std::vector<sym::Expr>> known_ints(int i) const override;
  std::optional<HostTensor> constant(int i) const override;

  bool has_attr(std::string_view name) const override;
  int64_t attr_int(std::string_view name, std::optional<int64_t> def) const override;
  float attr_float(std::string_view name, std::optional<float> def) const override;
  std::vector<int64_t> attr_ints(std::string_view name,
                                 std::optional<std::vector<int64_t>> def) const override;
  std::vector<float> attr_floats(std::string_view name,
                                 std::optional<std::vector<float>> def) const override;
  std::string attr_string(std::string_view name, std::optional<std::string> def) const override;
  HostTensor attr_tensor(std::string_view name) const override;

  int num_outputs() const override { return node_.output_size(); }
  bool has_output(int i) const override;
  void set_output(int i, Tensor t) override;
  void set_known_output(int i, std::vector<sym::Expr> values, DType dtype, bool scalar) override;
  void set_constant_output(int i, HostTensor value) override;
  void forward_input(int out, int in) override;

  std::string fresh_name(std::string_view hint) override;
  [[noreturn]] void fail(const std::string& reason) const override;
  [[noreturn]] void unsupported(const std::string& reason) const override;

  /// Whether output i was set by the converter.
  bool output_set(int i) const { return set_.count(i) > 0; }

 private:
  const OnnxValue& value(int i) const;
  const onnx::AttributeProto* find_attr(std::string_view name, int expected_type) const;
  void define_output(int i, OnnxValue value);

  ImportState& state_;
  const onnx::NodeProto& node_;
  int index_;
  std::set<int> set_;
};

}  // namespace autofuse::frontend::onnx_import

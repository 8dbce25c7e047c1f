// Building small ONNX models in C++ for the importer tests: value infos,
// attributes, tensors, and a ModelBuilder that serializes and imports them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "autofuse/frontend/onnx_import.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/support/half.h"
#include "frontend/io/tensor_proto.h"

namespace autofuse::frontend::testing {

constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
constexpr int32_t kF16 = onnx::TensorProto::FLOAT16;
constexpr int32_t kF64 = onnx::TensorProto::DOUBLE;
constexpr int32_t kI32 = onnx::TensorProto::INT32;
constexpr int32_t kI64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

inline int32_t onnx_type(DType dtype) {
  return onnx_from_dtype(dtype);
}

/// A declared dim: a number, a dim_param name, or "?" (neither).
struct Dim {
  Dim(int64_t v) : value(v) {}      // NOLINT(google-explicit-constructor)
  Dim(int v) : value(v) {}          // NOLINT(google-explicit-constructor)
  Dim(const char* p) : param(p) {}  // NOLINT(google-explicit-constructor)
  std::optional<int64_t> value;
  std::string param;
};

inline onnx::ValueInfoProto value_info(const std::string& name, int32_t elem_type,
                                       const std::vector<Dim>& dims) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto* t = vi.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (const Dim& d : dims) {
    auto* dim = shape->add_dim();
    if (d.value)
      dim->set_dim_value(*d.value);
    else if (d.param != "?")
      dim->set_dim_param(d.param);
  }
  return vi;
}

inline onnx::AttributeProto attr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}
inline onnx::AttributeProto attr(const std::string& name, int v) {
  return attr(name, static_cast<int64_t>(v));
}
inline onnx::AttributeProto attr(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}
inline onnx::AttributeProto attr(const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a.add_ints(x);
  return a;
}
inline onnx::AttributeProto attr(const std::string& name, const std::vector<float>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOATS);
  for (float x : v)
    a.add_floats(x);
  return a;
}
inline onnx::AttributeProto attr(const std::string& name, const char* v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}
inline onnx::AttributeProto attr(const std::string& name, const onnx::TensorProto& t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = t;
  return a;
}

/// A tensor in the typed field of its elem_type (int32_data for the narrow
/// types; float16 and bfloat16 as their bit patterns there, rounded to
/// nearest even).
inline onnx::TensorProto tensor(const std::string& name, int32_t elem_type,
                                const std::vector<int64_t>& dims,
                                const std::vector<double>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(elem_type);
  for (int64_t d : dims)
    t.add_dims(d);
  for (double v : values) {
    switch (elem_type) {
      case onnx::TensorProto::FLOAT:
        t.add_float_data(static_cast<float>(v));
        break;
      case onnx::TensorProto::DOUBLE:
        t.add_double_data(v);
        break;
      case onnx::TensorProto::INT64:
        t.add_int64_data(static_cast<int64_t>(v));
        break;
      case onnx::TensorProto::FLOAT16:
        t.add_int32_data(f32_to_f16(static_cast<float>(v)));
        break;
      case onnx::TensorProto::BFLOAT16:
        t.add_int32_data(f32_to_bf16(static_cast<float>(v)));
        break;
      default:
        t.add_int32_data(static_cast<int32_t>(v));
        break;
    }
  }
  return t;
}
/// An int64 tensor (exact, unlike tensor() whose values pass through double).
inline onnx::TensorProto ints(const std::string& name, const std::vector<int64_t>& values,
                              bool scalar = false) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(kI64);
  if (!scalar) t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values)
    t.add_int64_data(v);
  return t;
}

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17, const std::string& graph_name = "test") {
    model_.set_ir_version(8);
    auto* id = model_.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
    model_.mutable_graph()->set_name(graph_name);
  }

  ModelBuilder& input(const std::string& name, int32_t elem_type, const std::vector<Dim>& dims) {
    *graph()->add_input() = value_info(name, elem_type, dims);
    return *this;
  }
  /// An output without a declared type.
  ModelBuilder& output(const std::string& name) {
    graph()->add_output()->set_name(name);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int32_t elem_type, const std::vector<Dim>& dims) {
    *graph()->add_output() = value_info(name, elem_type, dims);
    return *this;
  }
  ModelBuilder& initializer(const onnx::TensorProto& t) {
    *graph()->add_initializer() = t;
    return *this;
  }
  /// A Constant node named after its output.
  ModelBuilder& constant(const onnx::TensorProto& t) {
    return node("Constant", {}, {t.name()}, {attr("value", t)});
  }
  ModelBuilder& node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs,
                     const std::vector<onnx::AttributeProto>& attrs = {},
                     const std::string& name = "") {
    onnx::NodeProto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs)
      n->add_input(i);
    for (const auto& o : outputs)
      n->add_output(o);
    for (const auto& a : attrs)
      *n->add_attribute() = a;
    return *this;
  }

  onnx::ModelProto& proto() { return model_; }
  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  std::string bytes() const { return model_.SerializeAsString(); }
  OnnxModel import() const { return import_onnx_bytes(bytes(), "test.onnx"); }

 private:
  onnx::ModelProto model_;
};

inline HostTensor host(DType dtype, const std::vector<int64_t>& shape,
                       const std::vector<double>& values) {
  HostTensor t(dtype, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel()) << "test data for " << t.type_string();
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size()); ++i)
    t.set_f64(i, values[static_cast<size_t>(i)]);
  return t;
}
/// 0, 1, 2, ... in the given shape.
inline HostTensor iota_host(DType dtype, const std::vector<int64_t>& shape) {
  HostTensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_f64(i, static_cast<double>(i));
  return t;
}

inline std::vector<double> values_of(const HostTensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i)
    out.push_back(t.get_f64(i));
  return out;
}

/// Runs the imported model on the reference interpreter.
inline std::vector<HostTensor> run(const OnnxModel& model, const std::vector<HostTensor>& inputs) {
  return run_reference(*model.graph, inputs);
}

}  // namespace autofuse::frontend::testing

// Writing small ONNX models, TensorProto .pb files and ONNX node-test
// folders for the CLI tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include <onnx/onnx_pb.h>

#include "autofuse/ref/tensor.h"

namespace autofuse::testing {

/// A declared dim: a size or a dim_param name.
using OnnxDim = std::variant<int64_t, std::string>;

struct OnnxValue {
  std::string name;
  int32_t elem_type = onnx::TensorProto::FLOAT;
  std::vector<OnnxDim> dims;
};

struct OnnxNode {
  std::string op;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<onnx::AttributeProto> attrs = {};
};

/// A one-graph model of the default domain at `opset`.
onnx::ModelProto make_model(const std::vector<OnnxValue>& inputs,
                            const std::vector<OnnxValue>& outputs,
                            const std::vector<OnnxNode>& nodes, int64_t opset = 17);

/// Writes a serialized protobuf message; returns `path`.
std::string save_proto(const google::protobuf::MessageLite& message, const std::string& path);

/// A host tensor from values (converted with set_f64).
HostTensor host_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values);

/// An ONNX node test: `dir`/model.onnx and `dir`/test_data_set_0/ with
/// input_N.pb and output_N.pb (raw_data; names as given).
void write_node_test(const std::filesystem::path& dir, const onnx::ModelProto& model,
                     const std::vector<onnx::TensorProto>& inputs,
                     const std::vector<onnx::TensorProto>& outputs);

}  // namespace autofuse::testing

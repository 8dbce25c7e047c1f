#include "cli/onnx_files.h"

#include <fstream>

#include <gtest/gtest.h>

namespace autofuse::testing {

namespace {

void set_value_info(onnx::ValueInfoProto* vi, const OnnxValue& value) {
  vi->set_name(value.name);
  auto* type = vi->mutable_type()->mutable_tensor_type();
  type->set_elem_type(value.elem_type);
  auto* shape = type->mutable_shape();
  for (const OnnxDim& d : value.dims) {
    auto* dim = shape->add_dim();
    if (const auto* size = std::get_if<int64_t>(&d))
      dim->set_dim_value(*size);
    else
      dim->set_dim_param(std::get<std::string>(d));
  }
}

}  // namespace

onnx::ModelProto make_model(const std::vector<OnnxValue>& inputs,
                            const std::vector<OnnxValue>& outputs,
                            const std::vector<OnnxNode>& nodes, int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("autofuse-cli-test");
  auto* id = model.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  auto* graph = model.mutable_graph();
  graph->set_name("test");
  for (const OnnxValue& v : inputs)
    set_value_info(graph->add_input(), v);
  for (const OnnxValue& v : outputs)
    set_value_info(graph->add_output(), v);
  for (const OnnxNode& n : nodes) {
    auto* node = graph->add_node();
    node->set_op_type(n.op);
    for (const std::string& in : n.inputs)
      node->add_input(in);
    for (const std::string& out : n.outputs)
      node->add_output(out);
    for (const onnx::AttributeProto& a : n.attrs)
      *node->add_attribute() = a;
  }
  return model;
}

std::string save_proto(const google::protobuf::MessageLite& message, const std::string& path) {
  std::string bytes;
  EXPECT_TRUE(message.SerializeToString(&bytes));
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

HostTensor host_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  HostTensor t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i)
    t.set_f64(static_cast<int64_t>(i), values[i]);
  return t;
}

void write_node_test(const std::filesystem::path& dir, const onnx::ModelProto& model,
                     const std::vector<onnx::TensorProto>& inputs,
                     const std::vector<onnx::TensorProto>& outputs) {
  std::filesystem::create_directories(dir / "test_data_set_0");
  save_proto(model, (dir / "model.onnx").string());
  for (size_t i = 0; i < inputs.size(); ++i)
    save_proto(inputs[i],
               (dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string());
  for (size_t i = 0; i < outputs.size(); ++i)
    save_proto(outputs[i],
               (dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb")).string());
}

}  // namespace autofuse::testing

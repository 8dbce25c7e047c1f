// ONNX import: a ModelProto (opsets 13..22, and older ones whose ops are
// unchanged since) becomes a Graph whose composite ops are decomposed into primitives (so they
// fuse), initializers become constants, `dim_param` names and unknown dims become symbols, and
// shape computations (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape, Range
// over a symbolic size, ...) are evaluated symbolically at import, so a model exported with dynamic
// axes keeps them and compiles once. Models of an older opset import when every op they use is
// unchanged since (e.g. Xor-7), since they then mean what opset 13 means.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autofuse/graph/graph.h"
#include "autofuse/ref/tensor.h"

namespace autofuse::frontend {

struct OnnxModel {
  std::shared_ptr<const Graph> graph;
  /// Original ONNX names (graph value names are sanitized C identifiers), in
  /// graph-input / graph-output order.
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  int64_t opset = 0;  ///< of the default ("" / "ai.onnx") domain
};

/// Import choices beyond the model itself.
struct OnnxImportOptions {
  /// Graph inputs (by ONNX name) to import as constants with these values:
  /// they are not inputs of the result. For models that feed shape
  /// arguments (Reshape's shape, axes, pads) as inputs, as the ONNX node
  /// tests do; their dtype and shape must match the declared input.
  std::map<std::string, HostTensor> constant_inputs;
};

/// Reads and imports a model file. UserError (never a crash) on a missing,
/// malformed or truncated file, an unsupported opset or domain, declared
/// shapes that disagree with initializers or inference, and unsupported ops:
/// then the message lists EVERY unsupported op type with the nodes using it.
OnnxModel import_onnx_file(const std::string& path);
/// The same from bytes in memory; `source_name` names it in errors.
OnnxModel import_onnx_bytes(std::string_view bytes, const std::string& source_name);
/// The same with options.
OnnxModel import_onnx_file(const std::string& path, const OnnxImportOptions& options);
OnnxModel import_onnx_bytes(std::string_view bytes, const std::string& source_name,
                            const OnnxImportOptions& options);

/// ONNX op types the importer handles (sorted), for the conformance runner
/// and the README.
std::vector<std::string> supported_onnx_ops();

}  // namespace autofuse::frontend

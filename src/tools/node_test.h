// One ONNX backend node test, run (see tools/conformance.h): its data sets,
// the import with frozen inputs where needed, compile, run and compare.
#pragma once

#include <filesystem>
#include <string>

#include <onnx/onnx_pb.h>

#include "tools/conformance.h"

namespace autofuse::tools {

/// Runs the claimed test in `test_dir` whose parsed model is `model`
/// (serialized as `model_bytes`); sets result.status (passed, failed or
/// skipped), detail, data_sets and frozen_inputs. Exceptions from compiling
/// or running propagate (the caller records them as failures).
void run_node_test(const std::filesystem::path& test_dir, const onnx::ModelProto& model,
                   const std::string& model_bytes, NodeTestResult& result);

}  // namespace autofuse::tools

// The ONNX backend node-test runner behind `autofuse conformance`. A node
// test is a folder with model.onnx and test_data_set_*/{input,output}_N.pb.
// A test is *claimed* when every op type its model uses (subgraphs
// included) is one the importer supports; only claimed tests run. Each runs
// as: import, compile once (fused), run every data set, compare every output
// with the expected one (the ONNX backend defaults: rtol 1e-3, atol 1e-7 for
// floats; integers and bools exact; NaN matches NaN).
//
// Node tests feed axes, shapes, pads and the like as graph inputs, while
// autofuse (like every ahead-of-time compiler) needs them at compile time.
// When the importer rejects a model and its message quotes a *freezable*
// input by name (an integer input of rank <= 1, or a scalar), that input is
// frozen: it becomes an initializer holding the data set's value, and the
// model is imported again. When the message quotes no input (the value it
// needs is computed from inputs), all freezable inputs are frozen as a last
// try. onnx-mlir's backend tests do the same with their "constant input"
// lists. Tests that needed this are reported with the inputs frozen.
//
// A claimed test is skipped, not failed, when the importer rejects it with
// an explicit decision: an UnsupportedError (an attribute value, dtype, mode
// or opset autofuse does not implement). Any other error is a failure.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace autofuse::tools {

enum class TestStatus { passed, failed, skipped, not_claimed };

struct NodeTestResult {
  std::string name;  ///< the folder name, e.g. test_softmax_axis_0
  std::string op;    ///< the op type it is counted under (see conformance.cpp)
  TestStatus status = TestStatus::failed;
  std::string detail;  ///< why it failed or was skipped; unclaimed: the op types it lacks
  /// Integer inputs (axes, shapes, pads, ...) that the importer needs at
  /// compile time and that were therefore frozen to each data set's values.
  std::vector<std::string> frozen_inputs;
  int data_sets = 0;
  double seconds = 0;
};

struct ConformanceOptions {
  std::string dir;               ///< the folder of test folders
  std::vector<std::string> ops;  ///< only tests counted under these op types (empty: all)
  std::string filter;            ///< only tests whose name contains this (empty: all)
  int jobs = 0;                  ///< tests compiled and run at once (0: one per hardware thread)
};

/// The node-test folder when none is given: $AUTOFUSE_ONNX_NODE_TESTS, else
/// `.venv/lib/python3*/site-packages/onnx/backend/test/data/node` under the
/// current directory, one of its parents, or a parent of the executable's
/// folder (the repository root, for build/<preset>/autofuse). UserError
/// (saying to run scripts/setup-python.sh) when there is none.
std::string default_node_test_dir();

/// Runs the tests under options.dir, options.jobs at once, calling
/// `on_result` for each in name order (for progress output; one call at a
/// time). Unclaimed tests are reported without running. The results are in
/// name order.
/// UserError if the folder does not exist or an --op is not a supported op.
std::vector<NodeTestResult> run_node_tests(
    const ConformanceOptions& options,
    const std::function<void(const NodeTestResult&)>& on_result = {});

/// "passed", "failed", "skipped", "not claimed".
const char* status_name(TestStatus status);

}  // namespace autofuse::tools

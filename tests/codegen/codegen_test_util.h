// Helpers for the codegen tests: a whole graph scheduled as one kernel,
// modules compiled with the JIT, kernels run block by block on host tensors
// and compared with the reference interpreter.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "autofuse/codegen/cpu_codegen.h"
#include "autofuse/codegen/kernel_abi.h"
#include "autofuse/graph/graph.h"
#include "autofuse/jit/compiler.h"
#include "autofuse/ref/tensor.h"
#include "autofuse/schedule/schedule.h"

namespace autofuse::codegen_test {

/// Every node of `graph` in one Kernel region (loop axes from
/// fuse::map_loop_axes), lowered, casts elided, and scheduled.
schedule::ScheduledKernel schedule_graph(const Graph& graph);

/// The generated kernel code (after the prelude) of the graph `text` as one
/// kernel (schedule_graph).
std::string kernel_code(const std::string& text);

/// The text of kernel `name`'s kernel function in `code` (a failure when
/// there is none).
std::string kernel_text(const std::string& code, const std::string& name);

/// How often `what` occurs in `text`.
size_t count(const std::string& text, const std::string& what);

/// Compiles and loads a module with the JIT's default flags (cached in a
/// folder under the system temp dir).
std::shared_ptr<jit::Module> compile(const codegen::ModuleSource& module);

/// Machines for the cost model: one core; and many cores with tiny blocks,
/// so that blocks split rows and vectors unevenly.
af_machine one_core();
af_machine many_tiny_blocks(int64_t cores, int64_t vector_bytes);

struct KernelRun {
  std::vector<HostTensor> outputs;
  int64_t block_dim = 0;
  af_status status{};  ///< what the kernel reported (kernel_abi.h; zeroed before the run)
};

/// Options of run_kernel beyond the defaults.
struct RunOptions {
  int64_t force_key = -1;     ///< >= 0: replaces the tiling function's tiling_key
  int64_t output_offset = 0;  ///< each output starts this many elements past a 64-byte boundary
};

/// Runs kernel `k` of `module` on `inputs` (graph input order): the tiling
/// function, then every block in turn (args end with an empty workspace
/// slot and an af_status). Outputs are written to 64-byte
/// aligned buffers (plus options.output_offset elements) that start filled
/// with a garbage pattern, so unwritten elements show, then copied out.
KernelRun run_kernel(const jit::Module& module, const codegen::KernelSource& k,
                     const ascir::AscGraph& asc, const Graph& graph,
                     const std::vector<HostTensor>& inputs, const sym::Binding& binding,
                     const af_machine& machine, const RunOptions& options = {});

/// The tiling data the tiling function of kernel `k` fills for `binding`.
std::vector<int64_t> run_tiling(const jit::Module& module, const codegen::KernelSource& k,
                                const sym::Binding& binding, const af_machine& machine);

/// Elementwise comparison. Integers and bools exactly; floats within
/// atol + rtol * |want| (NaN matches NaN, infinities must match exactly).
::testing::AssertionResult tensors_close(const HostTensor& got, const HostTensor& want, double rtol,
                                         double atol);

/// One graph to test: compiled with others in one module, then run for
/// several bindings on several machines and compared with the reference.
struct GraphCase {
  std::string label;
  Graph graph;
  std::vector<sym::Binding> bindings;
  double rtol = 1e-6;
  double atol = 1e-6;
  /// Optional: replaces the random inputs (given the random ones).
  std::vector<HostTensor> (*make_inputs)(const Graph&, const sym::Binding&) = nullptr;
};

/// Softmax over the last axis of x: dtype[N, d] (`d` a size or a symbol).
std::string softmax_text(const std::string& dtype, const std::string& d = "D");

/// A row pass of every select and root the 16-lane vector code has
/// (kernel_prelude_lane_ops.h): abs, relu, max and min of two values, against a
/// constant on either side and against the row's mean, sqrt and reciprocal,
/// summed over x: dtype[N, d] and y; returns the sum s, z = u - s, and
/// max and min of x and y both ways round (stored: NaN on either side).
std::string selects_pass_text(const std::string& dtype, const std::string& d = "D");

/// Random inputs of selects_pass_text's graph with NaN, infinities and
/// signed zeros among x's and y's values (first and last lanes of rows).
std::vector<HostTensor> selects_inputs(const Graph& graph, const sym::Binding& binding);

/// Sets element `col` of rows `values[k].first` of `x` (rows of `d`
/// elements) to `values[k].second`; rows past x's end are left out.
void set_row_elements(HostTensor& x, int64_t d, int64_t col,
                      const std::vector<std::pair<int64_t, double>>& values);

/// Lines of a graph body normalizing `x` over `axis`: xn = (x - mean) /
/// sqrt(var + eps), with mean, xc, sq, var, eps, ve and inv on the way.
std::string normalized_text(const std::string& dtype, const std::string& x, int axis);

/// Schedules, generates one module for all cases, compiles it, runs every
/// case for every binding with one_core() and two split machines, and
/// checks the outputs against run_reference. Returns the module source.
/// `prefix` goes before the module's code (a #define for the prelude).
std::string check_cases(std::vector<GraphCase>& cases, uint64_t seed = 1,
                        const std::string& prefix = {});

/// A chain30-like Elementwise graph over x: dtype[N, d] with every select
/// and root (abs, max, min, relu, sqrt, reciprocal), a division, a constant
/// and a row-invariant operand w (a copy of f32 where d is static); returns
/// y and m.
std::string select_chain_text(const std::string& d, const std::string& dtype = "bf16");

/// Bindings {N: n, D: d}, one per pair.
std::vector<sym::Binding> nd_bindings(const std::vector<std::pair<int64_t, int64_t>>& nd);

/// Random inputs (seed 5) with every fifth element of the first set to
/// `specials` in turn (positions of either parity), and element 1 of the
/// second, when it has one, to 1.5.
std::vector<HostTensor> inputs_with_specials(const Graph& graph, const sym::Binding& binding,
                                             const std::vector<double>& specials);

/// A case for check_forms_agree: a graph, its bindings, the tolerance
/// against the reference.
struct FormCase {
  std::string label;
  Graph graph;
  std::vector<sym::Binding> bindings;
  double tol;
};
using InputsFn = std::function<std::vector<HostTensor>(const Graph&, const sym::Binding&)>;
using AgreeFn = std::function<::testing::AssertionResult(const HostTensor&, const HostTensor&)>;

/// A kernel form checked against the module without it: schedules every
/// case into one module, expects `form` (a marker of the form's code) in
/// each case's kernel, and compiles the module twice, after `with` (#defines
/// that keep the form) and after `without` (ones that turn it off). Each
/// case's kernel then runs for every binding on one_core() and three tiny
/// blocks, under every tiling key and output offsets 0 and 1, on `inputs`:
/// both builds within the case's tol of the reference, and `agree` on each
/// output.
void check_forms_agree(const std::vector<FormCase>& cases, const std::string& form,
                       const std::string& with, const std::string& without, const InputsFn& inputs,
                       const AgreeFn& agree);

}  // namespace autofuse::codegen_test

// C++ code generation for the CPU: one source module holding every kernel
// of a graph (one compiler run amortizes its start-up), each with its tiling
// data struct, tiling function and kernel function (ABI in kernel_abi.h).
// The source starts with the kernel prelude (vector math, f16/bf16
// conversion, floor-div helpers, the tiling cost model) and is otherwise
// self-contained, so its text alone keys the compile cache.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "autofuse/schedule/schedule.h"

namespace autofuse::codegen {

struct KernelSource {
  std::string name;                  ///< C identifier; prefix of the three ABI functions
  std::vector<std::string> symbols;  ///< order of the tiling function's `symbols`
  int num_inputs = 0;
  int num_outputs = 0;
  /// The names of the kernel's Gather nodes, in node order: af_status::which
  /// indexes it. Not empty: the kernel takes an af_status* (kernel_abi.h)
  /// and the caller checks it after each launch.
  std::vector<std::string> gathers;
};

struct ModuleSource {
  std::string code;  ///< the whole translation unit
  std::vector<KernelSource> kernels;
};

/// Generates the module. Kernel names come from each AscGraph's name (made
/// unique). Deterministic: the same kernels give the same text.
ModuleSource generate_cpu_module(const std::vector<schedule::ScheduledKernel>& kernels);

/// The prelude text embedded at the top of every module.
std::string_view kernel_prelude();

}  // namespace autofuse::codegen
